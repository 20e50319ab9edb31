package hubauth

import (
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"sync"
	"time"

	"github.com/nats-io/jwt/v2"
	"github.com/nats-io/nkeys"

	"github.com/plasmodium/pm/internal/config"
	"github.com/plasmodium/pm/internal/errs"
	"github.com/plasmodium/pm/internal/lockedfile"
)

// ProjectTag is the prefix of the tag a machine's user JWT carries: its
// project follows it.
const ProjectTag = "pm-project:"

// Dir is the authority in a hub's store (STORE/accounts).
const Dir = "accounts"

// ResolverDir is the hub's account resolver in its store, beside the
// authority (STORE/accounts-jwt): the account JWTs this node holds, as
// the cluster last gave them (the nats account resolver keeps the newest
// of each, pushed by whichever node signed it).
const ResolverDir = "accounts-jwt"

// Authority is an opened authority directory, with its node's resolver.
type Authority struct {
	Dir string
	// resolver is the node's ResolverDir. Every re-signing of a project's
	// account JWT keeps the revocations of the JWT the resolver holds, so
	// a revocation made on another node's copy of the authority, which
	// reached this node through the cluster, is never lifted by this
	// node's next re-signing (Revoke, Reconcile). OpenStore always sets
	// it: there is no way to open an authority without it.
	resolver    string
	op          nkeys.KeyPair
	OperatorJWT string
	sys         nkeys.KeyPair
	SysJWT      string
	mu          sync.Mutex            // guards seen
	seen        map[string]reconciled // by project: what Reconcile last found
}

// Account is one project's account as the authority holds it.
type Account struct {
	Project string
	Public  string // the account's public key (A...)
	JWT     string
}

// Machine is one credential issued for a project.
type Machine struct {
	Name     string    `json:"name"`
	User     string    `json:"user"` // the user's public key (U...)
	Issued   time.Time `json:"issued"`
	Revoked  time.Time `json:"revoked,omitzero"`
	Filename string    `json:"file,omitempty"` // where pm hub creds wrote it, for a person reading the list
}

// Path is the authority's directory in the hub store store (STORE/accounts).
func Path(store string) string { return filepath.Join(store, Dir) }

// OpenStore opens the whole authority of the hub store store, with the
// node's resolver beside it (STORE/accounts-jwt): the one way to open one
// for use, so every re-signing keeps the revocations the cluster gave this
// node. A store with none of an authority, or half of one (Status None,
// Half), is refused and left as it is: making an operator or a system
// account there would give this store an authority its hub's peers do not
// trust (MakeStore is the hub's single or first node's, and only its).
func OpenStore(store string) (*Authority, error) {
	return open(store, false)
}

// MakeStore opens store's authority as OpenStore does, making it the first
// time (the operator and the system account) and completing one a crash
// left half-made with the keys it has. Only a hub's single node, or the
// first node of a cluster, calls it: any other node's copy must come whole
// from the first.
func MakeStore(store string) (*Authority, error) {
	return open(store, true)
}

func open(store string, makeIt bool) (*Authority, error) {
	dir := Path(store)
	if !makeIt {
		if err := refuseUnmade(store); err != nil {
			return nil, err
		}
	} else if err := os.MkdirAll(dir, 0o700); err != nil {
		return nil, errs.Failf("name a directory this user can write with --store", "hub accounts %s: %v", dir, err)
	}
	a := &Authority{Dir: dir, resolver: filepath.Join(store, ResolverDir)}
	err := lockedfile.With(a.lockPath(), func() error {
		if !makeIt { // once more under the lock: make only reads a whole one
			if err := refuseUnmade(store); err != nil {
				return err
			}
		}
		return a.make()
	})
	if err != nil {
		return nil, err
	}
	return a, nil
}

// refuseUnmade refuses a store whose authority is not whole.
func refuseUnmade(store string) error {
	dir := Path(store)
	switch Status(store) {
	case Whole:
		return nil
	case Half:
		return errs.Statef("remove "+dir+" and copy it whole from the hub's first node; on a single or first node, pm hub --accounts --store "+store+" completes it",
			"hub accounts %s are half-made (a copy cut short, or a crash while they were made)", dir)
	}
	return errs.NotFoundf("start the hub with pm hub --accounts --store "+store+" first (a cluster's later node: copy STORE/accounts from its first node), or name its store with --store",
		"no hub with accounts in %s", store)
}

// Made says how far an authority directory was made.
type Made int

const (
	None  Made = iota // nothing of it: MakeStore makes a new operator
	Half              // some of its keys, not all (a crash, a copy cut short)
	Whole             // the operator and the system account, agreeing
)

// Status says how far store's authority was made, derived from its files:
// whole when the operator's and the system account's seeds and JWTs are
// there and agree (the operator's JWT, written last, names the system
// account; the system account's is the operator's), none when none of
// them is, half otherwise.
func Status(store string) Made {
	dir := Path(store)
	any := false
	for _, f := range []string{"operator.nk", "operator.jwt", "sys.nk", "sys.jwt"} {
		if _, err := os.Lstat(filepath.Join(dir, f)); err == nil {
			any = true
		}
	}
	if !any {
		return None
	}
	a := &Authority{Dir: dir}
	var err error
	if a.op, err = readSeed(filepath.Join(dir, "operator.nk")); err != nil {
		return Half
	}
	if a.sys, err = readSeed(filepath.Join(dir, "sys.nk")); err != nil {
		return Half
	}
	if _, ok := a.validSys(); !ok {
		return Half
	}
	if _, ok := a.validOperator(); !ok {
		return Half
	}
	return Whole
}

func (a *Authority) lockPath() string { return filepath.Join(a.Dir, "authority") }

// make reads the operator and the system account, making what is missing
// or does not agree, in an order a crash can stop anywhere: the seeds
// (an existing one is never replaced), the system account's JWT, and the
// operator's JWT naming it last, which makes the authority whole.
func (a *Authority) make() error {
	var err error
	if a.op, err = a.seed("operator", nkeys.CreateOperator); err != nil {
		return err
	}
	if a.sys, err = a.seed("sys", nkeys.CreateAccount); err != nil {
		return err
	}
	var ok bool
	if a.SysJWT, ok = a.validSys(); !ok {
		pub, _ := a.sys.PublicKey()
		ac := jwt.NewAccountClaims(pub)
		ac.Name = "SYS"
		if a.SysJWT, err = ac.Encode(a.op); err != nil {
			return err
		}
		if err := write(filepath.Join(a.Dir, "sys.jwt"), []byte(a.SysJWT)); err != nil {
			return err
		}
	}
	if a.OperatorJWT, ok = a.validOperator(); !ok {
		opPub, _ := a.op.PublicKey()
		oc := jwt.NewOperatorClaims(opPub)
		oc.Name = "pm"
		oc.SystemAccount = a.SystemAccount() // the server requires the two to agree
		if a.OperatorJWT, err = oc.Encode(a.op); err != nil {
			return err
		}
		return write(filepath.Join(a.Dir, "operator.jwt"), []byte(a.OperatorJWT))
	}
	return nil
}

// seed reads NAME.nk, or makes a key with create and writes it.
func (a *Authority) seed(name string, create func() (nkeys.KeyPair, error)) (nkeys.KeyPair, error) {
	path := filepath.Join(a.Dir, name+".nk")
	kp, err := readSeed(path)
	if !errors.Is(err, os.ErrNotExist) {
		return kp, err
	}
	if kp, err = create(); err != nil {
		return nil, err
	}
	seed, _ := kp.Seed()
	return kp, write(path, seed)
}

// validSys is sys.jwt when it is the system account's, signed by the
// operator.
func (a *Authority) validSys() (string, bool) {
	tok, ac := readJWT(filepath.Join(a.Dir, "sys.jwt"), jwt.DecodeAccountClaims)
	opPub, _ := a.op.PublicKey()
	return tok, ac != nil && ac.Subject == a.SystemAccount() && ac.Issuer == opPub
}

// validOperator is operator.jwt when it is the operator's own, naming the
// system account.
func (a *Authority) validOperator() (string, bool) {
	tok, oc := readJWT(filepath.Join(a.Dir, "operator.jwt"), jwt.DecodeOperatorClaims)
	opPub, _ := a.op.PublicKey()
	return tok, oc != nil && oc.Subject == opPub && oc.Issuer == opPub && oc.SystemAccount == a.SystemAccount()
}

// readJWT reads a JWT file and decodes it; nil when it is missing or
// not one.
func readJWT[C any](path string, decode func(string) (*C, error)) (string, *C) {
	b, err := os.ReadFile(path)
	if err != nil {
		return "", nil
	}
	tok := strings.TrimSpace(string(b))
	c, err := decode(tok)
	if err != nil {
		return "", nil
	}
	return tok, c
}

// Resolver is the node's resolver directory (STORE/accounts-jwt), where a
// JWT another node signed lands.
func (a *Authority) Resolver() string { return a.resolver }

// SystemAccount is the system account's public key.
func (a *Authority) SystemAccount() string {
	pub, _ := a.sys.PublicKey()
	return pub
}

// Operator decodes the operator's JWT, which the hub trusts.
func (a *Authority) Operator() (*jwt.OperatorClaims, error) {
	return jwt.DecodeOperatorClaims(a.OperatorJWT)
}

// Accounts are the projects' accounts, by project name.
func (a *Authority) Accounts() ([]Account, error) {
	ents, err := os.ReadDir(filepath.Join(a.Dir, "projects"))
	if errors.Is(err, os.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	var out []Account
	for _, e := range ents {
		if !e.IsDir() || !config.ValidProject(e.Name()) {
			continue
		}
		acc, _, err := a.account(e.Name())
		if errors.Is(err, os.ErrNotExist) {
			continue // being made by pm hub creds: its JWT is written last
		}
		if err != nil {
			return nil, err
		}
		out = append(out, acc)
	}
	return out, nil
}

func (a *Authority) projectDir(p string) string { return filepath.Join(a.Dir, "projects", p) }

// account reads project p's account and key.
func (a *Authority) account(p string) (Account, nkeys.KeyPair, error) {
	kp, err := readSeed(filepath.Join(a.projectDir(p), "account.nk"))
	if err != nil {
		return Account{}, nil, err
	}
	b, err := os.ReadFile(filepath.Join(a.projectDir(p), "account.jwt"))
	if err != nil {
		return Account{}, nil, err
	}
	pub, _ := kp.PublicKey()
	return Account{Project: p, Public: pub, JWT: strings.TrimSpace(string(b))}, kp, nil
}

// makeAccount makes project p's account: JetStream without limits of its
// own (the hub's disk is the limit), signed by the operator.
func (a *Authority) makeAccount(p string) (Account, nkeys.KeyPair, error) {
	kp, err := nkeys.CreateAccount()
	if err != nil {
		return Account{}, nil, err
	}
	pub, _ := kp.PublicKey()
	ac := jwt.NewAccountClaims(pub)
	ac.Name = p
	ac.Limits.JetStreamLimits = jwt.JetStreamLimits{MemoryStorage: jwt.NoLimit, DiskStorage: jwt.NoLimit,
		Streams: jwt.NoLimit, Consumer: jwt.NoLimit, MaxAckPending: jwt.NoLimit}
	tok, err := ac.Encode(a.op)
	if err != nil {
		return Account{}, nil, err
	}
	if err := os.MkdirAll(a.projectDir(p), 0o700); err != nil {
		return Account{}, nil, err
	}
	seed, _ := kp.Seed()
	if err := write(filepath.Join(a.projectDir(p), "account.nk"), seed); err != nil {
		return Account{}, nil, err
	}
	return Account{Project: p, Public: pub, JWT: tok}, kp, write(filepath.Join(a.projectDir(p), "account.jwt"), []byte(tok))
}

// Issue makes a credential for machine on project p (its account made
// the first time) and returns the credentials file's content (IssueTo
// with a deliver that keeps it).
func (a *Authority) Issue(p, machine, file string, now time.Time) ([]byte, error) {
	var creds []byte
	err := a.IssueTo(p, machine, file, now, func(b []byte) error {
		creds = b
		return nil
	})
	return creds, err
}

// IssueTo makes a credential for machine on project p (its account made
// the first time) and hands the credentials file's content to deliver
// (which writes it where the person asked). The machine is recorded only
// once deliver has succeeded: a file that could not be written leaves
// nothing issued, and the name free. A machine name that holds a
// credential not revoked is refused: revoke it first, so a name always
// means one key.
func (a *Authority) IssueTo(p, machine, file string, now time.Time, deliver func(creds []byte) error) error {
	if err := checkNames(p, machine); err != nil {
		return err
	}
	return lockedfile.With(a.lockPath(), func() error {
		_, akp, err := a.account(p)
		if errors.Is(err, os.ErrNotExist) {
			_, akp, err = a.makeAccount(p)
		}
		if err != nil {
			return err
		}
		ms, err := a.machines(p)
		if err != nil {
			return err
		}
		for _, m := range ms {
			if m.Name == machine && m.Revoked.IsZero() {
				return errs.Statef("pm hub creds --revoke --project "+p+" --name "+machine+" first, or give another --name",
					"machine %s already holds a credential for project %s", machine, p)
			}
		}
		ukp, err := nkeys.CreateUser()
		if err != nil {
			return err
		}
		upub, _ := ukp.PublicKey()
		tok, err := userJWT(upub, machine, p, akp)
		if err != nil {
			return err
		}
		seed, _ := ukp.Seed()
		creds, err := jwt.FormatUserConfig(tok, seed)
		if err != nil {
			return err
		}
		if err := deliver(creds); err != nil {
			return err
		}
		ms = append(ms, Machine{Name: machine, User: upub, Issued: now.UTC(), Filename: file})
		return a.saveMachines(p, ms)
	})
}

// userJWT is a user of account akp, named machine, tagged with project p.
func userJWT(upub, machine, p string, akp nkeys.KeyPair) (string, error) {
	uc := jwt.NewUserClaims(upub)
	uc.Name = machine
	uc.Tags.Add(ProjectTag + p)
	return uc.Encode(akp)
}

// Revoke cuts machine off project p: its key goes into the account's
// revocations (the JWT re-signed), and the machine is marked revoked.
// A hub that reads the new JWT closes the machine's connections.
func (a *Authority) Revoke(p, machine string, now time.Time) error {
	if err := checkNames(p, machine); err != nil {
		return err
	}
	return lockedfile.With(a.lockPath(), func() error {
		acc, _, err := a.account(p)
		if errors.Is(err, os.ErrNotExist) {
			return errs.NotFoundf("pm hub creds --list shows the projects and machines", "the hub has no accounts for project %s", p)
		}
		if err != nil {
			return err
		}
		ms, err := a.machines(p)
		if err != nil {
			return err
		}
		n := 0
		ac, err := jwt.DecodeAccountClaims(acc.JWT)
		if err != nil {
			return err
		}
		for i, m := range ms {
			if m.Name == machine && m.Revoked.IsZero() {
				ac.RevokeAt(m.User, now)
				ms[i].Revoked = now.UTC()
				n++
			}
		}
		if n == 0 {
			return errs.NotFoundf("pm hub creds --list --project "+p+" shows its machines", "project %s has no machine %s holding a credential", p, machine)
		}
		a.keepHeld(ac, ms)
		return a.resign(p, ac, ms)
	})
}

// resign signs project p's account claims ac and writes them with its
// machines ms (under the authority's lock).
func (a *Authority) resign(p string, ac *jwt.AccountClaims, ms []Machine) error {
	tok, err := ac.Encode(a.op)
	if err != nil {
		return err
	}
	return a.save(p, tok, ms)
}

// save writes project p's account JWT tok and its machines ms.
func (a *Authority) save(p, tok string, ms []Machine) error {
	if err := write(filepath.Join(a.projectDir(p), "account.jwt"), []byte(tok)); err != nil {
		return err
	}
	return a.saveMachines(p, ms)
}

// heldJWT is the text of the account JWT the node's resolver holds for
// account pub ("" when it holds none or it cannot be read: being written,
// the next change is read again).
func (a *Authority) heldJWT(pub string) string {
	b, err := os.ReadFile(filepath.Join(a.resolver, pub+".jwt"))
	if err != nil {
		return ""
	}
	return strings.TrimSpace(string(b))
}

// held decodes tok, the JWT the resolver holds for account pub, as the
// cluster gave it; nil when there is none, it cannot be read, or it is
// not one of this operator's.
func (a *Authority) held(pub, tok string) *jwt.AccountClaims {
	if tok == "" {
		return nil
	}
	ac, err := jwt.DecodeAccountClaims(tok)
	if err != nil || ac.Subject != pub {
		return nil
	}
	if op, _ := a.op.PublicKey(); ac.Issuer != op {
		return nil
	}
	return ac
}

// keepHeld adds to ac the revocations of the JWT the resolver holds for
// its account (made on another node), each at the later of the two
// times, and marks the machines of ms they revoke: it reports whether ac
// changed. A revocation is never lifted: the union only grows.
func (a *Authority) keepHeld(ac *jwt.AccountClaims, ms []Machine) bool {
	return a.keepFrom(ac, ms, a.heldJWT(ac.Subject))
}

// keepFrom is keepHeld with the resolver's JWT as read (tok).
func (a *Authority) keepFrom(ac *jwt.AccountClaims, ms []Machine, tok string) bool {
	h := a.held(ac.Subject, tok)
	if h == nil {
		return false
	}
	changed := false
	for user, at := range h.Revocations {
		if mine, ok := ac.Revocations[user]; ok && mine >= at {
			continue
		}
		if ac.Revocations == nil {
			ac.Revocations = jwt.RevocationList{}
		}
		ac.Revocations[user] = at
		changed = true
	}
	for i, m := range ms {
		if at, ok := ac.Revocations[m.User]; ok && m.Revoked.IsZero() {
			ms[i].Revoked = time.Unix(at, 0).UTC()
			changed = true
		}
	}
	return changed
}

// reconciled is what Reconcile last found for a project: its account's
// public key, its JWT and the resolver's, as texts. A project whose two
// JWTs are as they were has nothing new to take in.
type reconciled struct{ pub, jwt, held string }

// Reconcile takes into this authority the revocations the node's
// resolver holds that it lacks (made on another node's copy, pushed here
// through the cluster): each such project's account JWT is re-signed
// with the union, and its machines marked revoked. It returns every
// project's account as it then stands and the projects re-signed. The
// hub calls it at start and on every change of the authority or the
// resolver, so this node's next re-signing keeps them.
//
// It is one pass over the projects, and a project whose account JWT and
// resolver JWT are the texts this Authority last reconciled is taken as
// it was (two small reads): only a changed one is decoded, verified and
// its machines read. So a push, which changes one project's JWT (and, as
// this node stores it, the resolver's), costs a full look at that one.
func (a *Authority) Reconcile() (accs []Account, changed []string, err error) {
	err = lockedfile.With(a.lockPath(), func() error {
		a.mu.Lock()
		defer a.mu.Unlock()
		if a.seen == nil {
			a.seen = map[string]reconciled{}
		}
		ents, err := os.ReadDir(filepath.Join(a.Dir, "projects"))
		if errors.Is(err, os.ErrNotExist) {
			return nil
		}
		if err != nil {
			return err
		}
		for _, e := range ents {
			p := e.Name()
			if !e.IsDir() || !config.ValidProject(p) {
				continue
			}
			b, err := os.ReadFile(filepath.Join(a.projectDir(p), "account.jwt"))
			if errors.Is(err, os.ErrNotExist) {
				continue // being made by pm hub creds: its JWT is written last
			}
			if err != nil {
				return err
			}
			tok := strings.TrimSpace(string(b))
			if r, ok := a.seen[p]; ok && r.jwt == tok {
				if held := a.heldJWT(r.pub); held == r.held {
					accs = append(accs, Account{Project: p, Public: r.pub, JWT: tok})
					continue
				}
			}
			acc, resigned, err := a.reconcile(p, tok)
			if errors.Is(err, os.ErrNotExist) {
				continue
			}
			if err != nil {
				return err
			}
			accs = append(accs, acc)
			if resigned {
				changed = append(changed, p)
			}
		}
		return nil
	})
	return accs, changed, err
}

// reconcile is Reconcile's look at project p (under the lock), whose
// account JWT Reconcile read (tok): its account as it then stands, and
// whether it was re-signed.
func (a *Authority) reconcile(p, tok string) (Account, bool, error) {
	kp, err := readSeed(filepath.Join(a.projectDir(p), "account.nk"))
	if err != nil {
		return Account{}, false, err
	}
	pub, _ := kp.PublicKey()
	acc := Account{Project: p, Public: pub, JWT: tok}
	held := a.heldJWT(acc.Public)
	ac, err := jwt.DecodeAccountClaims(acc.JWT)
	if err != nil {
		return Account{}, false, err
	}
	ms, err := a.machines(p)
	if err != nil {
		return Account{}, false, err
	}
	resigned := a.keepFrom(ac, ms, held)
	if resigned {
		if acc.JWT, err = ac.Encode(a.op); err != nil {
			return Account{}, false, err
		}
		if err := a.save(p, acc.JWT, ms); err != nil {
			return Account{}, false, err
		}
	}
	a.seen[p] = reconciled{pub: acc.Public, jwt: acc.JWT, held: held}
	return acc, resigned, nil
}

// Machines are the machines issued a credential for project p, oldest
// first (revoked ones too, marked).
func (a *Authority) Machines(p string) ([]Machine, error) {
	var ms []Machine
	err := lockedfile.WithShared(a.lockPath(), func() error {
		var err error
		ms, err = a.machines(p)
		return err
	})
	return ms, err
}

func (a *Authority) machines(p string) ([]Machine, error) {
	b, err := os.ReadFile(filepath.Join(a.projectDir(p), "machines.json"))
	if errors.Is(err, os.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	var ms []Machine
	if err := json.Unmarshal(b, &ms); err != nil {
		return nil, fmt.Errorf("hub accounts: %s's machines: %w", p, err)
	}
	sort.SliceStable(ms, func(i, j int) bool { return ms[i].Issued.Before(ms[j].Issued) })
	return ms, nil
}

func (a *Authority) saveMachines(p string, ms []Machine) error {
	b, err := json.MarshalIndent(ms, "", "  ")
	if err != nil {
		return err
	}
	return write(filepath.Join(a.projectDir(p), "machines.json"), append(b, '\n'))
}

// UserFor makes a user of project p's account (or of the system account
// when p is ""), for the hub's own in-process connections: its JWT and
// key. It is never written anywhere.
func (a *Authority) UserFor(p, name string) (string, nkeys.KeyPair, error) {
	akp := a.sys
	if p != "" {
		var err error
		if _, akp, err = a.account(p); err != nil {
			return "", nil, err
		}
	}
	ukp, err := nkeys.CreateUser()
	if err != nil {
		return "", nil, err
	}
	upub, _ := ukp.PublicKey()
	uc := jwt.NewUserClaims(upub)
	uc.Name = name
	tok, err := uc.Encode(akp)
	return tok, ukp, err
}

// ProjectIn reads the project of a credentials file's content: its user
// JWT's pm-project tag, "" when it has none (a credentials file of a NATS
// cluster pm hub did not issue). The caller reads the file once and keeps
// the bytes it checked.
func ProjectIn(creds []byte) (string, error) {
	tok, err := jwt.ParseDecoratedJWT(creds)
	if err != nil {
		return "", err
	}
	uc, err := jwt.DecodeUserClaims(tok)
	if err != nil {
		return "", err
	}
	for _, t := range uc.Tags {
		if p, ok := strings.CutPrefix(t, ProjectTag); ok {
			return p, nil
		}
	}
	return "", nil
}

// CheckNames refuses a project or machine name a hub cannot hold.
func CheckNames(p, machine string) error { return checkNames(p, machine) }

func checkNames(p, machine string) error {
	if !config.ValidProject(p) {
		return errs.Usagef("give --project the project's name on the hub (lower-case letters, digits and dashes)", "--project %q is not a project name", p)
	}
	if !config.ValidProject(machine) {
		return errs.Usagef("give --name the machine's name in lower-case letters, digits and dashes, e.g. --name gpu-1", "--name %q is not a machine name", machine)
	}
	return nil
}

func readSeed(path string) (nkeys.KeyPair, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	kp, err := nkeys.FromSeed([]byte(strings.TrimSpace(string(b))))
	if err != nil {
		return nil, fmt.Errorf("hub accounts: %s: %w", path, err)
	}
	return kp, nil
}

// write writes a file of the authority whole, readable by this user only.
func write(path string, b []byte) error {
	return lockedfile.WriteAtomicMode(path, b, 0o600)
}

// Account is project p's account (os.ErrNotExist when it has none).
func (a *Authority) Account(p string) (Account, error) {
	var acc Account
	err := lockedfile.WithShared(a.lockPath(), func() error {
		var err error
		acc, _, err = a.account(p)
		return err
	})
	return acc, err
}

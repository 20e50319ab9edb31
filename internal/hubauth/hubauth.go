package hubauth

import (
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strings"
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

// ResolverDir is the hub's account resolver in its store, beside the
// authority (STORE/accounts-jwt): the account JWTs this node holds, as
// the cluster last gave them (the nats account resolver keeps the newest
// of each, pushed by whichever node signed it).
const ResolverDir = "accounts-jwt"

// Authority is an opened authority directory.
type Authority struct {
	Dir string
	// Resolver, when set, is the node's ResolverDir. Every re-signing of
	// a project's account JWT then keeps the revocations of the JWT the
	// resolver holds, so a revocation made on another node's copy of the
	// authority, which reached this node through the cluster, is never
	// lifted by this node's next re-signing (Revoke, Reconcile).
	Resolver    string
	op          nkeys.KeyPair
	OperatorJWT string
	sys         nkeys.KeyPair
	SysJWT      string
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

// Open opens the authority in dir, making its operator and system account
// the first time (dir made 0700).
func Open(dir string) (*Authority, error) {
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return nil, errs.Failf("name a directory this user can write with --store", "hub accounts %s: %v", dir, err)
	}
	a := &Authority{Dir: dir}
	err := lockedfile.With(a.lockPath(), func() error {
		var err error
		if a.op, a.OperatorJWT, err = a.loadOrMake("operator", nkeys.CreateOperator, a.operatorClaims); err != nil {
			return err
		}
		a.sys, a.SysJWT, err = a.loadOrMake("sys", nkeys.CreateAccount, a.sysClaims)
		return err
	})
	if err != nil {
		return nil, err
	}
	return a, nil
}

// Exists reports whether dir holds an authority (its operator's key):
// Open would read it rather than make a new one.
func Exists(dir string) bool {
	_, err := os.Stat(filepath.Join(dir, "operator.nk"))
	return err == nil
}

func (a *Authority) lockPath() string { return filepath.Join(a.Dir, "authority") }

// loadOrMake reads NAME.nk and NAME.jwt, or makes a key with create and a
// JWT with claims (signed by the operator, or by itself for the operator).
func (a *Authority) loadOrMake(name string, create func() (nkeys.KeyPair, error), claims func(pub string) (string, error)) (nkeys.KeyPair, string, error) {
	seedPath, jwtPath := filepath.Join(a.Dir, name+".nk"), filepath.Join(a.Dir, name+".jwt")
	kp, err := readSeed(seedPath)
	if err == nil {
		b, err := os.ReadFile(jwtPath)
		if err != nil {
			return nil, "", fmt.Errorf("hub accounts: %w", err)
		}
		return kp, strings.TrimSpace(string(b)), nil
	}
	if !errors.Is(err, os.ErrNotExist) {
		return nil, "", err
	}
	if kp, err = create(); err != nil {
		return nil, "", err
	}
	if name == "operator" {
		a.op = kp
	}
	pub, _ := kp.PublicKey()
	tok, err := claims(pub)
	if err != nil {
		return nil, "", err
	}
	seed, _ := kp.Seed()
	if err := write(seedPath, seed); err != nil {
		return nil, "", err
	}
	return kp, tok, write(jwtPath, []byte(tok))
}

func (a *Authority) operatorClaims(pub string) (string, error) {
	oc := jwt.NewOperatorClaims(pub)
	oc.Name = "pm"
	// The system account is made next; its key is known only then, so the
	// operator names it once both exist (sysClaims re-signs it).
	return oc.Encode(a.op)
}

// sysClaims signs the system account and names it in the operator's JWT
// (the server requires the two to agree).
func (a *Authority) sysClaims(pub string) (string, error) {
	ac := jwt.NewAccountClaims(pub)
	ac.Name = "SYS"
	tok, err := ac.Encode(a.op)
	if err != nil {
		return "", err
	}
	opPub, _ := a.op.PublicKey()
	oc := jwt.NewOperatorClaims(opPub)
	oc.Name = "pm"
	oc.SystemAccount = pub
	if a.OperatorJWT, err = oc.Encode(a.op); err != nil {
		return "", err
	}
	return tok, write(filepath.Join(a.Dir, "operator.jwt"), []byte(a.OperatorJWT))
}

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
	if err := write(filepath.Join(a.projectDir(p), "account.jwt"), []byte(tok)); err != nil {
		return err
	}
	return a.saveMachines(p, ms)
}

// held is the account JWT the node's resolver holds for account pub, as
// the cluster gave it; nil when there is none, it cannot be read (being
// written: the next change is read again), or it is not one of this
// operator's.
func (a *Authority) held(pub string) *jwt.AccountClaims {
	if a.Resolver == "" {
		return nil
	}
	b, err := os.ReadFile(filepath.Join(a.Resolver, pub+".jwt"))
	if err != nil {
		return nil
	}
	ac, err := jwt.DecodeAccountClaims(strings.TrimSpace(string(b)))
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
	h := a.held(ac.Subject)
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

// Reconcile takes into this authority the revocations the node's
// resolver holds that it lacks (made on another node's copy, pushed here
// through the cluster): each such project's account JWT is re-signed
// with the union, and its machines marked revoked. It returns the
// projects re-signed. The hub calls it at start and on every change of
// the resolver, so this node's next re-signing keeps them.
func (a *Authority) Reconcile() ([]string, error) {
	var changed []string
	err := lockedfile.With(a.lockPath(), func() error {
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
			acc, _, err := a.account(p)
			if errors.Is(err, os.ErrNotExist) {
				continue
			}
			if err != nil {
				return err
			}
			ac, err := jwt.DecodeAccountClaims(acc.JWT)
			if err != nil {
				return err
			}
			ms, err := a.machines(p)
			if err != nil {
				return err
			}
			if !a.keepHeld(ac, ms) {
				continue
			}
			if err := a.resign(p, ac, ms); err != nil {
				return err
			}
			changed = append(changed, p)
		}
		return nil
	})
	return changed, err
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

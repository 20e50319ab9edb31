package hubauth_test

import (
	"bytes"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/nats-io/jwt/v2"
	"github.com/nats-io/nkeys"

	"github.com/plasmodium/pm/internal/errs"
	"github.com/plasmodium/pm/internal/hubauth"
)

// open opens store's authority (STORE/accounts), making it the first
// time, as a hub's single node does.
func open(t *testing.T, store string) *hubauth.Authority {
	t.Helper()
	a, err := hubauth.MakeStore(store)
	if err != nil {
		t.Fatal(err)
	}
	return a
}

func userOf(t *testing.T, creds []byte) *jwt.UserClaims {
	t.Helper()
	tok, err := jwt.ParseDecoratedJWT(creds)
	if err != nil {
		t.Fatal(err)
	}
	uc, err := jwt.DecodeUserClaims(tok)
	if err != nil {
		t.Fatal(err)
	}
	return uc
}

// The authority is the user's alone (0700, every file 0600), and opening
// it again gives the same operator and system account.
func TestOpenKeepsKeys(t *testing.T) {
	store := t.TempDir()
	dir := hubauth.Path(store)
	a := open(t, store)
	if _, err := a.Issue("web", "m1", "", time.Now()); err != nil {
		t.Fatal(err)
	}
	b := open(t, store)
	if a.OperatorJWT != b.OperatorJWT || a.SystemAccount() != b.SystemAccount() {
		t.Fatal("reopened with other keys")
	}
	oc, err := b.Operator()
	if err != nil || oc.SystemAccount != b.SystemAccount() {
		t.Fatalf("operator names system account %q, want %q (%v)", oc.SystemAccount, b.SystemAccount(), err)
	}
	err = filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		st, err := os.Stat(p)
		if err != nil {
			return err
		}
		want := fs.FileMode(0o600)
		if d.IsDir() {
			want = 0o700
		}
		if st.Mode().Perm() != want {
			t.Errorf("%s: mode %v, want %v", p, st.Mode().Perm(), want)
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
}

// A credential is one machine's user of its project's account, tagged
// with the project, holding that user's seed and no other key.
func TestIssue(t *testing.T) {
	dir := t.TempDir()
	a := open(t, dir)
	creds, err := a.Issue("web", "gpu-1", "/x/web-gpu-1.creds", time.Now())
	if err != nil {
		t.Fatal(err)
	}
	acc, err := a.Account("web")
	if err != nil {
		t.Fatal(err)
	}
	uc := userOf(t, creds)
	if uc.Issuer != acc.Public || uc.Name != "gpu-1" {
		t.Fatalf("user issued by %s named %q, want %s gpu-1", uc.Issuer, uc.Name, acc.Public)
	}
	// No seed of the authority's is in it: not the account's, the
	// operator's or the system account's.
	for _, k := range []string{"operator.nk", "sys.nk", "projects/web/account.nk"} {
		seed, err := os.ReadFile(filepath.Join(a.Dir, k))
		if err != nil {
			t.Fatal(err)
		}
		if bytes.Contains(creds, bytes.TrimSpace(seed)) {
			t.Fatalf("the credential holds %s", k)
		}
	}
	if p, err := hubauth.ProjectIn(creds); err != nil || p != "web" {
		t.Fatalf("ProjectIn = %q, %v", p, err)
	}
	ms, err := a.Machines("web")
	if err != nil || len(ms) != 1 || ms[0].User != uc.Subject || ms[0].Filename != "/x/web-gpu-1.creds" {
		t.Fatalf("machines %+v, %v", ms, err)
	}
}

// Refused, and nothing changed: a bad name, a machine name that holds a
// credential, a revocation of a machine or project that has none.
func TestRefusals(t *testing.T) {
	a := open(t, t.TempDir())
	if _, err := a.Issue("web", "m1", "", time.Now()); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		name string
		err  error
		code errs.Code
		msg  string
	}{
		{"bad project", issueErr(a, "Web", "m2"), errs.Usage, "not a project name"},
		{"bad machine", issueErr(a, "web", "m_2"), errs.Usage, "not a machine name"},
		{"held name", issueErr(a, "web", "m1"), errs.State, "already holds"},
		{"unknown machine", a.Revoke("web", "m9", time.Now()), errs.NotFound, "no machine m9"},
		{"unknown project", a.Revoke("api", "m1", time.Now()), errs.NotFound, "no accounts for project api"},
	} {
		if !errs.Is(tc.err, tc.code) || !strings.Contains(tc.err.Error(), tc.msg) || errs.TryOf(tc.err) == "" {
			t.Errorf("%s: %v (code %v, Try %q)", tc.name, tc.err, errs.CodeOf(tc.err), errs.TryOf(tc.err))
		}
	}
	if ms, _ := a.Machines("web"); len(ms) != 1 {
		t.Fatalf("machines after refusals: %+v", ms)
	}
}

func issueErr(a *hubauth.Authority, p, m string) error {
	_, err := a.Issue(p, m, "", time.Now())
	return err
}

// Revoking a machine puts its key, and only its, in the account's
// revocations; its name may then be given a new credential.
func TestRevoke(t *testing.T) {
	a := open(t, t.TempDir())
	c1, _ := a.Issue("web", "m1", "", time.Now())
	c2, _ := a.Issue("web", "m2", "", time.Now())
	if err := a.Revoke("web", "m1", time.Now()); err != nil {
		t.Fatal(err)
	}
	acc, _ := a.Account("web")
	ac, err := jwt.DecodeAccountClaims(acc.JWT)
	if err != nil {
		t.Fatal(err)
	}
	u1, u2 := userOf(t, c1), userOf(t, c2)
	if !ac.IsClaimRevoked(u1) || ac.IsClaimRevoked(u2) || len(ac.Revocations) != 1 {
		t.Fatalf("revocations %v: m1 %v, m2 %v", ac.Revocations, ac.IsClaimRevoked(u1), ac.IsClaimRevoked(u2))
	}
	if !ac.Limits.JetStreamLimits.IsUnlimited() && ac.Limits.JetStreamLimits.DiskStorage == 0 {
		t.Fatal("re-signed account lost JetStream")
	}
	c3, err := a.Issue("web", "m1", "", time.Now())
	if err != nil {
		t.Fatal(err)
	}
	if userOf(t, c3).Subject == u1.Subject {
		t.Fatal("a new credential with the revoked key")
	}
}

// Machines issued at once for a new project all land, in one account.
func TestIssueConcurrent(t *testing.T) {
	dir := t.TempDir()
	open(t, dir)
	const n = 8
	creds := make([][]byte, n)
	var wg sync.WaitGroup
	for i := range n {
		wg.Add(1)
		go func() {
			defer wg.Done()
			a, err := hubauth.OpenStore(dir) // each its own, as separate pm hub creds
			if err != nil {
				t.Error(err)
				return
			}
			if creds[i], err = a.Issue("web", "m"+string(rune('a'+i)), "", time.Now()); err != nil {
				t.Error(err)
			}
		}()
	}
	wg.Wait()
	a := open(t, dir)
	acc, err := a.Account("web")
	if err != nil {
		t.Fatal(err)
	}
	for i, c := range creds {
		if c != nil && userOf(t, c).Issuer != acc.Public {
			t.Errorf("machine %d signed by another account", i)
		}
	}
	if ms, _ := a.Machines("web"); len(ms) != n {
		t.Fatalf("%d machines recorded, want %d", len(ms), n)
	}
}

// A credential whose file could not be written is not issued: the machine
// is not recorded and its name stays free (review: a failed write after
// Issue left the machine recorded though the person got no file).
func TestIssueToRecordsOnlyADeliveredCredential(t *testing.T) {
	a := open(t, t.TempDir())
	full := errs.Failf("free some room", "disk full")
	if err := a.IssueTo("web", "m1", "/x/m1.creds", time.Now(), func([]byte) error { return full }); err != full {
		t.Fatalf("a failed delivery: %v", err)
	}
	ms, err := a.Machines("web")
	if err != nil || len(ms) != 0 {
		t.Fatalf("recorded after a failed delivery: %+v (%v)", ms, err)
	}
	var got []byte
	if err := a.IssueTo("web", "m1", "/x/m1.creds", time.Now(), func(b []byte) error { got = b; return nil }); err != nil {
		t.Fatalf("the name after a failed delivery: %v", err)
	}
	if ms, _ := a.Machines("web"); len(ms) != 1 || ms[0].User != userOf(t, got).Subject {
		t.Fatalf("machines %+v, want the delivered credential's user", ms)
	}
}

// A revocation made on another node's copy of the authority, held by this
// node's resolver (the cluster pushed it), is kept by this node's next
// re-signing (Revoke) and taken in by Reconcile, the machine marked
// revoked in this node's list (review: the first node's next re-signing
// lifted it).
func TestRevocationsFromAnotherCopyAreKept(t *testing.T) {
	store1 := t.TempDir()
	a1 := open(t, store1)
	for _, m := range []string{"m1", "m2", "m3"} {
		if _, err := a1.Issue("web", m, "", time.Now()); err != nil {
			t.Fatal(err)
		}
	}
	copyOf := func() (string, *hubauth.Authority) {
		store := t.TempDir()
		if err := os.CopyFS(hubauth.Path(store), os.DirFS(hubauth.Path(store1))); err != nil {
			t.Fatal(err)
		}
		return store, open(t, store)
	}
	_, a2 := copyOf()
	store3, a3 := copyOf()
	if err := a2.Revoke("web", "m1", time.Now()); err != nil {
		t.Fatal(err)
	}
	// The cluster gives the other nodes node 2's JWT: their resolvers
	// hold it.
	acc2, err := a2.Account("web")
	if err != nil {
		t.Fatal(err)
	}
	for _, store := range []string{store1, store3} {
		res := filepath.Join(store, hubauth.ResolverDir)
		if err := os.MkdirAll(res, 0o700); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(res, acc2.Public+".jwt"), []byte(acc2.JWT), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	revoked := func(a *hubauth.Authority) map[string]bool {
		t.Helper()
		acc, err := a.Account("web")
		if err != nil {
			t.Fatal(err)
		}
		ac, err := jwt.DecodeAccountClaims(acc.JWT)
		if err != nil {
			t.Fatal(err)
		}
		ms, err := a.Machines("web")
		if err != nil {
			t.Fatal(err)
		}
		out := map[string]bool{}
		for _, m := range ms {
			_, inJWT := ac.Revocations[m.User]
			if inJWT == m.Revoked.IsZero() {
				t.Fatalf("%s: in the JWT's revocations %v, listed revoked %v", m.Name, inJWT, m.Revoked)
			}
			out[m.Name] = inJWT
		}
		return out
	}
	// Node 3 re-signs from its copy (m1 not revoked there): m1 stays.
	if err := a3.Revoke("web", "m2", time.Now()); err != nil {
		t.Fatal(err)
	}
	if r := revoked(a3); !r["m1"] || !r["m2"] || r["m3"] {
		t.Fatalf("node 3's re-signing revokes %v, want m1 and m2", r)
	}
	// Node 1 takes it in (as its hub does at start and on a change).
	if accs, got, err := a1.Reconcile(); err != nil || len(got) != 1 || got[0] != "web" || len(accs) != 1 {
		t.Fatalf("Reconcile = %v, %v, %v", accs, got, err)
	}
	if r := revoked(a1); !r["m1"] || r["m2"] || r["m3"] {
		t.Fatalf("after Reconcile node 1 revokes %v", r)
	}
	accs, got, err := a1.Reconcile()
	if err != nil || len(got) != 0 {
		t.Fatalf("Reconcile again = %v, %v (nothing new)", got, err)
	}
	if now, _ := a1.Account("web"); len(accs) != 1 || accs[0] != now {
		t.Fatalf("Reconcile's accounts %+v, want the authority's %+v", accs, now)
	}
	// Another revocation reaches node 1's resolver after it reconciled:
	// the next pass sees the resolver's JWT changed and takes it in.
	if err := a2.Revoke("web", "m3", time.Now()); err != nil {
		t.Fatal(err)
	}
	acc2, err = a2.Account("web")
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(store1, hubauth.ResolverDir, acc2.Public+".jwt"), []byte(acc2.JWT), 0o600); err != nil {
		t.Fatal(err)
	}
	if _, got, err := a1.Reconcile(); err != nil || len(got) != 1 {
		t.Fatalf("Reconcile after a new revocation = %v, %v", got, err)
	}
	if r := revoked(a1); !r["m1"] || r["m2"] || !r["m3"] {
		t.Fatalf("after the second Reconcile node 1 revokes %v", r)
	}
}

// A revoked credential stays refused whichever way a node's copy of the
// authority is opened (review: a path opened it without the resolver that
// carries the cluster's revocations, and its next re-signing lifted
// them): m1 revoked on node 2's copy, its JWT in node 1's resolver; node
// 1's copy opened and re-signed (m2 revoked) keeps m1 revoked.
func TestEveryOpenKeepsTheResolversRevocations(t *testing.T) {
	store1, store2 := t.TempDir(), t.TempDir()
	a1 := open(t, store1)
	for _, m := range []string{"m1", "m2"} {
		if _, err := a1.Issue("web", m, "", time.Now()); err != nil {
			t.Fatal(err)
		}
	}
	if err := os.CopyFS(hubauth.Path(store2), os.DirFS(hubauth.Path(store1))); err != nil {
		t.Fatal(err)
	}
	a2 := open(t, store2)
	if err := a2.Revoke("web", "m1", time.Now()); err != nil {
		t.Fatal(err)
	}
	acc2, err := a2.Account("web")
	if err != nil {
		t.Fatal(err)
	}
	res := filepath.Join(store1, hubauth.ResolverDir) // the cluster pushed it to node 1
	if err := os.MkdirAll(res, 0o700); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(res, acc2.Public+".jwt"), []byte(acc2.JWT), 0o600); err != nil {
		t.Fatal(err)
	}
	again := open(t, store1) // as pm hub creds and pm hub open it
	if err := again.Revoke("web", "m2", time.Now()); err != nil {
		t.Fatal(err)
	}
	acc, err := again.Account("web")
	if err != nil {
		t.Fatal(err)
	}
	ac, err := jwt.DecodeAccountClaims(acc.JWT)
	if err != nil {
		t.Fatal(err)
	}
	ms, _ := again.Machines("web")
	for _, m := range ms {
		if _, ok := ac.Revocations[m.User]; !ok {
			t.Errorf("%s is not revoked after node 1 re-signed: a revocation was lifted", m.Name)
		}
	}
}

// An authority a crash left half-made (between the operator's keys and
// the system account's) is not one (review: Exists said it was, so a
// cluster node started on it with a system account of its own): Exists
// is false for each half-made state, and opening it completes it with the
// operator it has, its JWT naming the system account.
func TestHalfMadeAuthority(t *testing.T) {
	whole := t.TempDir()
	open(t, whole)
	for name, files := range map[string][]string{
		"operator's seed only":        {"operator.nk"},
		"operator only":               {"operator.nk", "operator.jwt"},
		"operator and the sys seed":   {"operator.nk", "operator.jwt", "sys.nk"},
		"everything but its last JWT": {"operator.nk", "sys.nk", "sys.jwt"},
	} {
		t.Run(name, func(t *testing.T) {
			store := t.TempDir()
			dir := hubauth.Path(store)
			if err := os.Mkdir(dir, 0o700); err != nil {
				t.Fatal(err)
			}
			for _, f := range files {
				b, err := os.ReadFile(filepath.Join(whole, "accounts", f))
				if err != nil {
					t.Fatal(err)
				}
				if f == "operator.jwt" { // as written before the sys account existed
					b = []byte(operatorAlone(t, filepath.Join(whole, "accounts", "operator.nk")))
				}
				if err := os.WriteFile(filepath.Join(dir, f), b, 0o600); err != nil {
					t.Fatal(err)
				}
			}
			if got := hubauth.Status(store); got != hubauth.Half {
				t.Fatalf("a half-made authority is %v, want Half", got)
			}
			a := open(t, store)
			if hubauth.Status(store) != hubauth.Whole {
				t.Fatal("opening it did not complete it")
			}
			oc, err := a.Operator()
			if err != nil || oc.SystemAccount != a.SystemAccount() {
				t.Fatalf("operator names system account %q, want %q (%v)", oc.SystemAccount, a.SystemAccount(), err)
			}
			want := open(t, whole)
			if oc.Subject != mustOperator(t, want).Subject {
				t.Fatal("completed with another operator than the one it had")
			}
		})
	}
}

// operatorAlone is the operator's JWT as the first step of the making
// writes it: naming no system account yet.
func operatorAlone(t *testing.T, seedFile string) string {
	t.Helper()
	b, err := os.ReadFile(seedFile)
	if err != nil {
		t.Fatal(err)
	}
	kp, err := nkeys.FromSeed(bytes.TrimSpace(b))
	if err != nil {
		t.Fatal(err)
	}
	pub, _ := kp.PublicKey()
	oc := jwt.NewOperatorClaims(pub)
	oc.Name = "pm"
	tok, err := oc.Encode(kp)
	if err != nil {
		t.Fatal(err)
	}
	return tok
}

func mustOperator(t *testing.T, a *hubauth.Authority) *jwt.OperatorClaims {
	t.Helper()
	oc, err := a.Operator()
	if err != nil {
		t.Fatal(err)
	}
	return oc
}

// OpenStore opens a whole authority only (review: it made a fresh store's
// operator, and completed a half-made one, for whichever command opened
// it, so pm hub creds on a cluster's later node whose copy was cut short
// gave it a system account of its own): a store with none or half of one
// is refused with a Try line and left as it was. Making or completing it
// is MakeStore's, asked for by a hub's single or first node only.
func TestOpenStoreRefusesWhatItWouldMake(t *testing.T) {
	whole := t.TempDir()
	open(t, whole)
	for name, files := range map[string][]string{
		"nothing":              nil,
		"an empty directory":   {},
		"operator's seed only": {"operator.nk"},
		"without its last JWT": {"operator.nk", "sys.nk", "sys.jwt"},
	} {
		t.Run(name, func(t *testing.T) {
			store := t.TempDir()
			dir := hubauth.Path(store)
			if files != nil {
				if err := os.Mkdir(dir, 0o700); err != nil {
					t.Fatal(err)
				}
			}
			for _, f := range files {
				b, err := os.ReadFile(filepath.Join(hubauth.Path(whole), f))
				if err != nil {
					t.Fatal(err)
				}
				if err := os.WriteFile(filepath.Join(dir, f), b, 0o600); err != nil {
					t.Fatal(err)
				}
			}
			before := listing(t, store)
			_, err := hubauth.OpenStore(store)
			if err == nil || errs.TryOf(err) == "" {
				t.Fatalf("OpenStore of %s: %v, want a refusal with a Try line", name, err)
			}
			if after := listing(t, store); after != before {
				t.Fatalf("the refused open changed the store:\n%s\nwas\n%s", after, before)
			}
			if _, err := hubauth.MakeStore(store); err != nil {
				t.Fatal(err)
			}
			if hubauth.Status(store) != hubauth.Whole {
				t.Fatal("MakeStore did not make it whole")
			}
			if _, err := hubauth.OpenStore(store); err != nil {
				t.Fatalf("OpenStore of the whole authority: %v", err)
			}
		})
	}
}

// listing is store's files, with their sizes.
func listing(t *testing.T, store string) string {
	t.Helper()
	var b strings.Builder
	err := filepath.WalkDir(store, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		fi, err := d.Info()
		if err != nil {
			return err
		}
		fmt.Fprintf(&b, "%s %d\n", p, fi.Size())
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return b.String()
}

package hub_test

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"

	"github.com/plasmodium/pm/internal/config"
	"github.com/plasmodium/pm/internal/errs"
	"github.com/plasmodium/pm/internal/hub"
	"github.com/plasmodium/pm/internal/hub/hubtest"
	"github.com/plasmodium/pm/internal/hubauth"
	"github.com/plasmodium/pm/internal/natsx"
	"github.com/plasmodium/pm/internal/state/hubproject"
	"github.com/plasmodium/pm/internal/state/natsstate"
)

// issue writes machine's credentials for project p into dir (0600, as pm
// hub creds does) and returns the file.
func issue(t *testing.T, a *hubauth.Authority, p, machine string) string {
	t.Helper()
	b, err := a.Issue(p, machine, "", time.Now())
	if err != nil {
		t.Fatal(err)
	}
	f := filepath.Join(t.TempDir(), machine+".creds")
	if err := os.WriteFile(f, b, 0o600); err != nil {
		t.Fatal(err)
	}
	return f
}

// credsConn connects to url with a credentials file, as pm's config makes
// a client (natsx.Dial with store.creds).
func credsConn(t *testing.T, url, creds string) *natsx.Conn {
	t.Helper()
	c, err := natsx.Dial(ctxFor(t), config.Store{URL: url, Project: "probe", Creds: creds}, os.Getenv)
	if err != nil {
		t.Fatalf("connect with %s: %v", filepath.Base(creds), err)
	}
	t.Cleanup(c.Close)
	return c
}

// accountsHub starts hubs (one node or three) with accounts. The first
// node's authority is the one returned, where the test issues and
// revokes; the others start from copies of it made before (as the docs
// say to copy it), so what changes later reaches them only through the
// cluster.
func accountsHub(t *testing.T, three bool) (*hubtest.Hubs, *hubauth.Authority) {
	t.Helper()
	h, a, _ := accountsHubAfter(t, three, nil)
	return h, a
}

// accountsHubAfter is accountsHub with before run on the first node's
// authority before the copies are made, and each node's store (by index),
// where its authority is STORE/accounts as pm hub keeps it.
func accountsHubAfter(t *testing.T, three bool, before func(*hubauth.Authority)) (*hubtest.Hubs, *hubauth.Authority, []string) {
	t.Helper()
	first := t.TempDir()
	dir := hubauth.Path(first)
	a, err := hubauth.MakeStore(first)
	if err != nil {
		t.Fatal(err)
	}
	if before != nil {
		before(a)
	}
	if !three {
		return hubtest.SingleWith(t, func(c *hub.Config) { c.StoreDir, c.Auth.Accounts = first, true }), a, []string{first}
	}
	var stores []string
	return hubtest.ThreeWith(t, func(c *hub.Config) {
		c.Auth.Accounts = true
		if c.Name == "n1" {
			c.StoreDir = first
		} else {
			if err := os.CopyFS(hubauth.Path(c.StoreDir), os.DirFS(dir)); err != nil {
				t.Fatal(err)
			}
		}
		stores = append(stores, c.StoreDir)
	}), a, stores
}

// fill writes one record of every kind project p keeps: a key in its
// records and its locks buckets, a message in each stream.
func fill(t *testing.T, c *natsx.Conn, n natsx.Names) {
	t.Helper()
	for _, b := range []string{n.Records, n.Locks} {
		kv, err := c.JS.KeyValue(ctxFor(t), b)
		if err != nil {
			t.Fatalf("bucket %s: %v", b, err)
		}
		if _, err := kv.Put(ctxFor(t), "secret", []byte(n.Project)); err != nil {
			t.Fatal(err)
		}
	}
	for _, subj := range streamSubjects(t, n) {
		if _, err := c.JS.Publish(ctxFor(t), subj, []byte(n.Project)); err != nil {
			t.Fatalf("publish %s: %v", subj, err)
		}
	}
}

// streamSubjects is a subject of each of n's streams other than the
// buckets'; a stream Streams lists with none here fails the test, so a new
// stream is covered when it is added.
func streamSubjects(t *testing.T, n natsx.Names) []string {
	t.Helper()
	by := map[string]string{
		n.Rooms: n.RoomPrefix + "t.p", n.Mail: n.MailPrefix + "a", n.DesignLog: n.DesignPrefix + "d", n.Bus: n.BusSubject,
		n.Transcripts: n.TranscriptPrefix + "a", n.Replies: n.ReplyPrefix + "a", n.Costs: n.CostSubject,
	}
	var out []string
	for _, s := range n.Streams() {
		if s == natsx.KVStream(n.Records) || s == natsx.KVStream(n.Locks) {
			continue
		}
		subj, ok := by[s]
		if !ok {
			t.Fatalf("stream %s has no subject in streamSubjects: add one", s)
		}
		out = append(out, subj)
	}
	return out
}

// A machine's credential for project p reaches p's records and nothing of
// project q: not its keys, streams, bus, locks, entry in PM_PROJECTS, nor
// its subjects; deleting or making q's streams and buckets touches only
// p's own account; the system account is out of its reach. On one node and
// on three.
func TestAccountsIsolateProjects(t *testing.T) {
	for _, three := range []bool{false, true} {
		t.Run(map[bool]string{false: "single", true: "three"}[three], func(t *testing.T) {
			h, a := accountsHub(t, three)
			pCreds, qCreds := issue(t, a, "p", "m1"), issue(t, a, "q", "m3")
			for _, acc := range []string{"p", "q"} {
				tok, err := a.Account(acc)
				if err != nil {
					t.Fatal(err)
				}
				if err := h.Nodes[0].WaitPushed(ctxFor(t), tok.JWT); err != nil {
					t.Fatal(err)
				}
			}
			q := credsConn(t, h.URL(0), qCreds)
			if err := hubproject.New(ctxFor(t), q, "q", "host", "/src/q", time.Now()); err != nil {
				t.Fatal(err)
			}
			qn, _ := natsx.ProjectNames("q")
			fill(t, q, qn)
			p := credsConn(t, h.URL(h.Len()-1), pCreds)
			if err := hubproject.New(ctxFor(t), p, "p", "host", "/src/p", time.Now()); err != nil {
				t.Fatal(err)
			}

			// List: p's account has p's streams (and the hub's), none of q's.
			var names []string
			for n := range p.JS.StreamNames(ctxFor(t)).Name() {
				names = append(names, n)
			}
			for _, s := range qn.Streams() {
				if slices.Contains(names, s) {
					t.Errorf("p lists q's stream %s (%v)", s, names)
				}
			}
			// Read: every stream and bucket of q is not found from p.
			for _, s := range qn.Streams() {
				if _, err := p.JS.Stream(ctxFor(t), s); !errors.Is(err, jetstream.ErrStreamNotFound) {
					t.Errorf("p opens q's stream %s: %v", s, err)
				}
			}
			for _, b := range []string{qn.Records, qn.Locks} {
				if _, err := p.JS.KeyValue(ctxFor(t), b); !errors.Is(err, jetstream.ErrBucketNotFound) {
					t.Errorf("p opens q's bucket %s: %v", b, err)
				}
			}
			// The project registry: q's entry is not in p's PM_PROJECTS.
			if _, err := natsstate.Lookup(ctxFor(t), p, "q"); !errs.Is(err, errs.NotFound) {
				t.Errorf("p looks q up: %v", err)
			}
			// Write: a publish on q's subjects reaches no stream of q's.
			for _, subj := range streamSubjects(t, qn) {
				if _, err := p.JS.Publish(ctxFor(t), subj, []byte("from p")); !errors.Is(err, jetstream.ErrNoStreamResponse) {
					t.Errorf("p publishes on q's %s: %v", subj, err)
				}
			}
			// Subscribe: p's interest in everything is not interest in q's subjects.
			sub, err := p.NC.SubscribeSync(">")
			if err != nil {
				t.Fatal(err)
			}
			defer sub.Unsubscribe()
			if err := p.NC.Flush(); err != nil {
				t.Fatal(err)
			}
			srv := h.Nodes[h.Len()-1].Server()
			qAcc, err := srv.LookupAccount(accountOf(t, a, "q"))
			if err != nil {
				t.Fatal(err)
			}
			if qAcc.SubscriptionInterest(qn.BusSubject + ".x") {
				t.Error("p's subscription to > is interest in q's subjects")
			}
			// Delete: q's streams are not p's to delete.
			for _, s := range qn.Streams() {
				if err := p.JS.DeleteStream(ctxFor(t), s); !errors.Is(err, jetstream.ErrStreamNotFound) {
					t.Errorf("p deletes q's stream %s: %v", s, err)
				}
			}
			if err := p.JS.DeleteKeyValue(ctxFor(t), qn.Records); !errors.Is(err, jetstream.ErrBucketNotFound) {
				t.Errorf("p deletes q's bucket: %v", err)
			}
			// Create: a bucket of q's name made by p is p's own; q's is untouched.
			// Through natsx.Do as pm's own requests go: on three loaded nodes
			// a create's answer can be lost (CI waited out 60 s on one).
			mine, err := p.KeyValue(ctxFor(t), jetstream.KeyValueConfig{Bucket: qn.Records, Replicas: p.Replicas()})
			if err != nil {
				t.Fatal(err)
			}
			if err := natsx.Do(ctxFor(t), func(op context.Context) error {
				_, err := mine.Put(op, "secret", []byte("p was here"))
				return err
			}); err != nil {
				t.Fatal(err)
			}
			if _, err := p.Stream(ctxFor(t), jetstream.StreamConfig{Name: qn.Bus, Subjects: []string{qn.BusSubject}}); err != nil {
				t.Fatal(err)
			}
			// q still has all it had, and only it.
			qkv, err := q.JS.KeyValue(ctxFor(t), qn.Records)
			if err != nil {
				t.Fatal(err)
			}
			if e, err := qkv.Get(ctxFor(t), "secret"); err != nil || string(e.Value()) != "q" {
				t.Errorf("q's record after p's writes: %v %v", e, err)
			}
			for _, s := range qn.Streams() {
				st, err := q.JS.Stream(ctxFor(t), s)
				if err != nil {
					t.Fatalf("q's stream %s after p's deletes: %v", s, err)
				}
				if n := st.CachedInfo().State.Msgs; n != 1 {
					t.Errorf("q's stream %s holds %d messages, want its 1", s, n)
				}
			}
		})
	}
}

func accountJWT(t *testing.T, a *hubauth.Authority, p string) string {
	t.Helper()
	acc, err := a.Account(p)
	if err != nil {
		t.Fatal(err)
	}
	return acc.JWT
}

func accountOf(t *testing.T, a *hubauth.Authority, p string) string {
	t.Helper()
	acc, err := a.Account(p)
	if err != nil {
		t.Fatal(err)
	}
	return acc.Public
}

// closed connects to url with creds and returns the connection and a
// channel closed when the server cuts it off.
func closed(t *testing.T, url, creds string) (*nats.Conn, <-chan struct{}) {
	t.Helper()
	gone := make(chan struct{})
	nc, err := nats.Connect(url, nats.UserCredentials(creds), nats.NoReconnect(),
		nats.ClosedHandler(func(*nats.Conn) { close(gone) }),
		nats.ErrorHandler(func(*nats.Conn, *nats.Subscription, error) {}))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(nc.Close)
	return nc, gone
}

// Revoking one machine's credential closes its connections and refuses it
// from then on, on the running hub (no restart); the project's other
// machine and other projects' machines are untouched. A credential issued
// while the hub runs, for a project new to it, is taken at once.
func TestAccountsRevokeLive(t *testing.T) {
	for _, three := range []bool{false, true} {
		t.Run(map[bool]string{false: "single", true: "three"}[three], func(t *testing.T) {
			h, a := accountsHub(t, three)
			m1, m2 := issue(t, a, "p", "m1"), issue(t, a, "p", "m2")
			// Issued after the start: the hub pushes the new account.
			m3 := issue(t, a, "q", "m3")
			if err := h.Nodes[0].WaitPushed(ctxFor(t), accountJWT(t, a, "q")); err != nil {
				t.Fatal(err)
			}
			last := h.Len() - 1
			_, gone1 := closed(t, h.URL(last), m1)
			nc2, gone2 := closed(t, h.URL(last), m2)
			nc3, gone3 := closed(t, h.URL(0), m3)

			before := accountJWT(t, a, "p")
			start := time.Now()
			if err := a.Revoke("p", "m1", time.Now()); err != nil {
				t.Fatal(err)
			}
			ctx := ctxFor(t)
			// m1 is connected to the last node, which learns of the
			// revocation from the first (on three: through the cluster).
			select {
			case <-gone1:
			case <-ctx.Done():
				t.Fatal("m1's connection outlived its revocation")
			}
			t.Logf("revocation to m1's connection closed: %v (measured, not checked)", time.Since(start))
			if err := h.Nodes[0].WaitPushed(ctx, accountJWT(t, a, "p")); err != nil {
				t.Fatal(err)
			}
			for _, i := range []int{0, last} {
				if _, err := nats.Connect(h.URL(i), nats.UserCredentials(m1), nats.NoReconnect()); err == nil {
					t.Fatalf("a revoked credential connects to node %d", i)
				}
			}
			for name, nc := range map[string]*nats.Conn{"m2": nc2, "m3": nc3} {
				if err := nc.Flush(); err != nil {
					t.Errorf("%s after m1's revocation: %v", name, err)
				}
			}
			select {
			case <-gone2:
				t.Error("m2 was cut off with m1")
			case <-gone3:
				t.Error("m3 was cut off with m1")
			default:
			}
			// The system account is out of a project's reach: m2 replaying
			// p's JWT from before the revocation (as the system account's
			// update requests do) lifts nothing.
			for _, subj := range []string{"$SYS.REQ.CLAIMS.UPDATE", "$SYS.REQ.ACCOUNT." + accountOf(t, a, "p") + ".CLAIMS.UPDATE"} {
				if msg, err := nc2.Request(subj, []byte(before), 2*time.Second); err == nil {
					t.Errorf("%s answered a project's machine: %s", subj, msg.Data)
				}
			}
			if _, err := nats.Connect(h.URL(last), nats.UserCredentials(m1), nats.NoReconnect()); err == nil {
				t.Fatal("a replayed JWT lifted the revocation")
			}
			// A restarted node keeps the revocation, even one whose copy
			// of the authority predates it.
			for _, i := range []int{0, last} {
				h.Stop(i)
				h.Start(i)
				if _, err := nats.Connect(h.URL(i), nats.UserCredentials(m1), nats.NoReconnect()); err == nil {
					t.Fatalf("a revoked credential connects to node %d after its restart", i)
				}
				credsConn(t, h.URL(i), m2)
			}
		})
	}
}

// A hub with accounts takes no shared nkeys; its --user guards the routes
// only (a client cannot log in with it).
func TestAccountsAuth(t *testing.T) {
	_, err := hub.Start(hub.Config{Name: "n", StoreDir: t.TempDir(), Listen: "127.0.0.1:0",
		Auth: hub.Auth{Accounts: true, NKeys: []string{"UABC"}}})
	if !errs.Is(err, errs.Usage) {
		t.Fatalf("--accounts with --nkey: %v", err)
	}
	if !(hub.Auth{Accounts: true}).Authenticates() {
		t.Fatal("a hub with accounts is taken as open to anyone")
	}
	h := hubtest.SingleWith(t, func(c *hub.Config) { c.Auth = hub.Auth{Accounts: true, User: "pm", Password: "pw"} })
	wantRefused(t, dial(t, config.Store{URL: h.URL(0), Project: "p", User: "pm"}, map[string]string{"NATS_PASSWORD": "pw"}), "credentials")
	wantRefused(t, dial(t, config.Store{URL: h.URL(0), Project: "p"}, nil), "credentials")
}

// A node of a cluster whose store has no accounts is refused (review: it
// made an operator of its own, trusted by it alone, so the cluster split
// silently): its Try says to copy STORE/accounts from the first node, and
// nothing is made. The first node, told to (NewAccounts), makes them; a
// single node makes them as before.
func TestAccountsClusterNodeNeedsItsPeersOperator(t *testing.T) {
	cluster := func(store string, create bool) hub.Config {
		return hub.Config{Name: "n2", StoreDir: store, Listen: "127.0.0.1:0", Cluster: "127.0.0.1:0",
			Routes: []string{"127.0.0.1:1"}, Auth: hub.Auth{Accounts: true, NewAccounts: create}}
	}
	dir := t.TempDir()
	h, err := hub.Start(cluster(dir, false))
	if err == nil {
		h.Close()
		t.Fatal("a cluster node without accounts started with an operator of its own")
	}
	if !errs.Is(err, errs.State) || !strings.Contains(errs.TryOf(err), "copy STORE/accounts from the cluster's first node") {
		t.Fatalf("refusal: %v (Try: %s)", err, errs.TryOf(err))
	}
	if hubauth.Status(dir) != hubauth.None {
		t.Fatal("the refused start made an operator")
	}
	for name, c := range map[string]hub.Config{
		"first node, told to": cluster(dir, true),
		"single node":         {Name: "n", StoreDir: t.TempDir(), Listen: "127.0.0.1:0", Auth: hub.Auth{Accounts: true}},
	} {
		h, err := hub.Start(c)
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		h.Close()
		if hubauth.Status(c.StoreDir) != hubauth.Whole {
			t.Fatalf("%s: no operator made", name)
		}
	}
	// A node that holds a copy of the first's starts without the flag.
	h, err = hub.Start(cluster(dir, false))
	if err != nil {
		t.Fatalf("with a copy of the accounts: %v", err)
	}
	h.Close()
	// A copy cut short (the operator without the system account) is
	// refused, and left as it was: completed here, it would hold a
	// system account of this node's own (review: Exists said it was one).
	half := t.TempDir()
	if err := os.Mkdir(hubauth.Path(half), 0o700); err != nil {
		t.Fatal(err)
	}
	for _, f := range []string{"operator.nk", "operator.jwt"} {
		b, err := os.ReadFile(filepath.Join(dir, hubauth.Dir, f))
		if err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(half, hubauth.Dir, f), b, 0o600); err != nil {
			t.Fatal(err)
		}
	}
	h, err = hub.Start(cluster(half, false))
	if err == nil {
		h.Close()
		t.Fatal("a cluster node started on a half-made copy of the accounts")
	}
	if !errs.Is(err, errs.State) || !strings.Contains(errs.TryOf(err), "again, whole") {
		t.Fatalf("refusal: %v (Try: %s)", err, errs.TryOf(err))
	}
	if _, err := os.Stat(filepath.Join(half, hubauth.Dir, "sys.nk")); err == nil {
		t.Fatal("the refused start completed the half-made copy")
	}
}

// A revocation made on one node's copy of the authority holds after
// another node re-signs the account from its own copy (review: the next
// re-signing on the first node lifted it): m1 revoked on node 2, then m2
// on node 1, and m1 stays refused on all three nodes, on node 1's list
// too; m3 goes on.
func TestAccountsRevocationHoldsAcrossNodes(t *testing.T) {
	var m1, m2, m3 string
	h, a, stores := accountsHubAfter(t, true, func(a *hubauth.Authority) {
		m1, m2, m3 = issue(t, a, "p", "m1"), issue(t, a, "p", "m2"), issue(t, a, "p", "m3")
	})
	_, gone1 := closed(t, h.URL(0), m1)
	_, gone2 := closed(t, h.URL(2), m2)
	nc3, gone3 := closed(t, h.URL(1), m3)
	// Node 2's copy, as pm hub creds --store there opens it.
	a2, err := hubauth.OpenStore(stores[1])
	if err != nil {
		t.Fatal(err)
	}
	if err := a2.Revoke("p", "m1", time.Now()); err != nil {
		t.Fatal(err)
	}
	ctx := ctxFor(t)
	select { // node 1 took node 2's revocation
	case <-gone1:
	case <-ctx.Done():
		t.Fatal("m1's connection to node 1 outlived its revocation on node 2")
	}
	// Node 1 re-signs p's account from its own copy.
	if err := a.Revoke("p", "m2", time.Now()); err != nil {
		t.Fatal(err)
	}
	select { // node 3 took node 1's re-signed account
	case <-gone2:
	case <-ctx.Done():
		t.Fatal("m2's connection to node 3 outlived its revocation on node 1")
	}
	for i := range h.Len() {
		if nc, err := nats.Connect(h.URL(i), nats.UserCredentials(m1), nats.NoReconnect()); err == nil {
			nc.Close()
			t.Errorf("m1, revoked on node 2, connects to node %d after node 1 re-signed", i+1)
		}
	}
	if err := nc3.Flush(); err != nil {
		t.Errorf("m3: %v", err)
	}
	select {
	case <-gone3:
		t.Error("m3 was cut off")
	default:
	}
	ms, err := a.Machines("p")
	if err != nil {
		t.Fatal(err)
	}
	for _, m := range ms {
		if (m.Name == "m3") != m.Revoked.IsZero() {
			t.Errorf("node 1's list: %s revoked %v", m.Name, m.Revoked)
		}
	}
}

// A node of a cluster given another authority's copy of STORE/accounts is
// refused at start, while its peers run (review: it started and split the
// accounts silently, each side refusing the other's credentials): its
// Try says to copy the cluster's; with the cluster's copy it starts, and
// the running nodes are untouched.
func TestAccountsClusterNodeTrustsItsPeersOperator(t *testing.T) {
	h, a, stores := accountsHubAfter(t, true, nil)
	m := issue(t, a, "p", "m1")
	h.Stop(2)
	mine := hubauth.Path(stores[2])
	kept := filepath.Join(t.TempDir(), "kept")
	if err := os.Rename(mine, kept); err != nil {
		t.Fatal(err)
	}
	other := t.TempDir() // another authority, as another cluster's first node made it
	if _, err := hubauth.MakeStore(other); err != nil {
		t.Fatal(err)
	}
	if err := os.CopyFS(mine, os.DirFS(hubauth.Path(other))); err != nil {
		t.Fatal(err)
	}
	err := h.TryStart(2)
	if err == nil {
		t.Fatal("a node trusting another operator than its peers' started")
	}
	if !errs.Is(err, errs.State) || !strings.Contains(errs.TryOf(err), "copy STORE/accounts from the cluster's first node") {
		t.Fatalf("refusal: %v (Try: %s)", err, errs.TryOf(err))
	}
	if err := os.RemoveAll(mine); err != nil {
		t.Fatal(err)
	}
	if err := os.Rename(kept, mine); err != nil {
		t.Fatal(err)
	}
	if err := h.TryStart(2); err != nil {
		t.Fatalf("with the cluster's copy: %v", err)
	}
	for i := range h.Len() {
		nc, err := nats.Connect(h.URL(i), nats.UserCredentials(m), nats.NoReconnect())
		if err != nil {
			t.Fatalf("m1 on node %d: %v", i+1, err)
		}
		nc.Close()
	}
}

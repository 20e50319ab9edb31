package hub

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"sync"
	"time"

	"github.com/nats-io/jwt/v2"
	"github.com/nats-io/nats-server/v2/server"
	"github.com/nats-io/nats.go"

	"github.com/plasmodium/pm/internal/errs"
	"github.com/plasmodium/pm/internal/hubauth"
	"github.com/plasmodium/pm/internal/watch"
)

// claimsUpdate is where a system account's client sends an account's new
// JWT: every node of the cluster takes it (the nats account resolver).
const claimsUpdate = "$SYS.REQ.CLAIMS.UPDATE"

// trust puts the node in operator mode: it trusts the authority's
// operator, its accounts are the projects' (kept by the nats resolver in
// the store, so a cluster's nodes pass updates to one another), and the
// authority's account JWTs are stored in it before the start (a newer one
// the node already holds, pushed while it was down, is kept).
func trust(o *server.Options, a *hubauth.Authority) error {
	oc, err := a.Operator()
	if err != nil {
		return fmt.Errorf("hub accounts: operator: %w", err)
	}
	res, err := server.NewDirAccResolver(a.Resolver(), 0, time.Minute, server.NoDelete)
	if err != nil {
		return errs.Failf("check the store directory (--store)", "hub accounts: %v", err)
	}
	// Revocations this node learned from the cluster (made on another
	// node's copy of the authority) join its own before anything is
	// stored or signed here: its copy, re-signed later, never lifts them.
	accs, _, err := a.Reconcile()
	if err != nil {
		return fmt.Errorf("hub accounts: %w", err)
	}
	if err := res.Store(a.SystemAccount(), a.SysJWT); err != nil {
		return fmt.Errorf("hub accounts: system account: %w", err)
	}
	for _, acc := range accs {
		if err := res.Store(acc.Public, acc.JWT); err != nil {
			return fmt.Errorf("hub accounts: project %s: %w", acc.Project, err)
		}
	}
	o.TrustedOperators = []*jwt.OperatorClaims{oc}
	o.SystemAccount = a.SystemAccount()
	o.AccountResolver = res
	return nil
}

// keeper pushes the authority's account JWTs to the running node when
// pm hub creds changes them (a new project, a machine revoked), without a
// restart: the node (and through it the cluster) takes each new JWT, and
// a revoked machine's connections are closed.
type keeper struct {
	srv      *server.Server
	res      *server.DirAccResolver
	auth     *hubauth.Authority
	log      *logger
	announce bool // a single node: make natsx.HubStream in each new account
	mu       sync.Mutex
	pushed   map[string]string // account → the JWT last pushed
	changed  chan struct{}     // closed (and replaced) at each push
	sys      *nats.Conn
	cancel   context.CancelFunc
	done     sync.WaitGroup
}

// keepAccounts pushes every account once, then watches the authority
// until Close.
func keepAccounts(srv *server.Server, res *server.DirAccResolver, a *hubauth.Authority, log *logger, announce bool) (*keeper, error) {
	tok, kp, err := a.UserFor("", "pm hub")
	if err != nil {
		return nil, err
	}
	sys, err := nats.Connect("", nats.InProcessServer(srv), nats.Name("pm hub"), nats.UserJWT(
		func() (string, error) { return tok, nil }, kp.Sign))
	if err != nil {
		return nil, fmt.Errorf("hub accounts: system account: %w", err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	k := &keeper{srv: srv, res: res, auth: a, log: log, announce: announce, pushed: map[string]string{}, changed: make(chan struct{}), sys: sys, cancel: cancel}
	if err := k.sync(ctx); err != nil {
		cancel()
		sys.Close()
		return nil, err
	}
	k.done.Add(1)
	go func() {
		defer k.done.Done()
		err := watch.Until(ctx, k.dirs, func() (bool, error) {
			if err := k.sync(ctx); err != nil {
				// This node took the JWT before the cluster push (push);
				// a push that failed is retried at the next change, and
				// the resolver's own sync between nodes (every minute)
				// brings the others level meanwhile.
				k.log.Warnf("accounts: %v", err)
			}
			return false, nil
		})
		if err != nil && ctx.Err() == nil {
			k.log.Errorf("accounts: no longer watching %s (restart pm hub to take new credentials and revocations): %v", a.Dir, err)
		}
	}()
	return k, nil
}

// dirs are the authority's directories, each project's included as soon
// as it appears (before its JWT is written in it), and the resolver's,
// where a JWT another node signed lands.
func (k *keeper) dirs() []string {
	projects := filepath.Join(k.auth.Dir, "projects")
	ds := []string{k.auth.Dir, projects, k.auth.Resolver()}
	ents, _ := os.ReadDir(projects)
	for _, e := range ents {
		if e.IsDir() {
			ds = append(ds, filepath.Join(projects, e.Name()))
		}
	}
	return ds
}

// sync takes in the revocations other nodes made (Reconcile: the
// authority's JWTs re-signed with them), then pushes each account whose
// JWT changed since it was last pushed, all from Reconcile's one pass
// (a project unchanged since the last is two small reads). Every JWT this node pushes holds
// every revocation it has seen, so no node's re-signing lifts one.
func (k *keeper) sync(ctx context.Context) error {
	accs, again, err := k.auth.Reconcile() // one pass: the accounts as they then stand
	if err != nil {
		return err
	}
	for _, p := range again {
		k.log.Noticef("accounts: project %s's account re-signed with the revocations another node made", p)
	}
	for _, acc := range accs {
		k.mu.Lock()
		last := k.pushed[acc.Public]
		k.mu.Unlock()
		if last == acc.JWT {
			continue
		}
		if err := k.push(ctx, acc); err != nil {
			return err
		}
		first := last == ""
		k.log.Noticef("accounts: project %s's account taken (%d machines revoked)", acc.Project, revoked(acc.JWT))
		k.mu.Lock()
		k.pushed[acc.Public] = acc.JWT
		close(k.changed)
		k.changed = make(chan struct{})
		k.mu.Unlock()
		if first && k.announce {
			if err := k.announceIn(ctx, acc.Project); err != nil {
				k.log.Warnf("cannot say in project %s's account that this node syncs every write (pm doctor will not know): %v", acc.Project, err)
			}
		}
	}
	return nil
}

// revoked counts the machines an account JWT revokes, for the hub's log.
func revoked(tok string) int {
	ac, err := jwt.DecodeAccountClaims(tok)
	if err != nil {
		return 0
	}
	return len(ac.Revocations)
}

// push makes this node take acc's JWT (before push returns: a revoked
// machine is refused here from then on), then sends it to the cluster's
// other nodes and waits for one to take it.
func (k *keeper) push(ctx context.Context, acc hubauth.Account) error {
	if err := k.res.Store(acc.Public, acc.JWT); err != nil {
		return fmt.Errorf("project %s's account: %w", acc.Project, err)
	}
	op, cancel := context.WithTimeout(ctx, readyWait)
	defer cancel()
	msg, err := k.sys.RequestWithContext(op, claimsUpdate, []byte(acc.JWT))
	if err != nil {
		return fmt.Errorf("push project %s's account: %w", acc.Project, err)
	}
	var resp server.ServerAPIClaimUpdateResponse
	if err := json.Unmarshal(msg.Data, &resp); err != nil {
		return fmt.Errorf("push project %s's account: %w", acc.Project, err)
	}
	if resp.Error != nil {
		return fmt.Errorf("push project %s's account: %s", acc.Project, resp.Error.Description)
	}
	return nil
}

// announceIn makes natsx.HubStream in project p's account, as a user made
// for this once.
func (k *keeper) announceIn(ctx context.Context, p string) error {
	tok, kp, err := k.auth.UserFor(p, "pm hub")
	if err != nil {
		return err
	}
	op, cancel := context.WithTimeout(ctx, readyWait)
	defer cancel()
	return announceWith(op, k.srv, nats.UserJWT(func() (string, error) { return tok, nil }, kp.Sign))
}

// WaitPushed waits until the node has pushed tok, a project's account JWT
// as the authority holds it (after pm hub creds changed it), or ctx ends.
func (h *Hub) WaitPushed(ctx context.Context, tok string) error {
	k := h.accounts
	if k == nil {
		return errs.Usagef("start the hub with --accounts", "hub: no accounts")
	}
	for {
		k.mu.Lock()
		done, ch := false, k.changed
		for _, t := range k.pushed {
			done = done || t == tok
		}
		k.mu.Unlock()
		if done {
			return nil
		}
		select {
		case <-ch:
		case <-ctx.Done():
			return ctx.Err()
		}
	}
}

func (k *keeper) close() {
	k.cancel()
	k.done.Wait()
	k.sys.Close()
}

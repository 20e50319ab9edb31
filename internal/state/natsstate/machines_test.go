package natsstate_test

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/plasmodium/pm/internal/hub/hubtest"
	"github.com/plasmodium/pm/internal/state"
	"github.com/plasmodium/pm/internal/state/natsstate"
)

func openOn(t *testing.T, ctx context.Context, h *hubtest.Hubs, node int, project string) *natsstate.State {
	t.Helper()
	st, err := natsstate.Open(ctx, h.Connect(node), project)
	if err != nil {
		t.Fatal(err)
	}
	st.LeaseTTLWanted = time.Second
	return st
}

// An agent's lease on two machines (two nodes' connections): the second
// host is refused while the first holds it; once the first stops renewing
// (cut off) the second, woken by the expiry, takes it, and from then on
// the first host's fence marks and renewals are refused by the hub.
func TestAgentLeaseFencesTheOldHost(t *testing.T) {
	h := hubtest.Three(t)
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	a, b := openOn(t, ctx, h, 0, "fence"), openOn(t, ctx, h, 2, "fence")
	if a.LeaseTTL() != time.Second {
		t.Fatalf("lease TTL %s, want the first opener's 1s", a.LeaseTTL())
	}
	la, err := a.HoldAgent(ctx, "cedar", "machine-a")
	if err != nil {
		t.Fatal(err)
	}
	if _, err := b.HoldAgent(ctx, "cedar", "machine-b"); !errors.Is(err, state.ErrLeaseHeld) {
		t.Fatalf("second host: %v, want ErrLeaseHeld", err)
	}
	if err := la.Fence(ctx, "pm say"); err != nil {
		t.Fatal(err)
	}
	if err := b.WaitAgentFree(ctx, "cedar"); err != nil {
		t.Fatal(err)
	}
	lb, err := b.HoldAgent(ctx, "cedar", "machine-b")
	if err != nil {
		t.Fatal(err)
	}
	if err := la.Fence(ctx, "pm say"); !errors.Is(err, state.ErrLeaseLost) {
		t.Fatalf("old host's call after the takeover: %v, want ErrLeaseLost", err)
	}
	if err := la.Renew(ctx); !errors.Is(err, state.ErrLeaseLost) {
		t.Fatalf("old host's renewal: %v, want ErrLeaseLost", err)
	}
	if err := lb.Fence(ctx, "pm say"); err != nil {
		t.Fatalf("new host's call: %v", err)
	}
	if err := lb.Release(ctx); err != nil {
		t.Fatal(err)
	}
}

// Workers register under a name (one live of each), are listed with what
// they said last, wake a watcher, and are gone once their key expires.
func TestWorkersRegisterAndExpire(t *testing.T) {
	h := hubtest.Single(t)
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	st := openOn(t, ctx, h, 0, "workers")
	woke := make(chan struct{}, 16)
	go func() { _ = st.WatchWorkers(ctx, func() { woke <- struct{}{} }) }()
	w1, err := st.RegisterWorker(ctx, state.Worker{Name: "w1", Capacity: 2, LastSeen: time.Now()})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := st.RegisterWorker(ctx, state.Worker{Name: "w1", Capacity: 4}); !errors.Is(err, state.ErrConflict) {
		t.Fatalf("second w1: %v, want ErrConflict", err)
	}
	if _, err := st.RegisterWorker(ctx, state.Worker{Name: "w2", Capacity: 1}); err != nil {
		t.Fatal(err)
	}
	if err := w1.Renew(ctx, state.Worker{Name: "w1", Capacity: 2, Running: []string{"cedar"}}); err != nil {
		t.Fatal(err)
	}
	ws, err := st.Workers()
	if err != nil {
		t.Fatal(err)
	}
	if len(ws) != 2 || ws[0].Name != "w1" || ws[0].Free() != 1 || ws[1].Name != "w2" {
		t.Fatalf("workers %+v", ws)
	}
	<-woke
	// Neither renews any more: both keys expire, and the watch says so.
	for {
		ws, err := st.Workers()
		if err != nil {
			t.Fatal(err)
		}
		if len(ws) == 0 {
			break
		}
		<-woke
	}
	if err := w1.Renew(ctx, state.Worker{Name: "w1"}); !errors.Is(err, state.ErrLeaseLost) {
		t.Fatalf("renewal of an expired worker: %v, want ErrLeaseLost", err)
	}
}

// AgentHolder reads an agent's lease without taking it (pm doctor
// --check): the holder while one holds it, "" once it is released or has
// expired (the bucket's marker), and "" for an agent never started.
func TestAgentHolderReadsTheLease(t *testing.T) {
	h := hubtest.Single(t)
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	a, b := openOn(t, ctx, h, 0, "holder"), openOn(t, ctx, h, 0, "holder")
	holder := func(name string) string {
		t.Helper()
		who, err := b.AgentHolder(ctx, name)
		if err != nil {
			t.Fatal(err)
		}
		return who
	}
	if who := holder("cedar"); who != "" {
		t.Fatalf("never taken: held by %q", who)
	}
	le, err := a.HoldAgent(ctx, "cedar", "machine-a pid 7")
	if err != nil {
		t.Fatal(err)
	}
	if who := holder("cedar"); who != "machine-a pid 7" {
		t.Fatalf("held: %q, want machine-a pid 7", who)
	}
	if err := le.Release(ctx); err != nil {
		t.Fatal(err)
	}
	if who := holder("cedar"); who != "" {
		t.Fatalf("released: held by %q", who)
	}
	if _, err := a.HoldAgent(ctx, "cedar", "machine-a pid 8"); err != nil {
		t.Fatal(err)
	}
	if err := b.WaitAgentFree(ctx, "cedar"); err != nil { // not renewed: it expires
		t.Fatal(err)
	}
	if who := holder("cedar"); who != "" {
		t.Fatalf("expired: held by %q", who)
	}
}

// WatchWorkers' watch is made like every request to the hub: one whose
// creation goes unanswered (the connection cut right after the request
// reached the node, as when a node goes; or no leader takes it) is asked
// again within the request's bound, not waited for as long as the
// caller's context nor failed after nats.go's own timeout (a worker
// would end on it). The watch made lives on after that request's bound:
// a worker's key released later wakes it.
func TestWatchWorkersRidesOutAnUnansweredCreation(t *testing.T) {
	h := hubtest.Single(t)
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	p := h.ProxyTo(0)
	st, err := natsstate.Open(ctx, h.ConnectVia(p), "watchlost")
	if err != nil {
		t.Fatal(err)
	}
	other := openOn(t, ctx, h, 0, "watchlost")
	if _, err := st.Workers(); err != nil { // the workers' bucket open: the next consumer is the watch's
		t.Fatal(err)
	}
	made := make(chan struct{}, 1)
	defer natsstate.OnWatchMade(func() { made <- struct{}{} })()
	p.LoseAnswerTo("$JS.API.CONSUMER.CREATE.")
	// A worker's context: no deadline, it lives as long as the worker.
	life, stop := context.WithCancel(context.Background())
	defer stop()
	woke := make(chan struct{}, 16)
	errc := make(chan error, 1)
	go func() { errc <- st.WatchWorkers(life, func() { woke <- struct{}{} }) }()
	select {
	case <-made:
	case err := <-errc:
		t.Fatalf("the watch, its creation's answer lost: %v (cuts %d), want it made", err, p.Cuts())
	case <-ctx.Done():
		t.Fatalf("the watch, its creation's answer lost: not made within a minute (cuts %d)", p.Cuts())
	}
	if p.Cuts() != 1 {
		t.Fatalf("%d answers lost, want the creation's", p.Cuts())
	}
	reg, err := other.RegisterWorker(ctx, state.Worker{Name: "w1", Capacity: 1})
	if err != nil {
		t.Fatal(err)
	}
	if err := reg.Release(ctx); err != nil {
		t.Fatal(err)
	}
	select {
	case <-woke:
	case err := <-errc:
		t.Fatalf("the watch ended: %v", err)
	case <-ctx.Done():
		t.Fatal("a worker released, the watch not woken within a minute")
	}
	stop()
	if err := <-errc; !errors.Is(err, context.Canceled) {
		t.Fatalf("the watch after its caller ended: %v, want context.Canceled", err)
	}
}

package natsstate_test

import (
	"context"
	"encoding/json"
	"errors"
	"testing"
	"time"

	"github.com/plasmodium/pm/internal/cost"
	"github.com/plasmodium/pm/internal/hub/hubtest"
	"github.com/plasmodium/pm/internal/natsx"
	"github.com/plasmodium/pm/internal/state"
	"github.com/plasmodium/pm/internal/state/natsstate"
)

// Requests whose answers are lost (the connection cut right after the
// request reached the hub, as when a node goes) are repeated and
// recognised: a design's run lock taken by the lost attempt is this
// process's, not "held by another"; an agent-log append (a transcript
// entry, a reply piece, a cost entry) is stored once, not failed, not
// twice (a cost counted twice would be a wrong bill); an agent's lease
// and a worker's registration taken and renewed by lost attempts are
// held, not lost.
func TestLostAnswersInTheState(t *testing.T) {
	h := hubtest.Single(t)
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	const project, agent = "lost", "oak_0001"
	names, err := natsx.ProjectNames(project)
	if err != nil {
		t.Fatal(err)
	}
	p := h.ProxyTo(0)
	st, err := natsstate.Open(ctx, h.ConnectVia(p), project)
	if err != nil {
		t.Fatal(err)
	}
	other, err := natsstate.Open(ctx, h.Connect(0), project)
	if err != nil {
		t.Fatal(err)
	}
	// A lost answer costs a request's timeout (5 s): the leases outlast it.
	st.LeaseTTLWanted, other.LeaseTTLWanted = time.Minute, time.Minute
	cuts := int64(0)
	lose := func(subject string) {
		t.Helper()
		p.LoseAnswerTo(subject)
		cuts++
	}
	cut := func(what string) {
		t.Helper()
		if p.Cuts() != cuts {
			t.Fatalf("%s: %d answers lost, want %d", what, p.Cuts(), cuts)
		}
	}

	id, err := st.CreateDesign()
	if err != nil {
		t.Fatal(err)
	}
	lose("PUB $KV." + names.Locks + ".")
	unlock, ok, err := st.TryLockDesign(id)
	cut("design lock")
	if err != nil || !ok {
		t.Fatalf("a design lock whose answer was lost: held %v, %v; want it held by this process", !ok, err)
	}
	if _, ok, err := other.TryLockDesign(id); err != nil || ok {
		t.Fatalf("another process's try while it is held: %v, %v; want held", ok, err)
	}
	unlock()
	unlockOther, ok, err := other.TryLockDesign(id)
	if err != nil || !ok {
		t.Fatalf("another process's try once unlocked: %v, %v; want it taken", ok, err)
	}
	unlockOther()

	// A host's lease on its agent: its take (and its fenced writer's
	// takeover mark), a renewal. Then a worker's registration and its
	// renewal (a lease on the worker's name).
	lose("PUB $KV." + names.Agents + ".")
	le, err := st.HoldAgent(ctx, agent, "host-a")
	cut("agent lease")
	if err != nil {
		t.Fatalf("an agent's lease whose take's answer was lost: %v, want it held", err)
	}
	if err := le.Fence(ctx, "pm say"); err != nil {
		t.Fatalf("a fence mark after the lease was taken: %v", err)
	}
	lose("PUB $KV." + names.Agents + ".")
	if err := le.Renew(ctx); err != nil {
		t.Fatalf("a renewal of the agent's lease whose answer was lost: %v, want it kept", err)
	}
	cut("agent lease renewal")
	if _, err := other.HoldAgent(ctx, agent, "host-b"); !errors.Is(err, state.ErrLeaseHeld) {
		t.Fatalf("another host's take while host-a keeps it: %v, want ErrLeaseHeld", err)
	}
	if who, err := other.AgentHolder(ctx, agent); err != nil || who != "host-a" {
		t.Fatalf("the agent's holder reads %q, %v; want host-a", who, err)
	}
	if err := le.Release(ctx); err != nil {
		t.Fatal(err)
	}
	w := state.Worker{Name: "w1", Capacity: 2, Running: []string{}, LastSeen: time.Now()}
	lose("PUB $KV." + names.Workers + ".")
	reg, err := st.RegisterWorker(ctx, w)
	cut("worker registration")
	if err != nil {
		t.Fatalf("a worker's registration whose answer was lost: %v, want it registered", err)
	}
	w.Running = []string{agent}
	lose("PUB $KV." + names.Workers + ".")
	if err := reg.Renew(ctx, w); err != nil {
		t.Fatalf("a worker's renewal whose answer was lost: %v, want it kept", err)
	}
	cut("worker renewal")
	if ws, err := other.Workers(); err != nil || len(ws) != 1 || ws[0].Name != "w1" || len(ws[0].Running) != 1 {
		t.Fatalf("the workers read %+v, %v; want w1 running %s", ws, err, agent)
	}
	if _, err := other.RegisterWorker(ctx, w); !errors.Is(err, state.ErrConflict) {
		t.Fatalf("a second worker w1: %v, want ErrConflict", err)
	}
	if err := reg.Release(ctx); err != nil {
		t.Fatal(err)
	}

	lose("PUB " + names.TranscriptPrefix + agent)
	if err := st.AppendTranscript(agent, map[string]string{"turn": "1"}, map[string]string{"turn": "2"}); err != nil {
		t.Fatalf("a transcript append whose answer was lost: %v", err)
	}
	cut("transcript")
	lose("PUB " + names.ReplyPrefix + agent)
	if err := st.AppendReply(agent, map[string]string{"piece": "1"}); err != nil {
		t.Fatalf("a reply piece whose answer was lost: %v", err)
	}
	cut("reply")
	usd := 0.25
	lose("PUB " + names.CostSubject)
	if err := st.AppendCost(cost.Entry{At: time.Now(), Agent: agent, Runtime: "llm", Turns: 1, USD: &usd}); err != nil {
		t.Fatalf("a cost entry whose answer was lost: %v", err)
	}
	cut("cost")

	count := func(read func(string, int64, func(json.RawMessage, int64) error) (int64, error)) int {
		n := 0
		if _, err := read(agent, 0, func(json.RawMessage, int64) error { n++; return nil }); err != nil {
			t.Fatal(err)
		}
		return n
	}
	if n := count(other.ReadTranscript); n != 2 {
		t.Errorf("the transcript holds %d entries, want 2", n)
	}
	if n := count(other.ReadReplies); n != 1 {
		t.Errorf("the reply stream holds %d pieces, want 1", n)
	}
	total, n := 0.0, 0
	if err := other.Costs(time.Time{}, func(e cost.Entry) error { n++; total += *e.USD; return nil }); err != nil {
		t.Fatal(err)
	}
	if n != 1 || total != usd {
		t.Errorf("the ledger holds %d entries costing $%.2f, want the one of $%.2f", n, total, usd)
	}
}

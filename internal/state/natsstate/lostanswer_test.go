package natsstate_test

import (
	"context"
	"encoding/json"
	"testing"
	"time"

	"github.com/plasmodium/pm/internal/cost"
	"github.com/plasmodium/pm/internal/hub/hubtest"
	"github.com/plasmodium/pm/internal/natsx"
	"github.com/plasmodium/pm/internal/state/natsstate"
)

// Requests whose answers are lost (the connection cut right after the
// request reached the hub, as when a node goes) are repeated and
// recognised: a design's run lock taken by the lost attempt is this
// process's, not "held by another"; an agent-log append (a transcript
// entry, a reply piece, a cost entry) is stored once, not failed, not
// twice (a cost counted twice would be a wrong bill).
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

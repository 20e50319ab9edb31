package natsstate_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/plasmodium/pm/internal/cost"
	"github.com/plasmodium/pm/internal/hub/hubtest"
	"github.com/plasmodium/pm/internal/ids"
	"github.com/plasmodium/pm/internal/natsx"
	"github.com/plasmodium/pm/internal/natsx/lease"
	"github.com/plasmodium/pm/internal/state"
	"github.com/plasmodium/pm/internal/state/natsstate"
)

// leaderOf is the index of the running node leading stream (-1: none
// now, an election under way).
func leaderOf(h *hubtest.Hubs, stream string) int {
	for i, n := range h.Nodes {
		if n != nil && n.Server().JetStreamIsStreamLeader("$G", stream) {
			return i
		}
	}
	return -1
}

// stepDown asks stream's leader to step down (the cluster elects another
// among the replicas).
func stepDown(t *testing.T, c *natsx.Conn, stream string) {
	t.Helper()
	resp, err := c.NC.Request("$JS.API.STREAM.LEADER.STEPDOWN."+stream, nil, natsx.OpTimeout)
	if err != nil {
		t.Logf("step down %s: %v", stream, err)
		return
	}
	var r struct {
		Success bool `json:"success"`
		Error   any  `json:"error"`
	}
	if json.Unmarshal(resp.Data, &r) != nil || !r.Success {
		t.Logf("step down %s: %s", stream, resp.Data)
	}
}

// TestRequestsRideOutLeaderChanges: writers on each node of a three-node
// cluster (a connection each) say into a room, update a record by
// compare-and-set (a counter: an update applied twice would show), post to
// a mailbox, append to their agent's transcript and to the cost ledger,
// and read, while each connection's host keeps an agent's lease (renewed
// by lease.Keep, which fences on a loss), and while the leaders of the
// rooms' stream, the records' bucket, the locks', the agents' leases'
// bucket, the transcripts' and the ledger's streams are stepped down, and
// the records' node stopped and started again, round after round. Not one
// command fails and no lease is lost; the room holds every acknowledged
// say once, the counter every acknowledged update once, the mailbox every
// acknowledged post once, each transcript its acknowledged entries once,
// the ledger every acknowledged cost once. Measured before natsstate's
// requests went through natsx.Do: a leader change failed some of them
// (context deadline exceeded, JetStream temporarily unavailable).
func TestRequestsRideOutLeaderChanges(t *testing.T) {
	if testing.Short() {
		t.Skip("a three-node cluster's leaders changed several times: slow")
	}
	h := hubtest.Three(t)
	ctx, cancel := context.WithTimeout(context.Background(), 8*time.Minute)
	defer cancel()
	const project, agent, rounds, perWriter = "ride", "oak_0001", 3, 40
	names, err := natsx.ProjectNames(project)
	if err != nil {
		t.Fatal(err)
	}
	records := natsx.KVStream(names.Records)
	var sts []*natsstate.State
	for i := range 3 {
		st, err := natsstate.Open(ctx, h.Connect(i), project)
		if err != nil {
			t.Fatal(err)
		}
		// Renewed every 10 s, a loss past 24 s unanswered: an election
		// takes less, even under -race on a loaded machine; a renewal
		// refused (one of its own, landed unanswered, not recognised)
		// would be a loss at once.
		st.LeaseTTLWanted = 30 * time.Second
		sts = append(sts, st)
	}
	st := sts[0]
	var tk *state.Task
	if err := st.WithTasks(func() error {
		tk, err = st.CreateTask(func(id string) (*state.Task, []byte, error) {
			return &state.Task{ID: id, Description: "ride", Owner: agent, Status: state.TaskActive, BlockedBy: []string{}}, nil, nil
		})
		return err
	}); err != nil {
		t.Fatal(err)
	}
	ph, err := st.CreatePhase(tk.ID, func(_ *state.Task, _ []*state.Phase, id string) (*state.Phase, error) {
		return &state.Phase{ID: id, TaskID: tk.ID, Name: "p", MessageLimit: 100000, Roles: []string{}, Status: state.PhaseActive}, nil
	}, nil)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := st.CreateAgent(&state.Agent{Name: agent, Status: state.AgentPending}); err != nil {
		t.Fatal(err)
	}

	var failed []string
	var mu sync.Mutex
	fail := func(what string, err error) {
		mu.Lock()
		failed = append(failed, fmt.Sprintf("%s: %v", what, err))
		mu.Unlock()
	}
	// Each connection's host holds an agent's lease all along.
	for i, ws := range sts {
		host := fmt.Sprintf("elm_%04x", 0x100+i)
		le, err := ws.HoldAgent(ctx, host, fmt.Sprintf("host %d", i))
		if err != nil {
			t.Fatal(err)
		}
		kept := lease.Keep(ctx, ws.LeaseTTL(), le.Renew, lease.KeepOptions{
			IsLost: func(err error) bool { return errors.Is(err, state.ErrLeaseLost) },
			OnLoss: func(why error) { fail(host+"'s lease", why) },
			Warn:   func(err error) { t.Logf("%s's renewal: %v (again at the next)", host, err) },
		})
		defer kept.Stop()
	}

	// The disruptions, one after another, round after round; the writers
	// go on until they are over (and each has done perWriter commands).
	streams := append(names.Streams(), natsx.KVStream(names.Agents))
	disrupted := make(chan struct{})
	go func() {
		defer close(disrupted)
		ctl := h.Connect(0)
		for r := range rounds {
			for _, stream := range []string{names.Rooms, records, natsx.KVStream(names.Locks), natsx.KVStream(names.Agents),
				names.Transcripts, names.Costs} {
				stepDown(t, ctl, stream)
			}
			// Stop the node leading the records (another, if it leads
			// nothing now), then start it again and let it catch up.
			i := leaderOf(h, records)
			if i < 0 {
				i = r % 3
			}
			// Every stream the test writes is current again before the
			// next round: one node lost at a time, never two replicas.
			h.Stop(i)
			h.WaitCurrent(ctx, streams...)
			h.Start(i)
			h.WaitCurrent(ctx, streams...)
		}
	}()

	var said, updated, posted, costs atomic.Int64
	logged := make([][]atomic.Int64, len(sts)) // acknowledged transcript entries, per writer
	saidIDs := sync.Map{}
	var wg sync.WaitGroup
	for w, ws := range sts {
		logged[w] = make([]atomic.Int64, 2)
		for k := range 2 {
			wg.Add(1)
			go func() {
				defer wg.Done()
				for n := 0; n < 10*perWriter; n++ {
					select {
					case <-disrupted:
						if n >= perWriter {
							return
						}
					default:
					}
					who := fmt.Sprintf("writer %d.%d command %d", w, k, n)
					m := state.Message{ID: ids.Default.New(ids.Message), PhaseID: ph.ID, Author: agent, Content: who}
					if err := ws.WithPhase(tk.ID, ph.ID, func(tx state.RoomTx) error { return tx.Append(m) }); err != nil {
						fail(who+": say", err)
					} else {
						said.Add(1)
						saidIDs.Store(m.ID, true)
					}
					if _, err := ws.UpdateAgent(agent, func(a *state.Agent) error { a.Restarts++; return nil }); err != nil {
						fail(who+": update", err)
					} else {
						updated.Add(1)
					}
					if err := ws.Post(agent, map[string]string{"who": who}); err != nil {
						fail(who+": post", err)
					} else {
						posted.Add(1)
					}
					if err := ws.AppendTranscript(writerAgent(w, k), map[string]string{"who": who}); err != nil {
						fail(who+": transcript", err)
					} else {
						logged[w][k].Add(1)
					}
					usd := 1.0
					if err := ws.AppendCost(cost.Entry{At: time.Now(), Agent: agent, Runtime: "llm", Turns: 1, USD: &usd, Task: who}); err != nil {
						fail(who+": cost", err)
					} else {
						costs.Add(1)
					}
					if _, err := ws.Task(tk.ID); err != nil {
						fail(who+": read the task", err)
					}
					if _, err := ws.MessageCount(tk.ID, ph.ID); err != nil {
						fail(who+": count the room", err)
					}
				}
			}()
		}
	}
	wg.Wait()
	<-disrupted
	for _, f := range failed {
		t.Error(f)
	}
	t.Logf("%d says, %d updates, %d posts, %d transcript entries, %d costs acknowledged across %d rounds of leader changes; %d failed",
		said.Load(), updated.Load(), posted.Load(), transcribed(logged), costs.Load(), rounds, len(failed))

	// Every acknowledged write is there once.
	h.WaitCurrent(ctx, names.Rooms, records)
	msgs, err := st.Messages(tk.ID, ph.ID)
	if err != nil {
		t.Fatal(err)
	}
	seen := map[string]bool{}
	for _, m := range msgs {
		if seen[m.ID] {
			t.Errorf("message %s stored twice", m.ID)
		}
		seen[m.ID] = true
	}
	saidIDs.Range(func(k, _ any) bool {
		if !seen[k.(string)] {
			t.Errorf("acknowledged say %s not in the room", k)
		}
		return true
	})
	a, err := st.Agent(agent)
	if err != nil {
		t.Fatal(err)
	}
	if int64(a.Restarts) != updated.Load() {
		t.Errorf("the counter is %d after %d acknowledged updates (an update lost or applied twice)", a.Restarts, updated.Load())
	}
	entries := 0
	if _, err := st.ReadMailbox(agent, 0, func(json.RawMessage, int64) error { entries++; return nil }); err != nil {
		t.Fatal(err)
	}
	if int64(entries) != posted.Load() {
		t.Errorf("the mailbox holds %d entries after %d acknowledged posts", entries, posted.Load())
	}
	for w := range logged {
		for k := range logged[w] {
			whos := map[string]int{}
			if _, err := st.ReadTranscript(writerAgent(w, k), 0, func(raw json.RawMessage, _ int64) error {
				var e struct{ Who string }
				if err := json.Unmarshal(raw, &e); err != nil {
					return err
				}
				whos[e.Who]++
				if whos[e.Who] > 1 {
					t.Errorf("%s's transcript holds %q twice", writerAgent(w, k), e.Who)
				}
				return nil
			}); err != nil {
				t.Fatal(err)
			}
			if int64(len(whos)) != logged[w][k].Load() {
				t.Errorf("%s's transcript holds %d entries after %d acknowledged appends", writerAgent(w, k), len(whos), logged[w][k].Load())
			}
		}
	}
	n, total := 0, 0.0
	if err := st.Costs(time.Time{}, func(e cost.Entry) error { n++; total += *e.USD; return nil }); err != nil {
		t.Fatal(err)
	}
	if int64(n) != costs.Load() || total != float64(costs.Load()) {
		t.Errorf("the ledger holds %d entries costing $%.0f after %d acknowledged costs of $1", n, total, costs.Load())
	}
}

// writerAgent is the agent whose transcript writer w.k appends to.
func writerAgent(w, k int) string { return fmt.Sprintf("elm_%04x", w*2+k+1) }

// transcribed is how many transcript appends were acknowledged in all.
func transcribed(logged [][]atomic.Int64) int64 {
	n := int64(0)
	for _, l := range logged {
		for i := range l {
			n += l[i].Load()
		}
	}
	return n
}

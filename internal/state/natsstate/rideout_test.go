package natsstate_test

import (
	"context"
	"encoding/json"
	"fmt"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/plasmodium/pm/internal/hub/hubtest"
	"github.com/plasmodium/pm/internal/ids"
	"github.com/plasmodium/pm/internal/natsx"
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
// a mailbox and read, while the leaders of the rooms' stream and of the
// records' bucket are stepped down, and their nodes stopped and started
// again, round after round. Not one command fails; the room holds every
// acknowledged say once, the counter every acknowledged update once, the
// mailbox every acknowledged post once. Measured before natsstate's
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

	// The disruptions, one after another, round after round; the writers
	// go on until they are over (and each has done perWriter commands).
	disrupted := make(chan struct{})
	go func() {
		defer close(disrupted)
		ctl := h.Connect(0)
		for r := range rounds {
			for _, stream := range []string{names.Rooms, records, natsx.KVStream(names.Locks)} {
				stepDown(t, ctl, stream)
			}
			// Stop the node leading the records (another, if it leads
			// nothing now), then start it again and let it catch up.
			i := leaderOf(h, records)
			if i < 0 {
				i = r % 3
			}
			h.Stop(i)
			h.WaitCurrent(ctx, names.Rooms, records)
			h.Start(i)
			h.WaitCurrent(ctx, names.Rooms, records)
		}
	}()

	var failed []string
	var mu sync.Mutex
	fail := func(what string, err error) {
		mu.Lock()
		failed = append(failed, fmt.Sprintf("%s: %v", what, err))
		mu.Unlock()
	}
	var said, updated, posted atomic.Int64
	saidIDs := sync.Map{}
	var wg sync.WaitGroup
	for w, ws := range sts {
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
	t.Logf("%d says, %d updates, %d posts acknowledged across %d rounds of leader changes; %d failed", said.Load(), updated.Load(), posted.Load(), rounds, len(failed))

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
}

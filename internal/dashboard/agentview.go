package dashboard

import (
	"context"
	"maps"
	"slices"
	"strings"
	"sync"

	"github.com/plasmodium/pm/internal/bus"
	"github.com/plasmodium/pm/internal/ops"
	"github.com/plasmodium/pm/internal/state"
	"github.com/plasmodium/pm/internal/store"
)

// agentView keeps the agent records a snapshot shows, so /api/state does not
// read and decode every agent.json (10,000 finished agents cost most of a
// snapshot's 170 ms). The rule is the supervisor's (supervisor/scope.go): a
// finished agent changes only with an event naming it, so each snapshot
// re-reads the agents that were live at the last one and those the bus named
// since, and keeps the rest. A snapshot first waits until the view's
// follower has seen the bus up to the snapshot's own cursor, so nothing
// before that cursor is missed; a pm reset, or a follower that stopped,
// means reading every record again.
type agentView struct {
	mu      sync.Mutex
	moved   chan struct{} // closed and replaced each time at moves
	at      bus.Cursor    // the follower has seen every event before it
	dirty   map[string]bool
	rescan  bool
	stopped bool
	recs    map[string]*store.Agent // nil until the first full read
}

// newAgentView follows b from from (the bus's end when the server opened)
// until ctx ends.
func newAgentView(ctx context.Context, b bus.Bus, from bus.Cursor) *agentView {
	v := &agentView{moved: make(chan struct{}), at: from, dirty: map[string]bool{}}
	go v.follow(ctx, b, from)
	return v
}

func (v *agentView) follow(ctx context.Context, b bus.Bus, from bus.Cursor) {
	defer func() {
		v.mu.Lock()
		v.stopped = true
		close(v.moved)
		v.moved = make(chan struct{})
		v.mu.Unlock()
	}()
	for d, err := range b.Subscribe(ctx, from) {
		if err != nil {
			return
		}
		v.mu.Lock()
		switch {
		case d.Event.Kind == bus.EvReset:
			v.rescan = true
		case d.Event.Agent != "":
			v.dirty[d.Event.Agent] = true
		}
		v.at = d.Next
		close(v.moved)
		v.moved = make(chan struct{})
		v.mu.Unlock()
	}
}

// list is ops.Agents for a snapshot taken at cursor.
func (v *agentView) list(ctx context.Context, st state.Agents, cursor bus.Cursor, all bool) (ops.AgentsResult, error) {
	if err := v.waitFor(ctx, cursor); err != nil {
		return ops.AgentsResult{}, err
	}
	v.mu.Lock()
	defer v.mu.Unlock()
	if v.stopped || v.rescan || v.recs == nil {
		recs, err := st.Agents()
		if err != nil {
			return ops.AgentsResult{}, err
		}
		v.recs, v.rescan, v.dirty = map[string]*store.Agent{}, false, map[string]bool{}
		for _, a := range recs {
			v.recs[a.Name] = a
		}
	} else {
		for name, a := range v.recs {
			if live(a) {
				v.dirty[name] = true
			}
		}
		for name := range v.dirty {
			a, err := st.Agent(name)
			if err != nil {
				delete(v.recs, name) // gone (or unreadable: ops.Agents skips those too)
				continue
			}
			v.recs[name] = a
		}
		v.dirty = map[string]bool{}
	}
	return classify(v.recs, all), nil
}

// waitFor returns once the follower has seen the bus up to cursor, or can
// no longer get there (stopped, or a reset moved the bus to a new file).
func (v *agentView) waitFor(ctx context.Context, cursor bus.Cursor) error {
	for {
		v.mu.Lock()
		done := v.at.Reached(cursor) || v.stopped || v.rescan
		moved := v.moved
		v.mu.Unlock()
		if done {
			return nil
		}
		select {
		case <-moved:
		case <-ctx.Done():
			return ctx.Err()
		}
	}
}

// live: an agent whose record may change without an event naming it first
// (its usage, its activity, its process dying).
func live(a *store.Agent) bool {
	return a.Status == store.AgentRunning || a.Status == store.AgentPending || a.Status == store.AgentDead
}

// classify sorts records as ops.Agents does (ops.ClassifyAgents), on
// copies: the view's own records are never handed out.
func classify(recs map[string]*store.Agent, all bool) ops.AgentsResult {
	sorted := sortedAgents(recs)
	for i, rec := range sorted {
		a := *rec
		sorted[i] = &a
	}
	return ops.ClassifyAgents(sorted, all)
}

// sortedAgents is recs oldest first, as the store lists them.
func sortedAgents(recs map[string]*store.Agent) []*store.Agent {
	out := slices.Collect(maps.Values(recs))
	slices.SortFunc(out, func(a, b *store.Agent) int {
		if c := a.CreatedAt.Compare(b.CreatedAt); c != 0 {
			return c
		}
		return strings.Compare(a.Name, b.Name)
	})
	return out
}

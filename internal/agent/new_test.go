package agent_test

import (
	"bytes"
	"testing"
	"time"

	"github.com/plasmodium/pm/internal/agent"
	"github.com/plasmodium/pm/internal/ids"
	"github.com/plasmodium/pm/internal/state"
	"github.com/plasmodium/pm/internal/state/fsstate"
	"github.com/plasmodium/pm/internal/state/memstate"
	"github.com/plasmodium/pm/internal/store"
)

// A fresh agent's name is one no agent has and whose mailbox is empty: a
// message posted to a name before any agent had it (an agent may post to
// any well-formed name) never reaches the agent that later gets the name.
// The same on every backend: the check is made through state.State.
func TestNewSkipsANameWithMail(t *testing.T) {
	seq := []byte{1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12}
	for _, c := range []struct {
		name string
		st   func(s *store.Store) state.State
	}{
		{"fs", func(s *store.Store) state.State { return fsstate.New(s) }},
		{"mem", func(*store.Store) state.State { return memstate.New() }},
	} {
		t.Run(c.name, func(t *testing.T) {
			root, _, err := store.Init(t.TempDir(), time.Now)
			if err != nil {
				t.Fatal(err)
			}
			s, err := store.Open(root)
			if err != nil {
				t.Fatal(err)
			}
			st := c.st(s)
			first := ids.Source{Rand: bytes.NewReader(seq)}.AgentName()
			if err := st.Post(first, map[string]string{"text": "planted"}); err != nil {
				t.Fatal(err)
			}
			s.IDs = ids.Source{Rand: bytes.NewReader(seq)}
			a, err := agent.New(s, st, store.Agent{Prompt: "owner"})
			if err != nil {
				t.Fatal(err)
			}
			if a.Name == first {
				t.Fatalf("the new agent got %s, whose mailbox held a message already", first)
			}
			if end, err := st.MailboxEnd(a.Name); err != nil || end != 0 {
				t.Fatalf("the new agent's mailbox ends at %d (%v)", end, err)
			}
			if got, err := st.Agent(a.Name); err != nil || got.Status != store.AgentPending {
				t.Fatalf("record %+v, %v", got, err)
			}
			if _, err := st.Agent(first); err == nil {
				t.Fatalf("an agent %s was recorded", first)
			}
		})
	}
}

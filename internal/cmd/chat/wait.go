package chat

import (
	"encoding/json"
	"path/filepath"

	"github.com/plasmodium/pm/internal/cmdutil"
	"github.com/plasmodium/pm/internal/errs"
	"github.com/plasmodium/pm/internal/jsonl"
	"github.com/plasmodium/pm/internal/lockedfile"
	"github.com/plasmodium/pm/internal/store"
	"github.com/plasmodium/pm/internal/watch"
)

// seen is agents/NAME/seen.json: how many messages of each phase the agent
// has been shown, so --wait prints only what is new to it.
type seen map[string]int

func seenPath(s *store.Store, actor store.Actor) string {
	return filepath.Join(s.AgentDir(actor.Name), "seen.json")
}

func loadSeen(s *store.Store, actor store.Actor) seen {
	out := seen{}
	if actor.IsHuman() {
		return out
	}
	_ = lockedfile.ReadJSON(seenPath(s, actor), &out)
	return out
}

func markSeen(s *store.Store, actor store.Actor, ph *store.Phase, n int) {
	if actor.IsHuman() {
		return
	}
	_, _ = lockedfile.Update(seenPath(s, actor), true, func(v *seen) error {
		if *v == nil {
			*v = seen{}
		}
		if n > (*v)[ph.ID] {
			(*v)[ph.ID] = n
		}
		return nil
	})
}

// wait blocks until the phase holds a message from someone else that the
// actor has not been shown, prints every unseen message and returns. The
// human has no record, so for it "unseen" starts now.
func wait(f *cmdutil.Factory, s *store.Store, actor store.Actor, ph *store.Phase, o Options) error {
	path := s.MessagesPath(ph.TaskID, ph.ID)
	from := loadSeen(s, actor)[ph.ID]
	if actor.IsHuman() {
		n, err := jsonl.Count(path)
		if err != nil {
			return err
		}
		from = n
	}
	var fresh [][]byte
	count := 0
	r := &jsonl.Reader{Path: path, Bad: s.BadLine}
	collect := func(raw []byte) error {
		count++
		if count > from {
			fresh = append(fresh, raw)
		}
		return nil
	}
	closedEarly := false
	ready := func() (bool, error) {
		for _, raw := range fresh {
			var m store.Message
			if json.Unmarshal(raw, &m) == nil && m.Author != actor.Name {
				return true, nil
			}
		}
		p, err := s.Phase(ph.TaskID, ph.ID)
		if err != nil {
			return false, err
		}
		if p.Status != store.PhaseActive {
			*ph, closedEarly = *p, true
			return true, nil
		}
		return false, nil
	}
	if err := watch.Lines(f.Context, r, collect, ready); err != nil {
		return err
	}
	for _, raw := range fresh {
		if err := printRaw(f, o.JSON, raw); err != nil {
			return err
		}
	}
	markSeen(s, actor, ph, count)
	if closedEarly {
		var others bool
		for _, raw := range fresh {
			var m store.Message
			if json.Unmarshal(raw, &m) == nil && m.Author != actor.Name {
				others = true
			}
		}
		if !others {
			return errs.Statef("leave the room: your part in this phase is over", "phase %s is closed (%s)", ph.ID, ph.CloseReason)
		}
	}
	return nil
}

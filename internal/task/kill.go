package task

import (
	"time"

	"github.com/plasmodium/pm/internal/agent"
	"github.com/plasmodium/pm/internal/errs"
	"github.com/plasmodium/pm/internal/phase"
	"github.com/plasmodium/pm/internal/store"
)

// KillGrace is how long an agent gets between SIGTERM and SIGKILL.
const KillGrace = 3 * time.Second

// KillResult says what pm kill did.
type KillResult struct {
	Tasks     []string    `json:"tasks"`  // tasks marked killed
	Agents    []string    `json:"agents"` // agents whose processes were ended or marked
	Restarted *store.Task `json:"restarted,omitempty"`
	NewOwner  string      `json:"new_owner,omitempty"`
}

// Kill ends every agent process of the task and its descendants, closes their
// active phases and marks the unfinished tasks killed. With restart the task
// is made live again with a fresh owner and the same description.
func Kill(s *store.Store, l *agent.Launcher, actor store.Actor, taskID string, restart bool) (*KillResult, error) {
	root, err := s.Task(taskID)
	if err != nil {
		return nil, err
	}
	tree, err := descendants(s, root)
	if err != nil {
		return nil, err
	}
	inTree := map[string]bool{}
	for _, t := range tree {
		inTree[t.ID] = true
	}
	res := &KillResult{Tasks: []string{}, Agents: []string{}}
	agents, err := s.Agents()
	if err != nil {
		return nil, err
	}
	for _, a := range agents {
		if !inTree[a.TaskID] || (a.Status != store.AgentRunning && a.Status != store.AgentPending) {
			continue
		}
		if err := agent.Kill(s, actor, a.Name, KillGrace); err != nil {
			return res, err
		}
		res.Agents = append(res.Agents, a.Name)
	}
	now := s.Now().UTC()
	for _, t := range tree {
		if ph, _ := s.ActivePhase(t.ID); ph != nil {
			_, _ = phase.Close(s, actor, t.ID, ph.ID, store.CloseKilled)
		}
		if t.Status == store.TaskDone {
			continue
		}
		if _, err := s.UpdateTask(t.ID, func(x *store.Task) error {
			if x.Status != store.TaskDone {
				x.Status, x.EndedAt = store.TaskKilled, &now
			}
			return nil
		}); err != nil {
			return res, err
		}
		res.Tasks = append(res.Tasks, t.ID)
		_ = s.Emit(store.Event{Kind: store.EvTaskKilled, Actor: actor.Name, TaskID: t.ID, Text: t.Description})
	}
	if restart {
		t, owner, err := Restart(s, l, actor, root.ID)
		if err != nil {
			return res, err
		}
		res.Restarted, res.NewOwner = t, owner
	}
	return res, nil
}

// Restart gives a killed task a fresh owner with the same description.
func Restart(s *store.Store, l *agent.Launcher, actor store.Actor, taskID string) (*store.Task, string, error) {
	old, err := s.Task(taskID)
	if err != nil {
		return nil, "", err
	}
	if old.Status != store.TaskKilled {
		return nil, "", errs.Statef("only killed tasks restart", "task %s is %s", old.ID, old.Status)
	}
	owner, err := agent.New(s, store.Agent{Prompt: "owner", TaskID: old.ID, Runtime: old.Runtime, Model: old.Model})
	if err != nil {
		return nil, "", err
	}
	t, err := s.UpdateTask(old.ID, func(x *store.Task) error {
		x.Owner, x.EndedAt = owner.Name, nil
		x.Status = store.TaskActive
		if len(x.BlockedBy) > 0 {
			x.Status = store.TaskBlocked
		}
		return nil
	})
	if err != nil {
		return nil, "", err
	}
	_ = s.Emit(store.Event{Kind: store.EvTaskRestarted, Actor: actor.Name, TaskID: t.ID, Agent: owner.Name, Text: t.Description})
	if t.Status == store.TaskActive {
		if err := l.Start(owner.Name); err != nil {
			return t, owner.Name, err
		}
	}
	return t, owner.Name, nil
}

// descendants returns root and every task below it, parents first.
func descendants(s *store.Store, root *store.Task) ([]*store.Task, error) {
	out := []*store.Task{root}
	for i := 0; i < len(out); i++ {
		for _, c := range out[i].Children {
			ct, err := s.Task(c)
			if err != nil {
				if errs.Is(err, errs.NotFound) {
					continue
				}
				return nil, err
			}
			out = append(out, ct)
		}
	}
	return out, nil
}

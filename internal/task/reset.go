package task

import (
	"github.com/plasmodium/pm/internal/agent"
	"github.com/plasmodium/pm/internal/bus"
	"github.com/plasmodium/pm/internal/errs"
	"github.com/plasmodium/pm/internal/store"
)

// ResetResult says what pm reset removed.
type ResetResult struct {
	Killed []string
	Tasks  int
}

// Reset kills every running agent, then deletes all state but config.json and
// prompts/. Without force it refuses while tasks are live.
func Reset(s *store.Store, actor store.Actor, force bool) (*ResetResult, error) {
	tasks, err := s.Tasks()
	if err != nil {
		return nil, err
	}
	live := 0
	for _, t := range tasks {
		if t.Live() {
			live++
		}
	}
	if live > 0 && !force {
		return nil, errs.Statef("pm reset --force kills their agents and deletes everything", "%d tasks are still active or blocked", live)
	}
	res := &ResetResult{Tasks: len(tasks)}
	agents, err := s.Agents()
	if err != nil {
		return nil, err
	}
	// Only the driver signals: a launcher on the store's process driver.
	l := &agent.Launcher{Store: s}
	for _, a := range agents {
		if a.Status == store.AgentRunning {
			if err := l.Kill(actor, a.Name); err != nil {
				return res, err
			}
			res.Killed = append(res.Killed, a.Name)
		}
	}
	if err := s.ResetState(); err != nil {
		return res, err
	}
	if err := s.Bus().Reset(); err != nil {
		return res, err
	}
	s.Notify(bus.Event{Kind: bus.EvReset, Actor: actor.Name, Data: map[string]any{"tasks": res.Tasks, "killed": res.Killed}})
	return res, nil
}

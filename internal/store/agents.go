package store

import (
	"os"
	"sort"

	"github.com/plasmodium/pm/internal/errs"
	"github.com/plasmodium/pm/internal/ids"
	"github.com/plasmodium/pm/internal/lockedfile"
)

// Agent reads one agent record.
func (s *Store) Agent(name string) (*Agent, error) {
	if !ids.ValidAgentName(name) {
		return nil, errs.Usagef("agent names look like cedar_a1b2; see 'pm agents'", "%q is not a valid agent name", name)
	}
	var a Agent
	if err := lockedfile.ReadJSON(s.AgentPath(name), &a); err != nil {
		return nil, notFound(err, "see 'pm agents' for the agents that exist", "no agent %s", name)
	}
	return &a, nil
}

// WriteAgent creates an agent record.
func (s *Store) WriteAgent(a *Agent) error {
	if err := os.MkdirAll(s.AgentDir(a.Name), 0o755); err != nil {
		return err
	}
	p := s.AgentPath(a.Name)
	return lockedfile.With(p, func() error { return lockedfile.WriteJSON(p, a) })
}

// UpdateAgent runs fn on the agent record under its lock.
func (s *Store) UpdateAgent(name string, fn func(a *Agent) error) (*Agent, error) {
	if _, err := s.Agent(name); err != nil {
		return nil, err
	}
	a, err := lockedfile.Update(s.AgentPath(name), false, fn)
	if err != nil {
		return nil, err
	}
	return &a, nil
}

// Agents reads every agent record, oldest first.
func (s *Store) Agents() ([]*Agent, error) {
	ents, err := os.ReadDir(s.AgentsDir())
	if err != nil {
		if os.IsNotExist(err) {
			return nil, nil
		}
		return nil, err
	}
	var out []*Agent
	for _, e := range ents {
		if !e.IsDir() || !ids.ValidAgentName(e.Name()) {
			continue
		}
		var a Agent
		if err := lockedfile.ReadJSON(s.AgentPath(e.Name()), &a); err != nil {
			if !os.IsNotExist(err) {
				s.Warnf("skipped agent %s: %v", e.Name(), err)
			}
			continue
		}
		out = append(out, &a)
	}
	sort.SliceStable(out, func(i, j int) bool { return out[i].CreatedAt.Before(out[j].CreatedAt) })
	return out, nil
}

package natsstate

import (
	"sort"
	"strconv"
	"strings"

	"github.com/plasmodium/pm/internal/ids"
	"github.com/plasmodium/pm/internal/natsx"
	"github.com/plasmodium/pm/internal/state"
)

// Seen marks: seen.AGENT.PHASE holds how many of the phase's messages the
// agent has been shown, moved forward only (compare-and-set), dropped with
// the agent (RemoveAgent).

func seenKey(agent, phaseID string) string { return "seen." + agent + "." + phaseID }

func (s *State) Seen(agent, phaseID string) int {
	if state.CheckName(agent) != nil || ids.Parse(ids.Phase, phaseID) != nil {
		return 0
	}
	b, _, err := s.get(seenKey(agent, phaseID))
	if err != nil || b == nil {
		return 0
	}
	n, _ := strconv.Atoi(string(b))
	return n
}

func (s *State) MarkSeen(agent, phaseID string, n int) {
	if state.CheckName(agent) != nil || ids.Parse(ids.Phase, phaseID) != nil {
		return
	}
	key := seenKey(agent, phaseID)
	for range 8 { // best effort: a lost race leaves the other's mark
		b, rev, err := s.get(key)
		if err != nil {
			return
		}
		if old, _ := strconv.Atoi(string(b)); b != nil && old >= n {
			return
		}
		if b == nil {
			_, err = s.createKey(key, []byte(strconv.Itoa(n)))
		} else {
			_, err = s.write(key, []byte(strconv.Itoa(n)), rev, false)
		}
		if err == nil {
			return
		}
	}
}

// dropSeen removes the agent's seen marks.
func (s *State) dropSeen(agent string) error {
	marks, err := s.list("seen." + agent + ".>")
	if err != nil {
		return err
	}
	for key := range marks {
		if _, err := s.write(key, nil, anyRev, true); err != nil {
			return err
		}
	}
	return nil
}

// Prompts: prompt.NAME holds a prompt object create_capability kept; no
// other kind is kept here, so every other sub holds none.

func promptWhere(name string) string { return "nats:prompt." + name }

func (s *State) PromptFiles(sub string, fn func(where string, data []byte) error) error {
	if sub != "" {
		return state.CheckName(sub)
	}
	all, err := s.list("prompt.>")
	if err != nil {
		return err
	}
	names := make([]string, 0, len(all))
	for key := range all {
		names = append(names, strings.TrimPrefix(key, "prompt."))
	}
	sort.Strings(names)
	for _, n := range names {
		if err := fn(promptWhere(n), all["prompt."+n]); err != nil {
			return err
		}
	}
	return nil
}

func (s *State) CreatePrompt(name string, data []byte) (string, error) {
	if err := state.CheckName(name); err != nil {
		return "", err
	}
	ok, err := s.createKey("prompt."+name, data)
	if err != nil {
		return "", err
	}
	if !ok {
		return "", state.Errorf(state.ErrConflict, "pick another name", "a prompt object %q exists", name)
	}
	return promptWhere(name), nil
}

func (s *State) RemovePrompt(name string) error {
	if err := state.CheckName(name); err != nil {
		return err
	}
	for {
		b, rev, err := s.get("prompt." + name)
		if err != nil {
			return err
		}
		if b == nil {
			return notFound("see 'pm prompts'", "no prompt object %q", name)
		}
		_, err = s.write("prompt."+name, nil, rev, true)
		if !natsx.WrongLast(err) {
			return err
		}
		// Removed or written again since it was read: read again.
	}
}

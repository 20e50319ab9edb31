package store

import (
	"bytes"
	"encoding/json"
	"os"
	"sort"

	"github.com/plasmodium/pm/internal/errs"
	"github.com/plasmodium/pm/internal/ids"
	"github.com/plasmodium/pm/internal/jsonl"
	"github.com/plasmodium/pm/internal/lockedfile"
)

// Phase reads one phase of a task, its status as derived (settleRoom: a
// room whose log is full or whose task ended is closed, and phase.json is
// repaired to say so).
func (s *Store) Phase(taskID, phaseID string) (*Phase, error) {
	p, err := s.readPhase(taskID, phaseID)
	if err != nil {
		return nil, err
	}
	return s.settleRoom(p), nil
}

// readPhase reads phase.json as written (WithPhase derives under the lock).
func (s *Store) readPhase(taskID, phaseID string) (*Phase, error) {
	if err := ids.Parse(ids.Task, taskID); err != nil { // both ids become a path: check both
		return nil, errs.Usagef("task ids look like tk-a1b2c3; see 'pm status'", "%v", err)
	}
	if err := ids.Parse(ids.Phase, phaseID); err != nil {
		return nil, errs.Usagef("phase ids look like ph-a1b2c3; see 'pm status'", "%v", err)
	}
	var p Phase
	if err := lockedfile.ReadJSON(s.PhasePath(taskID, phaseID), &p); err != nil {
		return nil, notFound(err, "see 'pm status "+taskID+"' for its phases", "no phase %s in task %s", phaseID, taskID)
	}
	return &p, nil
}

// Phases reads every phase of a task, oldest first, each as Phase derives it.
func (s *Store) Phases(taskID string) ([]*Phase, error) {
	if err := ids.Parse(ids.Task, taskID); err != nil {
		return nil, errs.Usagef("task ids look like tk-a1b2c3; see 'pm status'", "%v", err)
	}
	ents, err := os.ReadDir(s.PhasesDir(taskID))
	if err != nil {
		if os.IsNotExist(err) {
			return nil, nil
		}
		return nil, err
	}
	var out []*Phase
	for _, e := range ents {
		if !e.IsDir() || ids.Parse(ids.Phase, e.Name()) != nil {
			continue
		}
		var p Phase
		if err := lockedfile.ReadJSON(s.PhasePath(taskID, e.Name()), &p); err != nil {
			if !os.IsNotExist(err) {
				s.Warnf("skipped phase %s: %v", e.Name(), err)
			}
			continue
		}
		out = append(out, s.settleRoom(&p))
	}
	sort.SliceStable(out, func(i, j int) bool { return out[i].CreatedAt.Before(out[j].CreatedAt) })
	return out, nil
}

// ActivePhase returns the task's active phase, or nil when there is none.
func (s *Store) ActivePhase(taskID string) (*Phase, error) {
	ps, err := s.Phases(taskID)
	if err != nil {
		return nil, err
	}
	for _, p := range ps {
		if p.Status == PhaseActive {
			return p, nil
		}
	}
	return nil, nil
}

// FindPhase locates a phase by id across all tasks: through the phase index
// (phaseindex.go), else by visiting every task, repairing the index.
func (s *Store) FindPhase(phaseID string) (*Phase, error) {
	if err := ids.Parse(ids.Phase, phaseID); err != nil {
		return nil, errs.Usagef("phase ids look like ph-a1b2c3; see 'pm status'", "%v", err)
	}
	if t := s.indexedTask(phaseID); t != "" {
		return s.Phase(t, phaseID)
	}
	taskIDs, err := s.TaskIDs()
	if err != nil {
		return nil, err
	}
	for _, t := range taskIDs {
		if _, err := os.Stat(s.PhaseDir(t, phaseID)); err == nil {
			ph, err := s.Phase(t, phaseID)
			if err == nil {
				s.indexPhase(t, phaseID)
			}
			return ph, err
		}
	}
	return nil, errs.NotFoundf("see 'pm status' for the phases that exist", "no phase %s", phaseID)
}

// Messages reads a phase's messages, skipping (and reporting) bad lines and
// JSON values that are not messages (no id), as MessageCount does.
func (s *Store) Messages(taskID, phaseID string) ([]Message, error) {
	all, err := jsonl.ReadAll[Message](s.MessagesPath(taskID, phaseID), s.BadLine)
	out := all[:0]
	for _, m := range all {
		if m.ID != "" {
			out = append(out, m)
		}
	}
	return out, err
}

// MessageCount counts the messages of a phase: valid lines that are messages
// (objects with an id). Torn lines and stray JSON values written by hand do
// not use up the room; this is the count message_limit is checked against.
// It reads the whole log, ignoring the count mark: it is the truth the mark
// is checked against.
func (s *Store) MessageCount(taskID, phaseID string) (int, error) {
	r := &jsonl.Reader{Path: s.MessagesPath(taskID, phaseID)}
	n := 0
	err := r.NextChecked(validLine, countMessage(&n))
	return n, err
}

// LastMessages is a phase's last n messages, oldest first (as Messages
// would end), and how many it holds (as MessageCount, from the count mark
// when it can be trusted), read backwards from the end: the cost follows n
// and what was appended since the mark, not the room's size.
func (s *Store) LastMessages(taskID, phaseID string, n int) ([]Message, int, error) {
	path := s.MessagesPath(taskID, phaseID)
	f, err := os.Open(path)
	if os.IsNotExist(err) {
		return nil, 0, nil
	}
	if err != nil {
		return nil, 0, err
	}
	defer f.Close()
	lines, _, err := jsonl.TailMatch(f, path, n, isMessage, s.BadLine)
	if err != nil {
		return nil, 0, err
	}
	msgs := make([]Message, 0, len(lines))
	for _, raw := range lines {
		var m Message
		if err := json.Unmarshal(raw, &m); err != nil {
			s.BadLine(jsonl.BadLine{Path: path, Reason: "line does not fit the record: " + err.Error()})
			continue
		}
		msgs = append(msgs, m)
	}
	count, _, err := s.countIn(taskID, phaseID, f)
	return msgs, count, err
}

// countMessage returns a line callback adding one to *n for each message.
func countMessage(n *int) func(raw []byte) error {
	return func(raw []byte) error {
		if isMessage(raw) {
			*n++
		}
		return nil
	}
}

// isMessage reports whether a valid JSON line is a message (has an id).
func isMessage(raw []byte) bool {
	// pm writes messages with their id first; the reader has already
	// checked the line is valid JSON, so that prefix settles it cheaply.
	// Anything else (hand-written) is decoded to look for an id.
	if bytes.HasPrefix(raw, []byte(`{"id":"`)) && !bytes.HasPrefix(raw, []byte(`{"id":""`)) {
		return true
	}
	var m struct {
		ID string `json:"id"`
	}
	return json.Unmarshal(raw, &m) == nil && m.ID != ""
}

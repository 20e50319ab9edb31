package memstate

import (
	"encoding/json"
	"time"

	"github.com/plasmodium/pm/internal/cost"
	"github.com/plasmodium/pm/internal/state"
)

// Agent logs (state.AgentLogs): entries kept encoded, a position the index
// of the next entry, as a mailbox's.
type agentLogs struct {
	transcripts map[string][][]byte
	replies     map[string][][]byte
	costs       []cost.Entry
}

func newAgentLogs() agentLogs {
	return agentLogs{transcripts: map[string][][]byte{}, replies: map[string][][]byte{}}
}

// forget drops agent's logs (RemoveAgent); the caller holds mu.
func (l *agentLogs) forget(agent string) {
	delete(l.transcripts, agent)
	delete(l.replies, agent)
}

func (m *Mem) AppendTranscript(agent string, entries ...any) error {
	return m.appendEntries(m.logs.transcripts, agent, entries...)
}

func (m *Mem) ReadTranscript(agent string, from int64, fn func(raw json.RawMessage, next int64) error) (int64, error) {
	return m.readEntries(m.logs.transcripts, agent, from, fn)
}

func (m *Mem) TranscriptEnd(agent string) (int64, error) {
	return m.entriesEnd(m.logs.transcripts, agent)
}

func (m *Mem) LastTranscript(agent string, n int, keep func(raw []byte) bool) ([]json.RawMessage, int, error) {
	if err := state.CheckName(agent); err != nil {
		return nil, 0, err
	}
	m.mu.Lock()
	all := m.logs.transcripts[agent]
	m.mu.Unlock()
	var last []json.RawMessage
	total := 0
	for _, raw := range all {
		if keep != nil && !keep(raw) {
			continue
		}
		total++
		if last = append(last, raw); len(last) > n {
			last = last[1:]
		}
	}
	return last, total, nil
}

func (m *Mem) AppendReply(agent string, v any) error {
	return m.appendEntries(m.logs.replies, agent, v)
}

func (m *Mem) ReadReplies(agent string, from int64, fn func(raw json.RawMessage, next int64) error) (int64, error) {
	return m.readEntries(m.logs.replies, agent, from, fn)
}

func (m *Mem) RepliesEnd(agent string) (int64, error) { return m.entriesEnd(m.logs.replies, agent) }

func (m *Mem) AppendCost(e cost.Entry) error {
	b, err := json.Marshal(e)
	if err != nil {
		return err
	}
	var kept cost.Entry
	if err := json.Unmarshal(b, &kept); err != nil { // as every backend keeps it: encoded
		return err
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	m.logs.costs = append(m.logs.costs, kept)
	return nil
}

func (m *Mem) Costs(since time.Time, fn func(e cost.Entry) error) error {
	m.mu.Lock()
	all := m.logs.costs
	m.mu.Unlock()
	for _, e := range all {
		if e.At.Before(since) {
			continue
		}
		if err := fn(e); err != nil {
			return err
		}
	}
	return nil
}

func (m *Mem) ReadCosts(from int64, fn func(e cost.Entry, next int64) error) (int64, error) {
	m.mu.Lock()
	all := m.logs.costs
	m.mu.Unlock()
	pos := from
	for ; pos >= 0 && pos < int64(len(all)); pos++ {
		if err := fn(all[pos], pos+1); err != nil {
			return pos + 1, err
		}
	}
	return max(pos, from), nil
}

func (m *Mem) appendEntries(logs map[string][][]byte, agent string, entries ...any) error {
	if err := state.CheckName(agent); err != nil {
		return err
	}
	enc := make([][]byte, len(entries))
	for i, e := range entries {
		b, err := state.FitEntry(e, 0)
		if err != nil {
			return err
		}
		enc[i] = b
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	logs[agent] = append(logs[agent], enc...)
	m.wrote()
	return nil
}

func (m *Mem) readEntries(logs map[string][][]byte, agent string, from int64, fn func(raw json.RawMessage, next int64) error) (int64, error) {
	if err := state.CheckName(agent); err != nil {
		return from, err
	}
	m.mu.Lock()
	entries := logs[agent]
	m.mu.Unlock()
	pos := from
	for ; pos >= 0 && pos < int64(len(entries)); pos++ {
		if err := fn(entries[pos], pos+1); err != nil {
			return pos + 1, err
		}
	}
	return max(pos, from), nil
}

func (m *Mem) entriesEnd(logs map[string][][]byte, agent string) (int64, error) {
	if err := state.CheckName(agent); err != nil {
		return 0, err
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	return int64(len(logs[agent])), nil
}

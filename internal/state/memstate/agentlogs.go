package memstate

import (
	"encoding/json"
	"time"

	"github.com/plasmodium/pm/internal/cost"
	"github.com/plasmodium/pm/internal/state"
)

// Agent logs (state.AgentLogs): entries kept encoded, a position the index
// of the next entry counted from the log's start, as a mailbox's; a cut
// (state.LogBounds) drops the oldest entries and counts them in cut, whose
// Entries is then the position of the first kept, so the positions
// readers hold keep their meaning.
type agentLogs struct {
	transcripts map[string]*entryLog
	replies     map[string]*entryLog
	costs       []cost.Entry
}

// entryLog is one agent's transcript or reply stream.
type entryLog struct {
	entries [][]byte
	bytes   int64     // what entries hold
	cut     state.Cut // cut.Entries: the position of entries[0]
	planAt  int64     // bytes to reach before planning a cut again (state.PlanAgainAt)
}

func newAgentLogs() agentLogs {
	return agentLogs{transcripts: map[string]*entryLog{}, replies: map[string]*entryLog{}}
}

// forget drops agent's logs (RemoveAgent); the caller holds mu.
func (l *agentLogs) forget(agent string) {
	delete(l.transcripts, agent)
	delete(l.replies, agent)
}

func (m *Mem) AppendTranscript(agent string, entries ...any) error {
	return m.appendEntries(state.LogTranscript, m.logs.transcripts, agent, entries...)
}

func (m *Mem) ReadTranscript(agent string, from int64, fn func(raw json.RawMessage, next int64) error) (int64, error) {
	return m.readEntries(state.LogTranscript, m.logs.transcripts, agent, from, fn)
}

func (m *Mem) TranscriptEnd(agent string) (int64, error) {
	return m.entriesEnd(m.logs.transcripts, agent)
}

func (m *Mem) LastTranscript(agent string, n int, keep func(raw []byte) bool) ([]json.RawMessage, int, error) {
	if err := state.CheckName(agent); err != nil {
		return nil, 0, err
	}
	var last []json.RawMessage
	total := 0
	_, err := m.readEntries(state.LogTranscript, m.logs.transcripts, agent, 0, func(raw json.RawMessage, _ int64) error {
		if keep != nil && !keep(raw) {
			return nil
		}
		total++
		if last = append(last, raw); len(last) > n {
			last = last[1:]
		}
		return nil
	})
	return last, total, err
}

func (m *Mem) AppendReply(agent string, v any) error {
	return m.appendEntries(state.LogReplies, m.logs.replies, agent, v)
}

func (m *Mem) ReadReplies(agent string, from int64, fn func(raw json.RawMessage, next int64) error) (int64, error) {
	return m.readEntries(state.LogReplies, m.logs.replies, agent, from, fn)
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

func (m *Mem) appendEntries(kind state.Log, logs map[string]*entryLog, agent string, entries ...any) error {
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
	l := logs[agent]
	if l == nil {
		l = &entryLog{}
		logs[agent] = l
	}
	l.entries = append(l.entries, enc...)
	for _, b := range enc {
		l.bytes += int64(len(b))
	}
	if bound := m.Bounds.Of(kind); l.bytes > bound && l.bytes >= l.planAt {
		l.cutTo(kind, bound)
	}
	m.wrote()
	return nil
}

// cutTo drops l's oldest entries so it holds at most state.LowWater of
// bound, where state.PlanCut says; the caller holds mu.
func (l *entryLog) cutTo(kind state.Log, bound int64) {
	plan := make([]state.Entry, len(l.entries))
	var prev []byte
	for i, b := range l.entries {
		plan[i] = state.Entry{Size: int64(len(b)), Kind: state.CutKind(kind, prev, b)}
		prev = b
	}
	n := state.PlanCut(plan, l.bytes, state.LowWater(bound))
	for _, b := range l.entries[:n] {
		l.bytes -= int64(len(b))
		l.cut.Bytes += int64(len(b))
	}
	l.cut.Entries += int64(n)
	if l.bytes > bound { // no valid cut takes it under: wait for more
		l.planAt = state.PlanAgainAt(l.bytes, bound)
	}
	if n > 0 {
		// A new slice: a reader holding the old one reads what it held.
		l.entries = append([][]byte(nil), l.entries[n:]...)
	}
}

// readEntries reads agent's log from position from: from 0 of a cut log,
// the mark first (next: the first kept entry's position); from a position
// in what was dropped, the first kept entry on.
func (m *Mem) readEntries(kind state.Log, logs map[string]*entryLog, agent string, from int64, fn func(raw json.RawMessage, next int64) error) (int64, error) {
	if err := state.CheckName(agent); err != nil {
		return from, err
	}
	m.mu.Lock()
	var l entryLog
	if p := logs[agent]; p != nil {
		l = *p
	}
	bound := m.Bounds.Of(kind)
	m.mu.Unlock()
	pos := from
	if from == 0 && l.cut.Entries > 0 {
		pos = l.cut.Entries
		if err := fn(state.MarkEntry(kind, l.cut, bound), pos); err != nil {
			return pos, err
		}
	}
	if pos < 0 {
		return from, nil
	}
	base := l.cut.Entries
	for i := max(pos-base, 0); i < int64(len(l.entries)); i++ {
		pos = base + i + 1
		if err := fn(l.entries[i], pos); err != nil {
			return pos, err
		}
	}
	return pos, nil
}

func (m *Mem) entriesEnd(logs map[string]*entryLog, agent string) (int64, error) {
	if err := state.CheckName(agent); err != nil {
		return 0, err
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	l := logs[agent]
	if l == nil {
		return 0, nil
	}
	return l.cut.Entries + int64(len(l.entries)), nil
}

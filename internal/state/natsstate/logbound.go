package natsstate

import (
	"context"
	"encoding/json"
	"sync"

	"github.com/nats-io/nats.go/jetstream"

	"github.com/plasmodium/pm/internal/natsx"
	"github.com/plasmodium/pm/internal/state"
)

// A transcript's or reply stream's total (state.LogBounds) on the hub.
//
// The stream's own means do the cut: a purge of the agent's subject up to
// a sequence (jetstream.WithPurgeSequence), so positions, which are
// stream sequences, need nothing to stay valid: a reader's position inside
// what was purged reads from the first kept entry, any other from where it
// was. What was dropped in all is the last message of the subject's cut
// subject (SUBJECT.cut; agent names hold no dot, so no agent's subject is
// one), {"entries","bytes","first"}: written before the purge, so a purge
// lost after it (the writer died) is made good by the reads, which start
// a read from 0 at first, and by the next cut's purge. A read from 0 gets
// it and hands on the mark first (one more request for such a read).
//
// The check after each append is on this process's count of the
// subject's bytes: read once from the stream on the process's first
// append to it, then added to by each append; over the bound, the cut
// reads the subject for its entries' sizes and where it may be cut, and
// the count is then the subject's exact bytes. A cut that leaves the
// subject over its bound (one step longer than the bound, which no valid
// cut makes smaller) is not planned again until the count reaches
// state.PlanAgainAt. Cuts of a subject run one at a time, each from what
// the one before left (a lock per subject: other agents' appends and cuts
// do not wait for it). An agent's logs have one writer, its host (its
// lease): another process's appends, were there any, would be counted at
// the next cut only.

// boundedLog is one agent's transcript or reply stream on the hub.
type boundedLog struct {
	kind                state.Log
	stream              jetstream.Stream
	subject, cutSubject string
}

func (s *State) boundedLog(kind state.Log, agent string) boundedLog {
	if kind == state.LogReplies {
		sub := s.names.ReplyPrefix + agent
		return boundedLog{kind, s.logs.replies, sub, sub + ".cut"}
	}
	sub := s.names.TranscriptPrefix + agent
	return boundedLog{kind, s.logs.transcripts, sub, sub + ".cut"}
}

// cutMark is the last message of a cut subject.
type cutMark struct {
	state.Cut
	First int64 `json:"first"` // the first kept entry's sequence
}

// subjectLog is what this process knows of a bounded log's subject.
type subjectLog struct {
	cutMu  sync.Mutex // held by a cut of the subject
	size   int64      // the subject's bytes, when known (under agentLogs.mu)
	known  bool
	planAt int64 // the size a cut is planned again at (0: at the bound)
}

// subjectOf is subject's subjectLog, made on first use.
func (s *State) subjectOf(subject string) *subjectLog {
	s.logs.mu.Lock()
	defer s.logs.mu.Unlock()
	sl := s.logs.subjects[subject]
	if sl == nil {
		if s.logs.subjects == nil {
			s.logs.subjects = map[string]*subjectLog{}
		}
		sl = &subjectLog{}
		s.logs.subjects[subject] = sl
	}
	return sl
}

// appendBounded publishes each entry to l's subject, cut to fit one entry
// (state.FitEntry, once), then keeps l to its bound.
func (s *State) appendBounded(l boundedLog, entries ...any) error {
	var added int64
	for _, e := range entries {
		b, err := state.FitEntry(e, s.EntryLimit)
		if err != nil {
			return err
		}
		if err := s.publishRaw(l.subject, b); err != nil {
			return err
		}
		added += int64(len(b))
	}
	return s.keepBound(l, added)
}

// keepBound counts added on l's subject and cuts it when over its bound
// and due a plan.
func (s *State) keepBound(l boundedLog, added int64) error {
	sl := s.subjectOf(l.subject)
	bound := s.Bounds.Of(l.kind)
	s.logs.mu.Lock()
	if sl.known {
		sl.size += added
	}
	due := !sl.known || (sl.size > bound && sl.size >= sl.planAt)
	s.logs.mu.Unlock()
	if !due {
		return nil
	}
	// This process's first append to the subject (its bytes, the new
	// ones in them, are read), or over the bound: one cut of the subject
	// at a time, each from what the one before left (a test found two at
	// once counted the same entries twice in the mark).
	sl.cutMu.Lock()
	defer sl.cutMu.Unlock()
	entries, mark, total, err := s.sizesOf(l)
	if err != nil {
		return err
	}
	return s.cutBounded(l, sl, bound, entries, mark, total)
}

// planned is an entry of a subject as a cut sees it.
type planned struct {
	state.Entry
	seq int64
}

// sizesOf reads l's subject from its first kept entry: each entry's size,
// where it may be cut, and its sequence; and the bytes in all.
func (s *State) sizesOf(l boundedLog) ([]planned, cutMark, int64, error) {
	mark, err := s.markOf(l)
	if err != nil {
		return nil, mark, 0, err
	}
	var (
		out   []planned
		prev  []byte
		total int64
	)
	err = s.c.ReadSubject(s.ctx, l.stream, l.subject, uint64(max(mark.First, 1)), func(m *jetstream.RawStreamMsg) error {
		out = append(out, planned{state.Entry{Size: int64(len(m.Data)), Kind: state.CutKind(l.kind, prev, m.Data)}, int64(m.Sequence)})
		prev, total = m.Data, total+int64(len(m.Data))
		return nil
	})
	return out, mark, total, err
}

// cutBounded purges l's oldest entries (state.PlanCut, down to
// state.LowWater of bound) when total is over bound, the mark (what mark,
// the last, says, and these) written first; the caller holds sl.cutMu.
func (s *State) cutBounded(l boundedLog, sl *subjectLog, bound int64, entries []planned, mark cutMark, total int64) error {
	if total <= bound {
		s.setSize(sl, total, bound)
		return nil
	}
	plan := make([]state.Entry, len(entries))
	for i, e := range entries {
		plan[i] = e.Entry
	}
	n := state.PlanCut(plan, total, state.LowWater(bound))
	if n == 0 {
		s.setSize(sl, total, bound)
		return nil
	}
	var dropped int64
	for _, e := range entries[:n] {
		dropped += e.Size
	}
	next := cutMark{Cut: state.Cut{Entries: mark.Entries + int64(n), Bytes: mark.Bytes + dropped}, First: entries[n].seq}
	b, err := json.Marshal(next)
	if err != nil {
		return err
	}
	if err := s.publishRaw(l.cutSubject, b); err != nil {
		return err
	}
	if err := s.do(func(op context.Context) error {
		return l.stream.Purge(op, jetstream.WithPurgeSubject(l.subject), jetstream.WithPurgeSequence(uint64(next.First)))
	}); err != nil {
		return err
	}
	if err := s.do(func(op context.Context) error { // the marks before this one
		return l.stream.Purge(op, jetstream.WithPurgeSubject(l.cutSubject), jetstream.WithPurgeKeep(1))
	}); err != nil {
		return err
	}
	s.setSize(sl, total-dropped, bound)
	return nil
}

// markOf is l's last cut mark (zero: never cut).
func (s *State) markOf(l boundedLog) (cutMark, error) {
	var mark cutMark
	m, err := natsx.Last(s.ctx, l.stream, l.cutSubject)
	if err != nil || m == nil {
		return mark, err
	}
	return mark, json.Unmarshal(m.Data, &mark)
}

// setSize counts size as sl's bytes, after a plan: over bound, the next
// plan waits for state.PlanAgainAt.
func (s *State) setSize(sl *subjectLog, size, bound int64) {
	s.logs.mu.Lock()
	defer s.logs.mu.Unlock()
	sl.size, sl.known, sl.planAt = size, true, 0
	if size > bound {
		sl.planAt = state.PlanAgainAt(size, bound)
	}
}

func (s *State) forgetSize(subject string) {
	s.logs.mu.Lock()
	defer s.logs.mu.Unlock()
	delete(s.logs.subjects, subject)
}

// readBounded reads l from position from: from 0 of a cut log, the mark
// first (next: the first kept entry's sequence); from a position inside
// what was cut, from the first kept entry.
func (s *State) readBounded(l boundedLog, from int64, fn func(raw json.RawMessage, next int64) error) (int64, error) {
	if from == 0 {
		mark, err := s.markOf(l)
		if err != nil {
			return from, err
		}
		if mark.Entries > 0 {
			if err := fn(state.MarkEntry(l.kind, mark.Cut, s.Bounds.Of(l.kind)), mark.First); err != nil {
				return mark.First, err
			}
			from = mark.First
		}
	}
	return s.readSubject(l.stream, l.subject, from, fn)
}

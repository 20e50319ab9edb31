package natsstate

import (
	"encoding/json"

	"github.com/nats-io/nats.go/jetstream"

	"github.com/plasmodium/pm/internal/natsx"
)

// Subjects read by position (mailboxes, and the agent logs' transcripts,
// reply streams and ledger): a position is the stream sequence after an
// entry, 0 the start.

// readSubject calls fn with each valid entry of subject from position from
// (a sequence, 0 the start) up to its last entry as it was when the read
// began, and returns the position after the last one read. raw is the
// message's data (fn's to keep). A follower's few new entries are read
// with no consumer (natsx.Conn.ReadSubject: the cheapest way there is).
func (s *State) readSubject(st jetstream.Stream, subject string, from int64, fn func(raw json.RawMessage, next int64) error) (int64, error) {
	pos := from
	err := s.c.ReadSubject(s.ctx, st, subject, uint64(max(from, 1)), func(m *jetstream.RawStreamMsg) error {
		pos = int64(m.Sequence) + 1
		if json.Valid(m.Data) {
			return fn(json.RawMessage(m.Data), pos)
		}
		return nil
	})
	return pos, err
}

// subjectEnd is the position after subject's last entry (0 for none).
func (s *State) subjectEnd(st jetstream.Stream, subject string) (int64, error) {
	last, err := natsx.Last(s.ctx, st, subject)
	if err != nil || last == nil {
		return 0, err
	}
	return int64(last.Sequence) + 1, nil
}

package lease

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"strconv"

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"

	"github.com/plasmodium/pm/internal/natsx"
)

// A write conditional on the lease, in the stream itself: the fence mark
// and the write go to the stream as one atomic batch (nats-server 2.12+,
// a stream with AllowAtomicPublish: headers Nats-Batch-Id,
// Nats-Batch-Sequence, Nats-Batch-Commit). The server checks every
// message's expectations when the batch commits and stores all of it or
// none, so a newer holder's takeover mark stored at any moment before the
// commit (even after the mark was sent) refuses the write. nats.go v1.55
// has no batch publish (only the stream's AllowAtomicPublish field), so
// the batch is published here with core NATS: the first message
// published, the commit requested (the connection keeps their order).

// beforeCommit, when set (tests), runs between the batch's first message
// and its commit: where a takeover races the write.
var beforeCommit func()

// AppendWith appends a fence mark (after this Writer's last append) and m
// (a subject of the same stream, with its own headers, such as an
// expected last sequence of its subject) as one atomic batch: both are
// stored or neither. ErrFenced when a newer holder's takeover mark came
// first; m's own expectation failing is the server's error (natsx.WrongLast).
// The Writer's stream must allow atomic publish.
func (w *Writer) AppendWith(ctx context.Context, mark []byte, m *nats.Msg) (uint64, error) {
	var raw [12]byte
	if _, err := rand.Read(raw[:]); err != nil {
		return 0, err
	}
	id := hex.EncodeToString(raw[:])
	first := nats.NewMsg(w.subject)
	first.Data = mark
	first.Header.Set("Nats-Batch-Id", id)
	first.Header.Set("Nats-Batch-Sequence", "1")
	first.Header.Set(jetstream.ExpectedLastSubjSeqHeader, strconv.FormatUint(w.last, 10))
	commit := nats.NewMsg(m.Subject)
	commit.Data = m.Data
	for k, v := range m.Header {
		commit.Header[k] = v
	}
	commit.Header.Set("Nats-Batch-Id", id)
	commit.Header.Set("Nats-Batch-Sequence", "2")
	commit.Header.Set("Nats-Batch-Commit", "1")
	nc := w.le.l.c.NC
	if err := nc.PublishMsg(first); err != nil {
		return 0, err
	}
	if beforeCommit != nil {
		beforeCommit()
	}
	op, cancel := natsx.Op(ctx)
	defer cancel()
	reply, err := nc.RequestMsgWithContext(op, commit)
	if err != nil {
		return 0, err
	}
	var ack struct {
		Seq   uint64              `json:"seq"`
		Count int                 `json:"count"`
		Error *jetstream.APIError `json:"error"`
	}
	if err := json.Unmarshal(reply.Data, &ack); err != nil {
		return 0, fmt.Errorf("lease: the batch's answer %q: %w", reply.Data, err)
	}
	if ack.Error != nil {
		if natsx.WrongLast(ack.Error) && w.fenced(ctx) {
			return 0, fmt.Errorf("%w: %s's write to %s", ErrFenced, w.le.Holder, m.Subject)
		}
		return 0, ack.Error
	}
	w.last = ack.Seq - 1 // the mark, just before m
	return ack.Seq, nil
}

// fenced reports whether another append followed this Writer's last on
// its subject (a newer holder's takeover mark).
func (w *Writer) fenced(ctx context.Context) bool {
	op, cancel := natsx.Op(ctx)
	defer cancel()
	s, err := w.le.l.c.JS.Stream(op, w.stream)
	if err != nil {
		return false
	}
	last, err := s.GetLastMsgForSubject(op, w.subject)
	return err == nil && last.Sequence != w.last
}

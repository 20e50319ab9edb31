package lease

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"strconv"

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"

	"github.com/plasmodium/pm/internal/natsx"
)

// A write conditional on the lease, in the stream itself: the write and
// a fence mark go to the stream as one atomic batch (nats-server 2.12+,
// a stream with AllowAtomicPublish: headers Nats-Batch-Id,
// Nats-Batch-Sequence, Nats-Batch-Commit). The server checks every
// message's expectations when the batch commits and stores all of it or
// none, so a newer holder's takeover mark stored at any moment before the
// commit (even after the batch's first message was sent) refuses the
// write. nats.go v1.55 has no batch publish (only the stream's
// AllowAtomicPublish field), so the batch is published here with core
// NATS: the first message published, the commit requested (the connection
// keeps their order).
//
// The write goes first and the mark commits the batch: a repeat of a
// batch that landed (its answer lost while a cluster changed leaders) is
// then refused by the write's message id (the server checks a batch's
// messages in order, the id before the expectations), where a mark first
// would be refused by its own expected sequence, which the landed mark
// moved on, and read as a takeover.

// beforeCommit, when set (tests), runs between the batch's first message
// and its commit: where a takeover races the write.
var beforeCommit func()

// MsgHeader names, on a mark AppendWith writes, the message id of the
// write it was stored with: a repeat refused as a duplicate finds its own
// mark by it.
const MsgHeader = "Pm-Fenced-Msg"

// ErrDuplicate: AppendWith's write (its message id) is stored already,
// by an earlier attempt of the same write whose answer was lost.
var ErrDuplicate = errors.New("lease: the write is stored already")

// errAtomicDuplicate is the server's refusal of a batch holding a message
// whose id it has stored (JSAtomicPublishContainsDuplicateMessageErr).
const errAtomicDuplicate = 10201

// AppendWith appends m (a subject of the Writer's stream, with its own
// headers: a message id, an expected last sequence of its subject) and
// then a fence mark (after this Writer's last append) as one atomic
// batch: both are stored or neither. It returns m's sequence.
//
// A refused expectation is the same server error for the mark and for m
// (JSStreamWrongLastSequenceErr, 10071: natsx.WrongLast); which subject
// it was is only in the error's text, never read here. So a WrongLast is told apart by the
// fence subject itself: moved past this Writer's last, a newer holder
// took over and the write is refused for good (ErrFenced); not moved, it
// was m's own expectation (the server's error, natsx.WrongLast: read
// again and retry). ErrDuplicate: m's id was stored by an earlier
// attempt (the Writer then follows the mark stored with it).
//
// A refusal while a write of either subject was in flight at the leader
// (natsx.InProcess: the Writer's own last mark can be one, answered but
// not yet cleared) is no verdict: the batch is sent again once it is
// applied.
//
// The Writer's stream must allow atomic publish. Appends of one Writer
// are one at a time (its last sequence is theirs).
func (w *Writer) AppendWith(ctx context.Context, mark []byte, m *nats.Msg) (uint64, error) {
	w.mu.Lock()
	defer w.mu.Unlock()
	var seq uint64
	err := natsx.WhileInProcess(ctx, func(ctx context.Context) (err error) {
		seq, err = w.appendWith(ctx, mark, m)
		return err
	})
	return seq, err
}

// appendWith is one attempt of AppendWith.
func (w *Writer) appendWith(ctx context.Context, mark []byte, m *nats.Msg) (uint64, error) {
	var raw [12]byte
	if _, err := rand.Read(raw[:]); err != nil {
		return 0, err
	}
	id := hex.EncodeToString(raw[:])
	first := nats.NewMsg(m.Subject)
	first.Data = m.Data
	for k, v := range m.Header {
		first.Header[k] = v
	}
	first.Header.Set("Nats-Batch-Id", id)
	first.Header.Set("Nats-Batch-Sequence", "1")
	commit, roll := w.markMsg(mark)
	commit.Header.Set(MsgHeader, m.Header.Get(jetstream.MsgIDHeader))
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
	switch {
	case ack.Error == nil:
		w.last = ack.Seq // the mark, just after m
		w.stored(roll)
		return ack.Seq - 1, nil
	case ack.Error.ErrorCode != errAtomicDuplicate && !natsx.WrongLast(ack.Error):
		return 0, ack.Error
	}
	// A duplicate, or a wrong last sequence: the fence subject's last mark
	// says whose. This Writer's own, stored with m by an earlier attempt
	// whose answer was lost (a new leader may not know m's id and refuse
	// the repeat's expectations instead), is followed; any other mark
	// after this Writer's last is a newer holder's.
	last, err := w.lastMark(ctx)
	switch {
	case err == nil && last != nil && w.ownMark(last, m):
		w.last = last.Sequence
		w.stored(last.Header.Get(jetstream.MsgRollup) != "")
		return 0, fmt.Errorf("%w: %s", ErrDuplicate, m.Subject)
	case ack.Error.ErrorCode == errAtomicDuplicate:
		return 0, fmt.Errorf("%w: %s", ErrDuplicate, m.Subject)
	case err == nil && last != nil && last.Sequence != w.last:
		return 0, fmt.Errorf("%w: %s's write to %s", ErrFenced, w.le.Holder, m.Subject)
	}
	return 0, ack.Error
}

// ownMark reports whether last is the mark this Writer stored with m.
func (w *Writer) ownMark(last *jetstream.RawStreamMsg, m *nats.Msg) bool {
	id := m.Header.Get(jetstream.MsgIDHeader)
	return id != "" && last.Sequence != w.last && last.Header.Get(MsgHeader) == id
}

// RollupEvery bounds the marks a fence subject holds on a stream that
// allows rollups: a Writer's first mark and every RollupEvery-th after
// it replace the subject's earlier ones (Nats-Rollup: sub). Measured on a
// single node syncing every write: a mark 1.0 ms, one that rolls up 3.7
// ms, one on a stream keeping one message per subject 2.2 ms; rolling up
// one mark in 16 costs about 1.2 ms a mark on average and keeps at most
// 16 per agent.
const RollupEvery = 16

// markMsg is a fence mark of this Writer after its last append, and
// whether it rolls the subject up (on a stream that allows it: see
// RollupEvery).
func (w *Writer) markMsg(mark []byte) (*nats.Msg, bool) {
	m := nats.NewMsg(w.subject)
	m.Data = mark
	m.Header.Set(jetstream.ExpectedLastSubjSeqHeader, strconv.FormatUint(w.last, 10))
	roll := w.rollup && (w.held == 0 || w.held >= RollupEvery)
	if roll {
		m.Header.Set(jetstream.MsgRollup, jetstream.MsgRollupSubject)
	}
	return m, roll
}

// stored counts a mark stored (roll: it rolled the subject up).
func (w *Writer) stored(roll bool) {
	if roll {
		w.held = 1
		return
	}
	w.held++
}

// lastMark is the fence subject's last message, read from the stream's
// leader (nil: none).
func (w *Writer) lastMark(ctx context.Context) (*jetstream.RawStreamMsg, error) {
	return natsx.Last(ctx, w.st, w.subject)
}

// Publish is AppendWith with mark, answering as a JetStream publish does
// (a room's Publish, natsx/room): a write stored already by an earlier
// attempt is acknowledged as a Duplicate; ErrFenced, a wrong last
// sequence of the write's own subject and the rest are its errors.
func (w *Writer) Publish(mark []byte) func(ctx context.Context, m *nats.Msg) (*jetstream.PubAck, error) {
	return func(ctx context.Context, m *nats.Msg) (*jetstream.PubAck, error) {
		seq, err := w.AppendWith(ctx, mark, m)
		switch {
		case errors.Is(err, ErrDuplicate):
			return &jetstream.PubAck{Stream: w.stream, Duplicate: true}, nil
		case err != nil:
			return nil, err
		}
		return &jetstream.PubAck{Stream: w.stream, Sequence: seq}, nil
	}
}

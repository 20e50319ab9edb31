package natsx

import (
	"context"

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"
)

// AnyLast: a Put that expects nothing of its subject's last message.
const AnyLast = ^uint64(0)

// Put stores m on st once, riding out a change of leader (Do), and returns
// the sequence it was stored at. m carries its message id (its
// Nats-Msg-Id header, one no other write takes); unless last is AnyLast,
// it is stored only right after the subject's message last (0: the
// subject has none), a compare-and-set. A repeat of an attempt whose
// answer was lost is safe either way: the stream answers a repeat of a
// stored id as a duplicate (the first attempt's sequence), and a repeat
// refused by the expected sequence because the first attempt moved the
// subject on is recognised as that attempt, by its id in the subject's
// last message (a new leader may not know the id yet). A refusal while
// another write of the subject is in flight (InProcess) is asked again
// once it is applied. Any other refusal is WrongLast, and a verdict.
func (c *Conn) Put(ctx context.Context, st jetstream.Stream, m *nats.Msg, last uint64) (uint64, error) {
	var opts []jetstream.PublishOpt
	if last != AnyLast {
		opts = append(opts, jetstream.WithExpectLastSequencePerSubject(last))
	}
	maybeStored := false // an attempt went unanswered: it may have landed
	var seq uint64
	err := WhileInProcess(ctx, func(ctx context.Context) error {
		return Do(ctx, func(op context.Context) error {
			ack, err := c.JS.PublishMsg(op, m, opts...)
			maybeStored = maybeStored || Transient(err)
			if err == nil {
				seq = ack.Sequence // a duplicate's is the first attempt's
			}
			return err
		})
	})
	if WrongLast(err) && maybeStored {
		if l, gerr := Last(ctx, st, m.Subject); gerr == nil && l != nil && l.Header.Get(jetstream.MsgIDHeader) == m.Header.Get(jetstream.MsgIDHeader) {
			return l.Sequence, nil
		}
	}
	return seq, err
}

// HasValue is Create's refusal: its subject has a value. Last is the
// subject's last message as read after the refusal: the value there, or
// nil or a marker (Gone) where another's write came and went meanwhile.
type HasValue struct{ Last *jetstream.RawStreamMsg }

func (e *HasValue) Error() string { return "natsx: the subject has a value" }

// Gone reports a key-value bucket's message that is no value: a delete or
// purge marker (its KV-Operation header) or the server's marker of a key
// aged out (its Nats-Marker-Reason header).
func Gone(m *jetstream.RawStreamMsg) bool {
	return m.Header.Get("KV-Operation") != "" || m.Header.Get(jetstream.MarkerReasonHeader) != ""
}

// Create stores m on st only where its subject has no value (kv.Create's
// rule): no message yet (a Put expecting 0), or a Gone marker last (then a
// Put expecting the marker's sequence). It returns the sequence stored at,
// or a *HasValue. Each attempt is a Put, with m's message id and, for the
// write over a marker, that id with ".over" (a fresh id: an id once
// refused is not reused). A refusal is checked against the subject's last
// message: one of these attempts' ids there is the write landed (its
// answer lost, or read by a repeat Put could not place), never a value of
// another's.
func (c *Conn) Create(ctx context.Context, st jetstream.Stream, m *nats.Msg) (uint64, error) {
	id := m.Header.Get(jetstream.MsgIDHeader)
	ours := func(l *jetstream.RawStreamMsg) bool {
		got := l.Header.Get(jetstream.MsgIDHeader)
		return got == id || got == id+".over"
	}
	seq, err := c.Put(ctx, st, m, 0)
	if !WrongLast(err) {
		return seq, err
	}
	last, err := Last(ctx, st, m.Subject)
	switch {
	case err != nil:
		return 0, err
	case last != nil && ours(last):
		return last.Sequence, nil
	case last == nil || !Gone(last):
		return 0, &HasValue{Last: last}
	}
	over := &nats.Msg{Subject: m.Subject, Data: m.Data, Header: nats.Header{}}
	for k, v := range m.Header {
		over.Header[k] = v
	}
	over.Header.Set(jetstream.MsgIDHeader, id+".over")
	seq, err = c.Put(ctx, st, over, last.Sequence)
	if !WrongLast(err) {
		return seq, err
	}
	// Another wrote it meanwhile, or this attempt landed unrecognised.
	if last, err = Last(ctx, st, m.Subject); err != nil {
		return 0, err
	}
	if last != nil && ours(last) {
		return last.Sequence, nil
	}
	return 0, &HasValue{Last: last}
}

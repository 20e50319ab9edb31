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

// Package natsbus is pm's bus on JetStream: one stream and one subject per
// project (natsx.ProjectNames), so every event has one place in one order,
// and a cursor is that place (the stream sequence). A follower on any machine resumes from a cursor.
//
// Invariants:
//   - Publish returns the event's cursor once the stream holds it (synced
//     on a single node, on two of three in a cluster).
//   - An event is published once by its id (Nats-Msg-Id): a publish
//     retried after a lost acknowledgement returns the first cursor; it is
//     retried so while a cluster changes leaders (natsx.Do).
//   - Follow(after) delivers every event with a cursor above after, in
//     cursor order, then each new one as it is stored, pushed by an
//     ordered consumer: nothing polls, nothing is skipped or repeated.
//   - Range(lo, hi) reads every event the stream's leader holds in the
//     range, whatever node its consumer sits on: a pull with no
//     responder yet is asked again, and one on a replica behind the
//     leader waits for it (TestRangeReadsWhatWasAcknowledged).
//   - Bus is a bus.Log: pm's bus on a hub is bus.Seq over it (NewBus), so
//     events are stamped, masked and encoded as on the files.
package natsbus

import (
	"context"
	"errors"
	"time"

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"

	"github.com/plasmodium/pm/internal/bus"
	"github.com/plasmodium/pm/internal/natsx"
	"github.com/plasmodium/pm/internal/secret"
)

var _ bus.Log = (*Bus)(nil)

// NewBus is pm's bus (bus.Bus) on b: requests bounded by ctx, events
// stamped with now and masked with secrets.
func NewBus(ctx context.Context, b *Bus, now func() time.Time, secrets secret.Set) *bus.Seq {
	return &bus.Seq{Log: b, Ctx: ctx, Now: now, Secrets: secrets}
}

// Bus is one project's bus on one connection: its stream and subject are
// the project's (natsx.ProjectNames).
type Bus struct {
	c       *natsx.Conn
	s       jetstream.Stream
	stream  string
	subject string
}

// Open makes sure project's bus stream exists.
func Open(ctx context.Context, c *natsx.Conn, project string) (*Bus, error) {
	n, err := natsx.ProjectNames(project)
	if err != nil {
		return nil, err
	}
	s, err := c.Stream(ctx, jetstream.StreamConfig{Name: n.Bus, Subjects: []string{n.BusSubject}})
	if err != nil {
		return nil, err
	}
	return &Bus{c: c, s: s, stream: n.Bus, subject: n.BusSubject}, nil
}

// Publish stores event data under id and returns its cursor.
func (b *Bus) Publish(ctx context.Context, id string, data []byte) (uint64, error) {
	// Repeated while the cluster changes leaders: the id keeps it once.
	var ack *jetstream.PubAck
	err := natsx.Do(ctx, func(op context.Context) (err error) {
		ack, err = b.c.JS.PublishMsg(op, &nats.Msg{Subject: b.subject, Data: data}, jetstream.WithMsgID(id))
		return err
	})
	if err != nil {
		return 0, err
	}
	return ack.Sequence, nil
}

// End is the cursor of the last event (0 when there is none): following
// from it delivers only what comes next.
func (b *Bus) End(ctx context.Context) (uint64, error) {
	var info *jetstream.StreamInfo
	err := natsx.Do(ctx, func(op context.Context) (err error) { info, err = b.s.Info(op); return err })
	if err != nil {
		return 0, err
	}
	return info.State.LastSeq, nil
}

// Follow calls fn with each event after cursor after, in order, and then
// with each new one, until fn returns natsx.ErrStop or bus.ErrStopFollow
// (nil), fails or ctx ends.
func (b *Bus) Follow(ctx context.Context, after uint64, fn func(cursor uint64, data []byte) error) error {
	return b.c.Follow(ctx, b.stream, b.subject, after+1, func(m jetstream.Msg) error {
		if err := fn(natsx.Seq(m), m.Data()); errors.Is(err, bus.ErrStopFollow) {
			return natsx.ErrStop
		} else if err != nil {
			return err
		}
		return nil
	})
}

// Append is Publish (bus.Log's name).
func (b *Bus) Append(ctx context.Context, id string, data []byte) (uint64, error) {
	return b.Publish(ctx, id, data)
}

// Bounds are the first and last cursors held (first is last+1 when the
// stream is empty: a purge keeps the numbering).
func (b *Bus) Bounds(ctx context.Context) (first, last uint64, err error) {
	var info *jetstream.StreamInfo
	err = natsx.Do(ctx, func(op context.Context) (err error) { info, err = b.s.Info(op); return err })
	if err != nil {
		return 0, 0, err
	}
	return info.State.FirstSeq, info.State.LastSeq, nil
}

// rangeBatch is how many events one fetch of Range asks for.
const rangeBatch = 256

// Range calls fn with each event held from lo to hi, in order, and returns
// once it has hi or the stream's leader holds nothing more of the range
// (a range purged meanwhile ends, never hangs).
//
// It reads through an ordered consumer, which on a cluster may sit on
// another node than the reader's, on a replica of the stream behind its
// leader; neither cuts the read short. The answer that the consumer is
// made can reach this node before the consumer's interest in its pulls
// does, and a pull then has no responder: a Transient error, asked again
// from the next cursor (natsx.Do) with a new consumer. A pull that finds
// nothing (it does not wait) while the leader holds events of the rest of
// the range (Bounds) is the consumer's replica behind: the next pull
// waits for them, within its request's deadline.
func (b *Bus) Range(ctx context.Context, lo, hi uint64, fn func(cursor uint64, data []byte) error) error {
	var stop error // fn's own: never asked again
	err := natsx.Do(ctx, func(op context.Context) error {
		if lo > hi {
			return nil
		}
		cfg := jetstream.OrderedConsumerConfig{FilterSubjects: []string{b.subject}, DeliverPolicy: jetstream.DeliverAllPolicy}
		if lo > 1 {
			cfg.DeliverPolicy, cfg.OptStartSeq = jetstream.DeliverByStartSequencePolicy, lo
		}
		cons, err := b.c.JS.OrderedConsumer(op, b.stream, cfg)
		if err != nil {
			return err
		}
		behind := false // the consumer's replica is: the pull waits
		for {
			n := int(min(hi-lo+1, rangeBatch))
			var batch jetstream.MessageBatch
			if dl, _ := op.Deadline(); behind {
				wait := time.Until(dl)
				if wait <= 0 {
					return context.DeadlineExceeded // this request's: Do asks again
				}
				batch, err = cons.Fetch(n, jetstream.FetchMaxWait(wait))
			} else {
				batch, err = cons.FetchNoWait(n)
			}
			if err != nil {
				return err
			}
			got := 0
			for m := range batch.Messages() {
				got++
				seq := natsx.Seq(m)
				if seq > hi {
					lo = seq
					return nil
				}
				if err := fn(seq, m.Data()); err != nil {
					stop = err
					return nil
				}
				if lo = seq + 1; seq == hi {
					return nil
				}
			}
			if err := batch.Error(); err != nil {
				return err
			}
			if got > 0 {
				behind = false
				continue
			}
			if behind {
				// A waiting pull came back empty before its deadline (its
				// consumer went): Do asks again after its pause, not here.
				return context.DeadlineExceeded
			}
			first, last, err := b.Bounds(op)
			if err != nil {
				return err
			}
			if first > hi || last < lo {
				return nil // purged, or nothing more held
			}
			behind = true
		}
	})
	if stop != nil {
		return stop
	}
	return err
}

// Purge drops every event; cursors go on after the last.
func (b *Bus) Purge(ctx context.Context) error {
	op, cancel := natsx.Op(ctx)
	defer cancel()
	return b.s.Purge(op)
}

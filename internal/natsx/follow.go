package natsx

import (
	"context"
	"errors"
	"fmt"
	"sync/atomic"
	"time"

	"github.com/nats-io/nats.go/jetstream"

	"github.com/plasmodium/pm/internal/errs"
)

// ErrStop, returned by a Follow callback, ends the follow without error.
var ErrStop = errors.New("natsx: stop following")

// Follow calls fn with each message of stream on subject (all of them when
// empty) from sequence from on, in order, as the stream accepts them: an
// ordered consumer pushes them, so a follower waits without polling. It
// returns when fn returns ErrStop (nil), fn fails (its error) or ctx ends.
func (c *Conn) Follow(ctx context.Context, stream, subject string, from uint64, fn func(m jetstream.Msg) error) error {
	cfg := jetstream.OrderedConsumerConfig{DeliverPolicy: jetstream.DeliverAllPolicy}
	if subject != "" {
		cfg.FilterSubjects = []string{subject}
	}
	if from > 1 {
		cfg.DeliverPolicy, cfg.OptStartSeq = jetstream.DeliverByStartSequencePolicy, from
	}
	// A lookup no leader takes is never answered: each attempt has its
	// own deadline, repeated while a leader is elected (Do).
	var cons jetstream.Consumer
	err := Do(ctx, func(op context.Context) (err error) { cons, err = c.JS.OrderedConsumer(op, stream, cfg); return err })
	if err != nil {
		return err
	}
	it, err := cons.Messages()
	if err != nil {
		return err
	}
	defer it.Stop()
	for {
		m, err := it.Next(jetstream.NextContext(ctx))
		if err != nil {
			if ctx.Err() != nil {
				return ctx.Err()
			}
			return err
		}
		if err := fn(m); err != nil {
			if errors.Is(err, ErrStop) {
				return nil
			}
			return err
		}
	}
}

// Seq is a message's stream sequence.
func Seq(m jetstream.Msg) uint64 {
	md, err := m.Metadata()
	if err != nil {
		return 0
	}
	return md.Sequence.Stream
}

// Wakeup is what Wake returns: C receives (without blocking the hub: one
// pending signal at most) whenever the stream stores a message on one of
// its subjects; Seen is the highest stream sequence pushed so far.
type Wakeup struct {
	C    <-chan struct{}
	seen atomic.Uint64
	err  atomic.Pointer[error]
}

// Err is why the wake-up ended before its context (nil while it follows):
// its consumer was lost and could not be made again.
func (w *Wakeup) Err() error {
	if e := w.err.Load(); e != nil {
		return *e
	}
	return nil
}

// Seen is the stream sequence of the last message pushed (0: none yet).
func (w *Wakeup) Seen() uint64 { return w.seen.Load() }

// Wake follows stream's subjects from now on: every message stored after
// Wake returns signals (the consumer starts after the stream's last
// sequence as read before it was made). It ends with ctx. The consumer
// is on any node that holds the stream, and may push a message before
// the stream's leader, which answers reads, has stored it: a reader woken
// by it waits for Stored(Seen()) first.
func (c *Conn) Wake(ctx context.Context, stream string, subjects []string) (*Wakeup, error) {
	var last uint64
	err := Do(ctx, func(op context.Context) error {
		s, err := c.JS.Stream(op, stream) // one request: the stream's info
		if err == nil {
			last = s.CachedInfo().State.LastSeq
		}
		return err
	})
	if err != nil {
		return nil, err
	}
	return c.wakeFrom(ctx, stream, subjects, last+1)
}

// wakeFrom signals w.C for each message of subjects from sequence from on.
// A consumer error (its consumer deleted, its heartbeats missed, its node
// gone) also signals, so the waiter reads again whatever came meanwhile,
// and one the ordered consumer does not recover from by itself makes a
// new consumer after the last message pushed: a waiter never sleeps on a
// consumer that is gone.
func (c *Conn) wakeFrom(ctx context.Context, stream string, subjects []string, from uint64) (*Wakeup, error) {
	ch := make(chan struct{}, 1)
	w := &Wakeup{C: ch}
	signal := func() {
		select {
		case ch <- struct{}{}:
		default:
		}
	}
	lost := make(chan struct{}, 1)
	consume := func() (jetstream.ConsumeContext, error) {
		start := max(from, w.seen.Load()+1)
		var cons jetstream.Consumer
		// A consumer made twice (a repeat after the first was made) leaves
		// one unused, which the server removes once inactive.
		err := Do(ctx, func(op context.Context) (err error) {
			cons, err = c.JS.OrderedConsumer(op, stream, jetstream.OrderedConsumerConfig{
				FilterSubjects: subjects, DeliverPolicy: jetstream.DeliverByStartSequencePolicy, OptStartSeq: start})
			return err
		})
		if err != nil {
			return nil, err
		}
		return cons.Consume(func(m jetstream.Msg) {
			for seq, was := Seq(m), w.seen.Load(); seq > was && !w.seen.CompareAndSwap(was, seq); was = w.seen.Load() {
			}
			signal()
		}, jetstream.ConsumeErrHandler(func(_ jetstream.ConsumeContext, err error) {
			signal()
			if lostForGood(err) {
				select {
				case lost <- struct{}{}:
				default:
				}
			}
		}))
	}
	cc, err := consume()
	if err != nil {
		return nil, err
	}
	go func() {
		for {
			select {
			case <-ctx.Done():
				cc.Stop()
				return
			case <-lost:
				cc.Stop()
				next, err := consume()
				if err != nil {
					// Not made again within RideOut: the waiter is told,
					// not left asleep.
					w.err.Store(&err)
					signal()
					return
				}
				cc = next
				signal()
			}
		}
	}()
	return w, nil
}

// lostForGood reports a consumer error after which its consumer delivers
// nothing more and the ordered consumer makes itself no new one: its pull
// refused (a bad request ends the subscription) or the consumer not found.
// After the others it makes a new one itself (its heartbeats missed, the
// consumer deleted, no responders: nats.go's orderedConsumer.errHandler)
// or goes on (a leadership change, a warning).
func lostForGood(err error) bool {
	return errors.Is(err, jetstream.ErrBadRequest) || errors.Is(err, jetstream.ErrConsumerNotFound)
}

// Stored returns once stream's leader, which answers pm's reads, holds
// sequence seq. A consumer on a replica pushes a message as soon as its
// node has stored it, which may be before the leader has (it applies the
// committed entry on its own time): a read made on that push went to the
// leader, missed the message, and nothing woke the reader again (issue
// 24). Not a wait for another process but for the leader's own store, a
// moment away: asked again after a short pause, bounded by RideOut, by
// the one retry loop of Do (a leader not holding it yet is asked again as
// a transient error is).
func (c *Conn) Stored(ctx context.Context, stream string, seq uint64) error {
	r := rides{rideOut: RideOut, pause: time.Millisecond, most: 100 * time.Millisecond,
		again: func(err error) bool { return errors.Is(err, errNotStored) },
		giveUp: func(err error) error {
			return &errs.Error{Code: errs.Failure, Err: err, Msg: fmt.Sprintf("stream %s: its leader did not store sequence %d within %s", stream, seq, RideOut),
				Try: "is a majority of the hub's nodes up (two of three)? pm doctor reports the store"}
		}}
	err := ride(ctx, r, func(op context.Context) error {
		s, err := c.JS.Stream(op, stream) // one request: the stream's info
		if err != nil {
			return err
		}
		if s.CachedInfo().State.LastSeq < seq {
			return errNotStored
		}
		return nil
	})
	if errors.Is(err, errNotStored) && ctx.Err() != nil {
		return ctx.Err()
	}
	return err
}

// errNotStored: the stream's leader does not hold the sequence yet.
var errNotStored = errors.New("natsx: the stream's leader does not hold the sequence yet")

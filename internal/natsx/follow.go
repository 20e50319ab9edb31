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
	op, cancel := Op(ctx)
	s, err := c.JS.Stream(op, stream)
	if err == nil {
		var info *jetstream.StreamInfo
		if info, err = s.Info(op); err == nil {
			cancel()
			return c.wakeFrom(ctx, stream, subjects, info.State.LastSeq+1)
		}
	}
	cancel()
	return nil, err
}

func (c *Conn) wakeFrom(ctx context.Context, stream string, subjects []string, from uint64) (*Wakeup, error) {
	op, cancel := Op(ctx)
	defer cancel()
	cons, err := c.JS.OrderedConsumer(op, stream, jetstream.OrderedConsumerConfig{
		FilterSubjects: subjects, DeliverPolicy: jetstream.DeliverByStartSequencePolicy, OptStartSeq: from})
	if err != nil {
		return nil, err
	}
	ch := make(chan struct{}, 1)
	w := &Wakeup{C: ch}
	cc, err := cons.Consume(func(m jetstream.Msg) {
		for seq, was := Seq(m), w.seen.Load(); seq > was && !w.seen.CompareAndSwap(was, seq); was = w.seen.Load() {
		}
		select {
		case ch <- struct{}{}:
		default:
		}
	})
	if err != nil {
		return nil, err
	}
	go func() {
		<-ctx.Done()
		cc.Stop()
	}()
	return w, nil
}

// Stored returns once stream's leader, which answers pm's reads, holds
// sequence seq. A consumer on a replica pushes a message as soon as its
// node has stored it, which may be before the leader has (it applies the
// committed entry on its own time): a read made on that push went to the
// leader, missed the message, and nothing woke the reader again (issue
// 24). Not a wait for another process but for the leader's own store, a
// moment away: asked again after a short pause, bounded by RideOut.
func (c *Conn) Stored(ctx context.Context, stream string, seq uint64) error {
	giveUp := time.Now().Add(RideOut)
	pause := time.Millisecond
	for {
		var last uint64
		err := Do(ctx, func(op context.Context) error {
			s, err := c.JS.Stream(op, stream) // one request: the stream's info
			if err == nil {
				last = s.CachedInfo().State.LastSeq
			}
			return err
		})
		if err != nil || last >= seq {
			return err
		}
		if time.Now().After(giveUp) {
			return &errs.Error{Code: errs.Failure, Msg: fmt.Sprintf("stream %s: its leader did not store sequence %d within %s", stream, seq, RideOut),
				Try: "is a majority of the hub's nodes up (two of three)? pm doctor reports the store"}
		}
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-time.After(pause):
		}
		pause = min(2*pause, 100*time.Millisecond)
	}
}

package natsx

import (
	"context"
	"errors"

	"github.com/nats-io/nats.go/jetstream"
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

// Wake returns a channel that receives (without blocking the hub: one
// pending signal at most) whenever stream stores a message on one of
// subjects from now on. Every message stored after Wake returns signals:
// the consumer starts after the stream's last sequence as read before it
// was made. It ends with ctx.
func (c *Conn) Wake(ctx context.Context, stream string, subjects []string) (<-chan struct{}, error) {
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

func (c *Conn) wakeFrom(ctx context.Context, stream string, subjects []string, from uint64) (<-chan struct{}, error) {
	op, cancel := Op(ctx)
	defer cancel()
	cons, err := c.JS.OrderedConsumer(op, stream, jetstream.OrderedConsumerConfig{
		FilterSubjects: subjects, DeliverPolicy: jetstream.DeliverByStartSequencePolicy, OptStartSeq: from})
	if err != nil {
		return nil, err
	}
	ch := make(chan struct{}, 1)
	cc, err := cons.Consume(func(jetstream.Msg) {
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
	return ch, nil
}

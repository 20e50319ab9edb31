package natsx

import (
	"context"
	"errors"

	"github.com/nats-io/nats.go/jetstream"
)

// Last is subject's last message in st (nil when it has none): one read
// from the stream's leader, riding out a change of leader (Do).
func Last(ctx context.Context, st jetstream.Stream, subject string) (*jetstream.RawStreamMsg, error) {
	var m *jetstream.RawStreamMsg
	err := Do(ctx, func(op context.Context) (err error) { m, err = st.GetLastMsgForSubject(op, subject); return err })
	if errors.Is(err, jetstream.ErrMsgNotFound) {
		return nil, nil
	}
	return m, err
}

// directGets is how many messages ReadSubject reads one get each before
// it hands the rest to a consumer: a follower's wake-up reads one or a
// few; a consumer costs more than that to make (a request to the stream's
// leader, its first pull) and pays off on a long read only. Measured
// (BenchmarkReadMailbox, docs/benchmarks.md): a get 0.1-0.4 ms; a read
// through a consumer 2 ms on one node, 60-360 ms on three.
const directGets = 32

// ReadSubject calls fn with each message of subject in st from sequence
// from on, up to the subject's last as the read begins, in order, until
// fn returns ErrStop (nil) or fails. It takes the cheapest way: the
// subject's last message is read first (one request: nothing more when
// it is before from, and no second one when it is the one at from); then
// each message is one get of the next on the subject (no consumer), for
// up to directGets of them; only a longer read makes an ordered consumer
// for the rest. Each request rides out a change of leader (Do).
func (c *Conn) ReadSubject(ctx context.Context, st jetstream.Stream, subject string, from uint64, fn func(m *jetstream.RawStreamMsg) error) error {
	last, err := Last(ctx, st, subject)
	if err != nil || last == nil || last.Sequence < from {
		return err
	}
	next := from
	for range directGets {
		m := last
		if next < last.Sequence {
			err := Do(ctx, func(op context.Context) (err error) {
				m, err = st.GetMsg(op, next, jetstream.WithGetMsgSubject(subject))
				return err
			})
			if errors.Is(err, jetstream.ErrMsgNotFound) {
				return nil // removed since the last was read (a purge)
			} else if err != nil {
				return err
			}
		}
		if err := fn(m); err != nil {
			if errors.Is(err, ErrStop) {
				return nil
			}
			return err
		}
		if m.Sequence >= last.Sequence {
			return nil
		}
		next = m.Sequence + 1
	}
	// A long read (a transcript's resume): the rest pushed by a consumer.
	return c.Follow(ctx, st.CachedInfo().Config.Name, subject, next, func(jm jetstream.Msg) error {
		seq := Seq(jm)
		if err := fn(&jetstream.RawStreamMsg{Subject: jm.Subject(), Sequence: seq, Header: jm.Headers(), Data: jm.Data()}); err != nil {
			return err
		}
		if seq >= last.Sequence {
			return ErrStop
		}
		return nil
	})
}

// Package lease is one live holder per key (per agent) across machines: a
// lease in a JetStream key-value bucket whose entries expire after the
// bucket's TTL unless their holder renews them, and the fencing that
// refuses the writes of a holder that lost it.
//
// Invariants:
//   - At most one holder has a key's lease at a time: Acquire creates the
//     key only when it is absent, deleted or expired (one compare-and-set
//     of the stream; of two racing, one wins).
//   - Renew and Release name the revision the holder last wrote: after the
//     lease expired or another took it, they fail with ErrLost and change
//     nothing.
//   - A fenced Writer appends to a subject only after the subject's last
//     message (its expected last sequence per subject). A new holder's
//     Writer first appends a takeover mark, so every later append of an
//     older holder's Writer is refused (ErrFenced), whatever its clock or
//     its connection say: the fence is in the stream, not in the hosts.
//     AppendWith puts a write of the same stream and the mark in one
//     atomic batch: a takeover mark stored before the batch commits
//     refuses both, so the write itself is conditional on the lease; a
//     refusal is ErrFenced only when the fence subject moved past the
//     Writer's last (the server's code is the same for the write's own
//     expectation). A Writer's appends run one at a time (a host's calls
//     run at once, and each expects the last one's sequence). On a stream
//     that allows rollups a fence subject holds at most RollupEvery marks
//     (a takeover mark and every RollupEvery-th replace the earlier ones).
//   - Expiry is seen without polling: the bucket keeps a marker when a
//     lease ages out, and WaitFree is a key watch woken by it.
//   - Keep is the one renewal loop of every lease pm holds on a hub (an
//     agent's host, a worker's registration, a critical section): a
//     renewal every third of the TTL; a loss (a renewal refused, Lose, or,
//     for a holder that asks for fencing, no renewal acknowledged within
//     the TTL less Margin after it was sent) is reported once, and no loss
//     is reported after Stop, which returns once no renewal is in flight.
package lease

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"sync"
	"time"

	"github.com/nats-io/nats.go/jetstream"

	"github.com/plasmodium/pm/internal/natsx"
)

// Bucket holds the leases.
const Bucket = "pm-leases"

// ErrHeld: another holder has the lease.
var ErrHeld = errors.New("lease: held by another")

// ErrLost: the lease expired or another holder took it.
var ErrLost = errors.New("lease: lost")

// ErrFenced: a write of a holder whose lease another has taken since.
var ErrFenced = errors.New("lease: fenced")

// Leases are the leases on one connection, each lasting ttl unrenewed.
type Leases struct {
	c   *natsx.Conn
	kv  jetstream.KeyValue
	ttl time.Duration
}

// Open makes sure the bucket exists with ttl (at least a second: the
// server's least marker lifetime).
func Open(ctx context.Context, c *natsx.Conn, ttl time.Duration) (*Leases, error) {
	return OpenBucket(ctx, c, Bucket, ttl)
}

// OpenBucket is Open on the named bucket (one project's locks apart from
// another's leases).
func OpenBucket(ctx context.Context, c *natsx.Conn, bucket string, ttl time.Duration) (*Leases, error) {
	if ttl < time.Second {
		return nil, fmt.Errorf("lease: ttl %s under a second", ttl)
	}
	kv, err := c.KeyValue(ctx, jetstream.KeyValueConfig{
		Bucket: bucket, TTL: ttl, LimitMarkerTTL: ttl, History: 1,
		Replicas: c.Replicas(), Storage: jetstream.FileStorage,
	})
	if err != nil {
		return nil, fmt.Errorf("lease bucket: %w", err)
	}
	return &Leases{c: c, kv: kv, ttl: ttl}, nil
}

// TTL is the bucket's TTL as the hub keeps it (the first opener's).
func (l *Leases) TTL(ctx context.Context) (time.Duration, error) {
	st, err := l.kv.Status(ctx)
	if err != nil {
		return 0, err
	}
	return st.TTL(), nil
}

// Lease is one holder's lease on a key.
type Lease struct {
	l      *Leases
	Key    string
	Holder string
	rev    uint64
}

// Acquire takes key's lease for holder, or fails with ErrHeld.
func (l *Leases) Acquire(ctx context.Context, key, holder string) (*Lease, error) {
	op, cancel := natsx.Op(ctx)
	defer cancel()
	rev, err := l.kv.Create(op, key, []byte(holder))
	// Over a released or expired lease Create is an update of the delete
	// mark: losing that race is a wrong last sequence, not ErrKeyExists.
	if errors.Is(err, jetstream.ErrKeyExists) || natsx.WrongLast(err) {
		who := "?"
		if e, gerr := l.kv.Get(op, key); gerr == nil {
			who = string(e.Value())
		}
		return nil, fmt.Errorf("%w: %s holds %s", ErrHeld, who, key)
	}
	if err != nil {
		return nil, err
	}
	return &Lease{l: l, Key: key, Holder: holder, rev: rev}, nil
}

// Revision is the lease's current revision: it grows with every renewal
// and every new holder.
func (le *Lease) Revision() uint64 { return le.rev }

// Renew extends the lease by the bucket's TTL from now.
func (le *Lease) Renew(ctx context.Context) error {
	op, cancel := natsx.Op(ctx)
	defer cancel()
	rev, err := le.l.kv.Update(op, le.Key, []byte(le.Holder), le.rev)
	if errors.Is(err, jetstream.ErrKeyRevisionMismatch) || errors.Is(err, jetstream.ErrKeyNotFound) {
		return fmt.Errorf("%w: %s on %s", ErrLost, le.Holder, le.Key)
	}
	if err != nil {
		return err
	}
	le.rev = rev
	return nil
}

// Release gives the lease up (ErrLost if it was no longer held).
func (le *Lease) Release(ctx context.Context) error {
	op, cancel := natsx.Op(ctx)
	defer cancel()
	err := le.l.kv.Delete(op, le.Key, jetstream.LastRevision(le.rev))
	if natsx.WrongLast(err) || errors.Is(err, jetstream.ErrKeyRevisionMismatch) {
		return fmt.Errorf("%w: %s on %s", ErrLost, le.Holder, le.Key)
	}
	return err
}

// WaitFree returns once key has no live lease (absent, released or
// expired), woken by the bucket's watch.
func (l *Leases) WaitFree(ctx context.Context, key string) error {
	w, err := l.kv.Watch(ctx, key)
	if err != nil {
		return err
	}
	defer w.Stop()
	live := false
	for {
		select {
		case <-ctx.Done():
			return ctx.Err()
		case e, ok := <-w.Updates():
			switch {
			case !ok:
				return fmt.Errorf("lease: watch of %s ended", key)
			case e == nil: // the end of the current values
				if !live {
					return nil
				}
			case e.Operation() == jetstream.KeyValuePut:
				live = true
			default: // released, or expired (the bucket's marker)
				return nil
			}
		}
	}
}

// takeover is the mark a new holder's Writer appends.
type takeover struct {
	Takeover string `json:"takeover"`
	Revision uint64 `json:"revision"`
}

// Writer appends to subject (of an existing stream) fenced by the lease.
type Writer struct {
	le      *Lease
	stream  string
	subject string
	rollup  bool // marks replace the subject's earlier ones (the stream allows rollups: RollupEvery)

	mu   sync.Mutex // one append at a time: each expects the last one's sequence
	last uint64
	held int // marks on the subject since this Writer's last rollup
}

// Writer starts le's writes to subject: it appends a takeover mark after
// whatever is there, so no earlier holder's Writer appends again. On a
// stream that allows rollups (a stream that keeps other subjects whole,
// such as a project's rooms) the takeover mark and every RollupEvery-th
// mark after it replace the subject's earlier ones, so the subject holds
// at most RollupEvery marks (a stream of marks keeping one message per
// subject holds one).
func (le *Lease) Writer(ctx context.Context, stream, subject string) (*Writer, error) {
	s, err := le.l.c.JS.Stream(ctx, stream)
	if err != nil {
		return nil, err
	}
	rollup := s.CachedInfo().Config.AllowRollup
	mark, _ := json.Marshal(takeover{Takeover: le.Holder, Revision: le.rev})
	for {
		var last uint64
		op, cancel := natsx.Op(ctx)
		m, err := s.GetLastMsgForSubject(op, subject)
		cancel()
		switch {
		case err == nil:
			last = m.Sequence
		case !errors.Is(err, jetstream.ErrMsgNotFound):
			return nil, err
		}
		w := &Writer{le: le, stream: stream, subject: subject, rollup: rollup, last: last}
		err = w.Append(ctx, mark)
		if errors.Is(err, ErrFenced) {
			continue // the old holder wrote meanwhile: after that, then
		}
		return w, err
	}
}

// Append adds data after this Writer's last append, or fails with
// ErrFenced when anyone else has appended since (a newer holder).
func (w *Writer) Append(ctx context.Context, data []byte) error {
	w.mu.Lock()
	defer w.mu.Unlock()
	op, cancel := natsx.Op(ctx)
	defer cancel()
	m, roll := w.markMsg(data)
	ack, err := w.le.l.c.JS.PublishMsg(op, m)
	if natsx.WrongLast(err) {
		return fmt.Errorf("%w: %s's write to %s", ErrFenced, w.le.Holder, w.subject)
	}
	if err != nil {
		return err
	}
	w.last = ack.Sequence
	w.stored(roll)
	return nil
}

// Package lease is one live holder per key (per agent) across machines: a
// lease in a JetStream key-value bucket whose entries expire after the
// bucket's TTL unless their holder renews them, and the fencing that
// refuses the writes of a holder that lost it.
//
// Invariants:
//   - At most one holder has a key's lease at a time: Acquire creates the
//     key only when it is absent, deleted or expired (natsx.Create: a
//     compare-and-set of the stream; of two racing, one wins).
//   - Renew and Release name the revision the holder last wrote: after the
//     lease expired or another took it, they fail with ErrLost and change
//     nothing.
//   - Every write of a lease rides out a change of leader (natsx.Put: a
//     message id, repeated while transient). A write whose answer was
//     lost is recognised as the lease's own by its message id, which
//     begins with a token drawn for that lease alone: when the key's last
//     message carries it, nobody wrote the key since, so a take is taken,
//     a renewal kept (never a loss the holder would fence itself for) and
//     a release done.
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
//     lease ages out, and WaitFree is a key watch woken by it. The watch
//     is made anew each TTL, after one read of the key (a backstop: a
//     watch's own request may go unanswered, its consumer lost with a
//     node); WaitFree ends within WaitBound, ErrStillHeld when a holder
//     kept renewing all along.
//   - Reads go to the bucket's stream's leader (natsx.Conn.KeyValue turns
//     direct gets off; Keys lists from its stream info), never a replica
//     behind it: a key just written is read and listed.
//   - Keep is the one renewal loop of every lease pm holds on a hub (an
//     agent's host, a worker's registration, a critical section): a
//     renewal every third of the TTL; a loss (a renewal refused, Lose, or,
//     for a holder that asks for fencing, no renewal acknowledged within
//     the TTL less Margin after it was sent) is reported once, and no loss
//     is reported after Stop, which returns once no renewal is in flight.
package lease

import (
	"context"
	"crypto/rand"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/nats-io/nats.go"
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
	st  jetstream.Stream // the bucket's stream: its writes and their ids
	pre string           // its subjects' prefix before a key
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
	var st jetstream.Stream
	if err := natsx.Do(ctx, func(op context.Context) (err error) { st, err = c.JS.Stream(op, natsx.KVStream(bucket)); return err }); err != nil {
		return nil, fmt.Errorf("lease bucket: %w", err)
	}
	return &Leases{c: c, kv: kv, st: st, pre: "$KV." + bucket + ".", ttl: ttl}, nil
}

// KV is the bucket, to read (a lease's holder, the keys held).
func (l *Leases) KV() jetstream.KeyValue { return l.kv }

// TTL is the bucket's TTL as the hub keeps it (the first opener's).
func (l *Leases) TTL(ctx context.Context) (time.Duration, error) {
	var st jetstream.KeyValueStatus
	err := natsx.Do(ctx, func(op context.Context) (err error) { st, err = l.kv.Status(op); return err })
	if err != nil {
		return 0, err
	}
	return st.TTL(), nil
}

// Keys names every key of the bucket with a message, held or not (a
// release or an expiry is a message too), as its stream's leader holds
// them: one stream info with the bucket's subjects, riding out a change
// of leader (natsx.Do). Not the bucket's ListKeys, whose consumer may sit
// on a replica behind the leader and leave out a key just written
// (natsstate's TestWorkersListsAWorkerJustRegistered failed on it).
func (l *Leases) Keys(ctx context.Context) ([]string, error) {
	var info *jetstream.StreamInfo
	err := natsx.Do(ctx, func(op context.Context) (err error) {
		info, err = l.st.Info(op, jetstream.WithSubjectFilter(l.pre+">"))
		return err
	})
	if err != nil {
		return nil, err
	}
	keys := make([]string, 0, len(info.State.Subjects))
	for subj := range info.State.Subjects {
		keys = append(keys, strings.TrimPrefix(subj, l.pre))
	}
	return keys, nil
}

// Lease is one holder's lease on a key.
//
// Every write of a lease (its take, renewals, release) rides out a change
// of leader (natsx.Put): repeated with its message id, and compare-and-set
// on the revision the lease last wrote. Its message ids all begin with a
// token drawn for this lease alone, which is how a write whose answer was
// lost is recognised as its own: when the key's last message carries the
// lease's token, no one else has written the key since this lease did (a
// release, an expiry, a new holder are each a later message), so the
// lease holds the key at that message's revision, whether or not its
// answer came back (a renewal that landed after its caller stopped
// waiting, a new leader that did not know the id). Recognising by the
// holder's name or value instead would be unsound: a host's name is the
// same for its next lease of the key, and revision arithmetic does not
// hold (a bucket's revisions are its stream's sequences, shared by every
// key).
type Lease struct {
	l      *Leases
	Key    string
	Holder string
	value  []byte // what the lease writes (its holder's name, or a worker's record)
	rev    uint64
	token  string       // the prefix of its writes' message ids
	marks  atomic.Int64 // fence marks its Writers appended: their ids
	writes int
}

// Acquire takes key's lease for holder, or fails with ErrHeld.
func (l *Leases) Acquire(ctx context.Context, key, holder string) (*Lease, error) {
	return l.AcquireWith(ctx, key, holder, []byte(holder))
}

// AcquireWith is Acquire writing value as the key's (renewals write it
// again, or RenewWith's).
func (l *Leases) AcquireWith(ctx context.Context, key, holder string, value []byte) (*Lease, error) {
	le := &Lease{l: l, Key: key, Holder: holder, value: value, token: rand.Text()}
	// Over a released or expired lease, the take is an update of its
	// marker (natsx.Create, kv.Create's rule); losing that race is held too.
	seq, err := l.c.Create(ctx, l.st, le.msg(value, false))
	var has *natsx.HasValue
	if errors.As(err, &has) {
		who := "?"
		if has.Last != nil && !natsx.Gone(has.Last) {
			who = string(has.Last.Data)
		}
		return nil, fmt.Errorf("%w: %s holds %s", ErrHeld, who, key)
	}
	if err != nil {
		return nil, err
	}
	le.rev = seq
	return le, nil
}

// msg is the lease's next write of value (a delete mark when del), with
// its own message id.
func (le *Lease) msg(value []byte, del bool) *nats.Msg {
	le.writes++
	m := nats.NewMsg(le.l.pre + le.Key)
	m.Data = value
	m.Header.Set(jetstream.MsgIDHeader, fmt.Sprintf("%s-%d", le.token, le.writes))
	if del {
		m.Header.Set("KV-Operation", "DEL")
	}
	return m
}

// put writes value (a delete mark when del) after the lease's revision,
// and moves the lease to the revision written. Refused because the key's
// last message is one of this lease's own later writes (answered too late
// or not at all), the lease still holds the key there: put again after
// it; a release refused because an earlier attempt of its own released
// the key is done. Any other refusal is natsx.WrongLast.
func (le *Lease) put(ctx context.Context, value []byte, del bool) error {
	for {
		m := le.msg(value, del)
		seq, err := le.l.c.Put(ctx, le.l.st, m, le.rev)
		if err == nil {
			le.rev = seq
			return nil
		}
		if !natsx.WrongLast(err) {
			return err
		}
		last, lerr := natsx.Last(ctx, le.l.st, m.Subject)
		if lerr != nil {
			return lerr
		}
		if last == nil || !le.wrote(last) || last.Sequence == le.rev {
			return err // another's write, or an expiry, came after this lease's
		}
		le.rev = last.Sequence
		if natsx.Gone(last) {
			if del {
				return nil
			}
			return err
		}
	}
}

// wrote reports whether m is one of this lease's writes.
func (le *Lease) wrote(m *jetstream.RawStreamMsg) bool {
	return strings.HasPrefix(m.Header.Get(jetstream.MsgIDHeader), le.token+"-")
}

// Revision is the lease's current revision: it grows with every renewal
// and every new holder.
func (le *Lease) Revision() uint64 { return le.rev }

// Renew extends the lease by the bucket's TTL from now.
func (le *Lease) Renew(ctx context.Context) error { return le.RenewWith(ctx, le.value) }

// RenewWith is Renew writing value as the key's from now on.
func (le *Lease) RenewWith(ctx context.Context, value []byte) error {
	err := le.put(ctx, value, false)
	if natsx.WrongLast(err) {
		return fmt.Errorf("%w: %s on %s", ErrLost, le.Holder, le.Key)
	}
	if err == nil {
		le.value = value
	}
	return err
}

// Release gives the lease up (ErrLost if it was no longer held).
func (le *Lease) Release(ctx context.Context) error {
	err := le.put(ctx, nil, true)
	if natsx.WrongLast(err) {
		return fmt.Errorf("%w: %s on %s", ErrLost, le.Holder, le.Key)
	}
	return err
}

// ErrStillHeld: WaitFree's bound passed with the lease held all along
// (its holder renews it).
var ErrStillHeld = errors.New("lease: still held")

// waitRideOut is the part of WaitFree's bound that lets the hub's answers
// ride out an election (natsx.RideOut; shorter in tests).
var waitRideOut = natsx.RideOut

// WaitBound bounds one WaitFree: a lease whose holder stopped is gone
// within a TTL of its last renewal, so two TTLs of watching see it go
// (the backstop reads it once per TTL), and the last read rides out a
// change of leader.
func (l *Leases) WaitBound() time.Duration { return 2*l.ttl + waitRideOut }

// WaitFree returns once key has no live lease (absent, released or
// expired), woken by the bucket's watch, and within WaitBound: past it,
// ErrStillHeld (a live holder renews the lease), or the error of the
// hub's last answer. A watch lasts one TTL; then the key is read (a
// backstop: the watch's own request may have gone unanswered, its
// consumer lost with a node) and, still held, watched anew.
func (l *Leases) WaitFree(ctx context.Context, key string) error {
	watchUntil := time.Now().Add(2 * l.ttl)
	for {
		if l.watchFree(ctx, key, min(l.ttl, time.Until(watchUntil))) {
			return nil
		}
		rctx, cancel := context.WithTimeout(ctx, waitRideOut)
		var e jetstream.KeyValueEntry
		err := natsx.Do(rctx, func(op context.Context) (err error) { e, err = l.kv.Get(op, key); return err })
		cancel()
		over := !time.Now().Before(watchUntil)
		switch {
		case errors.Is(err, jetstream.ErrKeyNotFound):
			return nil // released or expired (its marker reads as deleted)
		case ctx.Err() != nil:
			return ctx.Err()
		case err == nil && over:
			return fmt.Errorf("%w: %s has held %s, renewing it, for the %s waited (is it still running? pm workers, pm doctor --check)",
				ErrStillHeld, e.Value(), key, l.WaitBound())
		case err != nil && (over || !natsx.Transient(err)):
			return fmt.Errorf("lease: waiting for %s to be free: %w", key, err)
		}
	}
}

// watchFree watches key for d at most (ctx's end first): true once it has
// no live lease.
func (l *Leases) watchFree(ctx context.Context, key string, d time.Duration) bool {
	if d <= 0 {
		return false
	}
	rctx, cancel := context.WithTimeout(ctx, d)
	defer cancel()
	w, err := l.kv.Watch(rctx, key)
	if err != nil {
		<-rctx.Done() // unanswered (an election), or refused: the backstop reads, after d, not at once
		return false
	}
	defer func() { _ = w.Stop() }()
	live := false
	for {
		select {
		case <-rctx.Done():
			return false
		case e, ok := <-w.Updates():
			switch {
			case !ok:
				<-rctx.Done() // the watch ended: the backstop reads, after d
				return false
			case e == nil: // the end of the current values
				if !live {
					return true
				}
			case e.Operation() == jetstream.KeyValuePut:
				live = true
			default: // released, or expired (the bucket's marker)
				return true
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
	st      jetstream.Stream
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
		w := &Writer{le: le, stream: stream, st: s, subject: subject, rollup: rollup, last: last}
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
	m, roll := w.markMsg(data)
	// The mark's id is the lease's own (see put): a repeat of a mark
	// whose answer was lost is recognised, not taken for a newer holder's.
	m.Header.Del(jetstream.ExpectedLastSubjSeqHeader)
	// Counted on the lease, not the Writer: a stream's duplicate window
	// spans its subjects, and a lease may have two Writers on one stream.
	m.Header.Set(jetstream.MsgIDHeader, fmt.Sprintf("%s-f%d", w.le.token, w.le.marks.Add(1)))
	seq, err := w.le.l.c.Put(ctx, w.st, m, w.last)
	if natsx.WrongLast(err) {
		return fmt.Errorf("%w: %s's write to %s", ErrFenced, w.le.Holder, w.subject)
	}
	if err != nil {
		return err
	}
	w.last = seq
	w.stored(roll)
	return nil
}

package bus

import (
	"context"
	"encoding/json"
	"errors"
	"iter"
	"math/rand/v2"
	"slices"
	"strconv"
	"time"

	"github.com/plasmodium/pm/internal/secret"
)

// Log is a log that numbers what it holds 1, 2, 3… in the order it
// accepted it, and never reuses a number (a purge keeps counting): a hub's
// stream (internal/natsx/natsbus). Seq is the bus over one.
type Log interface {
	// Append stores line under id (a retried append of the same id is
	// stored once) and returns its number.
	Append(ctx context.Context, id string, line []byte) (uint64, error)
	// Bounds are the first and last numbers held: first is last+1 when
	// the log is empty (0, 0 when it never held anything).
	Bounds(ctx context.Context) (first, last uint64, err error)
	// Range calls fn with each line held numbered lo to hi, in order, and
	// returns without waiting for more.
	Range(ctx context.Context, lo, hi uint64, fn func(seq uint64, line []byte) error) error
	// Follow calls fn with each line numbered above after, in order, then
	// with each new one, until fn returns ErrStopFollow (nil), fails, or
	// ctx ends (ctx's error). It does not poll.
	Follow(ctx context.Context, after uint64, fn func(seq uint64, line []byte) error) error
	// Purge drops every line; numbering goes on after the last.
	Purge(ctx context.Context) error
}

// ErrStopFollow, returned by a Log.Follow callback, ends the follow.
var ErrStopFollow = errors.New("bus: stop following")

// Seq is the bus over a Log: an event's cursor is its number, the same on
// every machine that reads the log, so a follower anywhere resumes from a
// cursor. Publishing stamps, masks and encodes as File does.
type Seq struct {
	Log     Log
	Ctx     context.Context  // bounds the log's requests (nil: Background)
	Now     func() time.Time // nil: time.Now
	Secrets secret.Set
}

var _ Bus = (*Seq)(nil)

func (b *Seq) ctx() context.Context {
	if b.Ctx == nil {
		return context.Background()
	}
	return b.Ctx
}

// seqCursor is the cursor after event number n (the zero Cursor before
// the first). A Seq cursor has no file identity: a purge keeps the
// numbering, so an old cursor still names a place.
func seqCursor(n uint64) Cursor { return Cursor{off: int64(n)} }

// Publish stamps ev and appends its line.
func (b *Seq) Publish(ev Event) error {
	raw, err := encode(ev, b.Now, b.Secrets)
	if err != nil {
		return err
	}
	// The id makes a publish the log retries land once.
	_, err = b.Log.Append(b.ctx(), strconv.FormatUint(rand.Uint64(), 36), raw)
	return err
}

// Tail returns the last n events and the cursor at the end.
func (b *Seq) Tail(n int) ([]Delivery, Cursor, error) { return b.TailWhere(n, nil) }

// TailWhere reads windows of the log backwards from its end until it has
// the last n events keep accepts (or reaches the first).
func (b *Seq) TailWhere(n int, keep func(Event) bool) ([]Delivery, Cursor, error) {
	first, last, err := b.Log.Bounds(b.ctx())
	if err != nil {
		return nil, Cursor{}, err
	}
	end := seqCursor(last)
	if n <= 0 || last == 0 || last < first {
		return nil, end, nil
	}
	var out []Delivery // newest first
	window := uint64(max(n, 16))
	for hi := last; hi >= first && len(out) < n; {
		lo := max(first, hi-min(hi, window)+1)
		ds, err := b.read(lo, hi)
		if err != nil {
			return nil, Cursor{}, err
		}
		for _, d := range slices.Backward(ds) {
			if keep == nil || keep(headerOf(d.Event)) {
				d.Next = end // as File's Tail: one cursor, the end
				if out = append(out, d); len(out) == n {
					break
				}
			}
		}
		if lo == first {
			break
		}
		hi, window = lo-1, window*2
	}
	slices.Reverse(out)
	return out, end, nil
}

// read is the events numbered lo to hi, each with the cursor after it.
func (b *Seq) read(lo, hi uint64) ([]Delivery, error) {
	var out []Delivery
	err := b.Log.Range(b.ctx(), lo, hi, func(seq uint64, line []byte) error {
		if d, ok := b.decode(seq, line); ok {
			out = append(out, d)
		}
		return nil
	})
	return out, err
}

// decode reads one stored line; one that is no event is skipped, as on
// every bus (only pm writes the log).
func (b *Seq) decode(seq uint64, line []byte) (Delivery, bool) {
	var ev Event
	if err := json.Unmarshal(line, &ev); err != nil {
		return Delivery{}, false
	}
	return Delivery{Event: ev, Raw: line, Next: seqCursor(seq)}, true
}

// Before returns the last n events before from; see Bus.
func (b *Seq) Before(from Cursor, n int) ([]Delivery, error) {
	if from.off <= 0 || n <= 0 || from.id != 0 {
		return nil, nil
	}
	first, last, err := b.Log.Bounds(b.ctx())
	if err != nil {
		return nil, err
	}
	hi := uint64(from.off)
	if last == 0 || hi > last || hi < first {
		return nil, nil // past the end (another log), or before what is held (reset)
	}
	lo := max(first, hi-min(hi-1, uint64(n)-1))
	ds, err := b.read(lo, hi)
	if err != nil {
		return nil, err
	}
	ds = ds[max(0, len(ds)-n):]
	for i := range ds {
		ds[i].Next = from
	}
	return ds, nil
}

// Subscribe follows the log after from; a cursor that is not this log's
// (past its end, or another bus's) starts at its beginning.
func (b *Seq) Subscribe(ctx context.Context, from Cursor) iter.Seq2[Delivery, error] {
	return func(yield func(Delivery, error) bool) {
		after := uint64(from.off)
		if from.id != 0 {
			after = 0
		} else if after > 0 {
			_, last, err := b.Log.Bounds(ctx)
			if err != nil {
				yield(Delivery{}, err)
				return
			}
			if after > last {
				after = 0
			}
		}
		stopped := false
		err := b.Log.Follow(ctx, after, func(seq uint64, line []byte) error {
			d, ok := b.decode(seq, line)
			if !ok {
				return nil
			}
			if !yield(d, nil) {
				stopped = true
				return ErrStopFollow
			}
			return nil
		})
		if stopped {
			return
		}
		if err == nil {
			err = ctx.Err()
		}
		if err != nil {
			yield(Delivery{}, err)
		}
	}
}

// Reset empties the log; a subscriber holding an older cursor continues
// with what is published next (the numbering goes on).
func (b *Seq) Reset() error { return b.Log.Purge(b.ctx()) }

package bus

import (
	"context"
	"encoding/json"
	"iter"
	"slices"
	"sync"
	"time"

	"github.com/plasmodium/pm/internal/secret"
)

// Mem is a bus in memory, for tests: the same contract as File (stamping,
// masking, the line limit, cursors that survive Reset) without a file.
// The zero value is ready to use.
type Mem struct {
	Now     func() time.Time // nil: time.Now
	Secrets secret.Set

	mu      sync.Mutex
	gen     uint32 // bumped by Reset; a cursor's id
	events  []Delivery
	changed chan struct{} // closed and replaced on every Publish and Reset
}

var _ Bus = (*Mem)(nil)

// Publish stamps ev, encodes it as File would and appends it.
func (b *Mem) Publish(ev Event) error {
	raw, err := encode(ev, b.Now, b.Secrets)
	if err != nil {
		return err
	}
	// Hand out what a reader of the line would decode (times and data as JSON has them).
	var back Event
	if err := json.Unmarshal(raw, &back); err != nil {
		return err
	}
	b.mu.Lock()
	defer b.mu.Unlock()
	b.events = append(b.events, Delivery{Event: back, Raw: raw, Next: Cursor{off: int64(len(b.events) + 1), id: b.gen}})
	b.notifyLocked()
	return nil
}

// Tail returns the last n events and the cursor at the end.
func (b *Mem) Tail(n int) ([]Delivery, Cursor, error) { return b.TailWhere(n, nil) }

// TailWhere returns the last n events keep accepts and the cursor at the end.
func (b *Mem) TailWhere(n int, keep func(Event) bool) ([]Delivery, Cursor, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	end := b.endLocked()
	var out []Delivery
	for i := len(b.events) - 1; i >= 0 && len(out) < n; i-- {
		if ev := b.events[i].Event; keep == nil || keep(headerOf(ev)) {
			d := b.events[i]
			d.Next = end // as File's Tail: one cursor, the end
			out = append(out, d)
		}
	}
	slices.Reverse(out)
	return out, end, nil
}

// Before returns the last n events before from; see Bus.
func (b *Mem) Before(from Cursor, n int) ([]Delivery, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	if from.off == 0 || from.off > int64(len(b.events)) || from.id != b.gen {
		return nil, nil
	}
	out := slices.Clone(b.events[max(0, from.off-int64(n)):from.off])
	for i := range out {
		out[i].Next = from
	}
	return out, nil
}

// Subscribe yields the events after from, then waits for Publish.
func (b *Mem) Subscribe(ctx context.Context, from Cursor) iter.Seq2[Delivery, error] {
	return func(yield func(Delivery, error) bool) {
		pos := from
		for {
			batch, changed := b.after(&pos)
			for _, d := range batch {
				if !yield(d, nil) {
					return
				}
			}
			if len(batch) > 0 {
				continue // more may have come while we yielded
			}
			select {
			case <-ctx.Done():
				yield(Delivery{}, ctx.Err())
				return
			case <-changed:
			}
		}
	}
}

// after returns the events after *pos (restarting at the beginning when pos
// is from before a Reset), advances *pos past them, and the channel that
// closes on the next change.
func (b *Mem) after(pos *Cursor) ([]Delivery, <-chan struct{}) {
	b.mu.Lock()
	defer b.mu.Unlock()
	if pos.off > int64(len(b.events)) || (pos.off > 0 && pos.id != b.gen) {
		*pos = Cursor{}
	}
	batch := append([]Delivery(nil), b.events[pos.off:]...)
	*pos = b.endLocked()
	if b.changed == nil {
		b.changed = make(chan struct{})
	}
	return batch, b.changed
}

// Reset empties the bus and starts a new generation.
func (b *Mem) Reset() error {
	b.mu.Lock()
	defer b.mu.Unlock()
	b.events = nil
	b.gen++
	b.notifyLocked()
	return nil
}

func (b *Mem) endLocked() Cursor {
	if len(b.events) == 0 {
		return Cursor{}
	}
	return Cursor{off: int64(len(b.events)), id: b.gen}
}

func (b *Mem) notifyLocked() {
	if b.changed != nil {
		close(b.changed)
	}
	b.changed = make(chan struct{})
}

// headerOf is ev as TailWhere's filter sees it on every bus: no Text, no Data.
func headerOf(ev Event) Event {
	ev.Text, ev.Data = "", nil
	return ev
}

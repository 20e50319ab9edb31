package bus

import (
	"context"
	"encoding/json"
	"errors"
	"iter"
	"os"
	"time"

	"github.com/plasmodium/pm/internal/jsonl"
	"github.com/plasmodium/pm/internal/lockedfile"
	"github.com/plasmodium/pm/internal/secret"
)

// File is the bus over one JSONL file, .plasmodium/events.jsonl: appends are
// locked and whole (jsonl.Append), followers wake on file events.
type File struct {
	Path    string
	Now     func() time.Time    // nil: time.Now
	Secrets secret.Set          // masked in every event's text and data
	Bad     func(jsonl.BadLine) // skipped lines are reported here
	Wait    WaitFunc            // nil: watch.Until
}

var _ Bus = (*File)(nil)

// Publish appends ev as one line under the file's lock.
func (b *File) Publish(ev Event) error {
	ev, err := stamp(ev, b.Now, b.Secrets)
	if err != nil {
		return err
	}
	return jsonl.Append(b.Path, ev)
}

// Tail reads the last n events backwards from the end of the file.
func (b *File) Tail(n int) ([]Delivery, Cursor, error) { return b.TailWhere(n, nil) }

// TailWhere reads backwards from the end of the file until it has the last n
// events keep accepts; the cost is linear in the lines it passes.
func (b *File) TailWhere(n int, keep func(Event) bool) ([]Delivery, Cursor, error) {
	f, err := os.Open(b.Path)
	if errors.Is(err, os.ErrNotExist) {
		return nil, Cursor{}, nil
	}
	if err != nil {
		return nil, Cursor{}, err
	}
	defer f.Close()
	var match func([]byte) bool
	if keep != nil {
		match = func(raw []byte) bool {
			var h header
			// A line that is no event is kept here so decode reports it below.
			return json.Unmarshal(raw, &h) != nil || keep(Event{Time: h.Time, Kind: h.Kind, Actor: h.Actor,
				TaskID: h.TaskID, PhaseID: h.PhaseID, MsgID: h.MsgID, Agent: h.Agent})
		}
	}
	lines, end, err := jsonl.TailMatch(f, b.Path, n, match, b.Bad)
	if err != nil {
		return nil, Cursor{}, err
	}
	id := &ident{f: f}
	sum, err := id.at(end)
	if err != nil {
		return nil, Cursor{}, err
	}
	endCur := Cursor{off: end, id: sum}
	var out []Delivery
	for _, raw := range lines {
		// Tail knows no per-line offsets; each carries the end cursor.
		if ev, ok := b.decode(raw, -1); ok {
			out = append(out, Delivery{Event: ev, Raw: raw, Next: endCur})
		}
	}
	return out, endCur, nil
}

// header is an event without its text and data: what TailWhere's filter
// sees, so skipping many lines costs little.
type header struct {
	Time    time.Time `json:"ts"`
	Kind    Kind      `json:"kind"`
	Actor   string    `json:"actor"`
	TaskID  string    `json:"task_id"`
	PhaseID string    `json:"phase_id"`
	MsgID   string    `json:"msg_id"`
	Agent   string    `json:"agent"`
}

// Before reads backwards from from; see Bus.
func (b *File) Before(from Cursor, n int) ([]Delivery, error) {
	if from.off == 0 || n <= 0 {
		return nil, nil
	}
	f, err := os.Open(b.Path)
	if errors.Is(err, os.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	defer f.Close()
	st, err := f.Stat()
	if err != nil {
		return nil, err
	}
	id := &ident{f: f}
	if sum, err := id.at(from.off); err != nil || from.off > st.Size() || sum != from.id {
		return nil, err // another file under the same name: nothing led up to from in it
	}
	lines, err := jsonl.TailBefore(f, b.Path, from.off, n, b.Bad)
	if err != nil {
		return nil, err
	}
	out := make([]Delivery, 0, len(lines))
	for _, raw := range lines {
		if ev, ok := b.decode(raw, -1); ok {
			out = append(out, Delivery{Event: ev, Raw: raw, Next: from})
		}
	}
	return out, nil
}

// Subscribe follows the file from from; see Bus.
func (b *File) Subscribe(ctx context.Context, from Cursor) iter.Seq2[Delivery, error] {
	fl := &Follower{Path: b.Path, Bad: b.Bad, Wait: b.Wait}
	return func(yield func(Delivery, error) bool) {
		for l, err := range fl.Lines(ctx, from) {
			if err != nil {
				yield(Delivery{}, err)
				return
			}
			ev, ok := b.decode(l.Raw, l.Next.off-int64(len(l.Raw))-1)
			if !ok {
				continue
			}
			if !yield(Delivery{Event: ev, Raw: l.Raw, Next: l.Next}, nil) {
				return
			}
		}
	}
}

// decode reads a valid JSON line as an Event; a line that is JSON but no
// event is reported and skipped like a torn one. start is the line's offset
// (-1 when unknown).
func (b *File) decode(raw []byte, start int64) (Event, bool) {
	var ev Event
	if err := json.Unmarshal(raw, &ev); err != nil {
		if b.Bad != nil {
			b.Bad(jsonl.BadLine{Path: b.Path, Offset: max(start, 0), Reason: "line is not an event: " + err.Error()})
		}
		return Event{}, false
	}
	return ev, true
}

// Reset removes the file and its lock file; the next Publish starts a new
// file, which followers detect and read from its beginning.
func (b *File) Reset() error {
	for _, p := range []string{b.Path, lockedfile.LockPath(b.Path)} {
		if err := os.Remove(p); err != nil && !errors.Is(err, os.ErrNotExist) {
			return err
		}
	}
	return nil
}

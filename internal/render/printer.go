package render

import (
	"io"
	"math"
	"time"

	"github.com/plasmodium/pm/internal/store"
)

// Printer is PrintMessage for a run of messages decoded as views (pm chat,
// store.ReadMessageViews), with the same output byte for byte
// (FuzzPrintView): the decoder's classes (store.TextClass) say whether a
// message needs escaping, so its text is not scanned again, and the local
// clock of a timestamp comes from the zone's span (the zone in effect,
// its offset and the instants it starts and ends), looked up once per
// span instead of once per message. A plain message is appended to the
// writer's free buffer as printPlain does; any other goes to
// PrintMessage. The zero Printer is ready.
type Printer struct {
	zone localZone
}

// Print writes v's message as PrintMessage(w, v.Message) does.
func (p *Printer) Print(w io.Writer, v *store.MessageView) {
	aw, ok := w.(appendWriter)
	if !ok || v.AuthorClass != 0 || v.RoleClass != 0 || v.ContentClass&^store.TextBreaks != 0 {
		PrintMessage(w, v.Message)
		return
	}
	// A line longer than the free buffer would be appended to a copy:
	// flush first (content's lines each gain an indent of four).
	need := 32 + len(v.Author) + len(v.Role) + len(v.Content)
	if v.ContentClass&store.TextBreaks != 0 {
		need += 4 * len(v.Content)
	}
	if f, ok := w.(flusher); ok && f.Available() < need {
		f.Flush() // an error stays with the writer, and its owner's Flush reports it
	}
	h, mi, s := p.zone.clock(v.Timestamp)
	aw.Write(appendPlain(aw.AvailableBuffer(), &v.Message, h, mi, s))
}

// flusher is a buffered writer (bufio.Writer).
type flusher interface {
	Available() int
	Flush() error
}

// localZone is the span of time.Local's zone the last clock fell in.
type localZone struct {
	loc      *time.Location
	from, to int64 // unix seconds: [from, to)
	offset   int64 // seconds east of UTC
}

// clock is t.Local().Clock().
func (z *localZone) clock(t time.Time) (h, m, s int) {
	u := t.Unix()
	if z.loc != time.Local || u < z.from || u >= z.to {
		lt := t.Local()
		_, off := lt.Zone()
		start, end := lt.ZoneBounds() // zero: the zone has no start, no end
		z.loc, z.offset, z.from, z.to = time.Local, int64(off), math.MinInt64, math.MaxInt64
		if !start.IsZero() {
			z.from = start.Unix()
		}
		if !end.IsZero() {
			z.to = end.Unix()
		}
	}
	// Days start at multiples of 86400 local seconds (no leap seconds).
	d := (u + z.offset) % 86400
	if d < 0 {
		d += 86400
	}
	return int(d / 3600), int(d / 60 % 60), int(d % 60)
}

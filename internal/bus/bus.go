package bus

import (
	"context"
	"iter"
)

// Bus is where pm announces what happened. Two implementations share the
// contract: File (events.jsonl, what pm runs on) and Mem (tests).
type Bus interface {
	// Publish stamps ev (time, actor, masked secrets) and appends it. Its
	// error is the caller's to report: see the package doc for the policy.
	Publish(ev Event) error
	// Tail returns the last n events, oldest first, and the cursor after
	// the last one (the end of the bus now: Subscribe from it for what comes next).
	Tail(n int) ([]Delivery, Cursor, error)
	// TailWhere is Tail counting only the events keep accepts (nil: all):
	// pm log --kind phase -n 5 is the last five phase events. keep sees an
	// event's header (time, kind, actor, ids), not its Text or Data, so a
	// filter that passes many lines stays cheap.
	TailWhere(n int, keep func(Event) bool) ([]Delivery, Cursor, error)
	// Subscribe yields every event after from exactly once, in order, each
	// with the cursor just past it, then waits for more until ctx ends (its
	// error is yielded last) or the consumer stops ranging.
	Subscribe(ctx context.Context, from Cursor) iter.Seq2[Delivery, error]
	// Before returns the last n events before from, oldest first, each
	// with from as its cursor (a follower resuming at from replays what led
	// up to it: the dashboard's message-log depths). None when from is the
	// beginning or is not a position of this bus (it was reset).
	Before(from Cursor, n int) ([]Delivery, error)
	// Reset empties the bus (pm reset). Subscribers holding an older cursor
	// continue at the beginning of the new bus.
	Reset() error
}

// Delivery is one event handed to a subscriber. Its Raw and Event.Data may
// be shared with other subscribers: read them, do not modify them.
type Delivery struct {
	Event Event
	Raw   []byte // the event's JSON line as stored, without its newline
	Next  Cursor // resume here to get the events after this one
}

package bus

import (
	"context"
	"iter"
)

// Unavailable is a bus that cannot be used here: every call fails with
// Err. The store hands it out for a project on a hub whose records (and
// with them the hub's bus) were not opened, so an event is never written
// to, or read from, a local file the other machines do not see.
type Unavailable struct{ Err error }

var _ Bus = Unavailable{}

func (u Unavailable) Publish(Event) error                    { return u.Err }
func (u Unavailable) Tail(int) ([]Delivery, Cursor, error)   { return nil, Cursor{}, u.Err }
func (u Unavailable) Before(Cursor, int) ([]Delivery, error) { return nil, u.Err }
func (u Unavailable) Reset() error                           { return u.Err }
func (u Unavailable) TailWhere(int, func(Event) bool) ([]Delivery, Cursor, error) {
	return nil, Cursor{}, u.Err
}

// Subscribe yields Err.
func (u Unavailable) Subscribe(context.Context, Cursor) iter.Seq2[Delivery, error] {
	return func(yield func(Delivery, error) bool) { yield(Delivery{}, u.Err) }
}

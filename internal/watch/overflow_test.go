package watch

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/fsnotify/fsnotify"
)

// fakeSource is a watcher whose events and errors the test sends by hand.
type fakeSource struct {
	events chan fsnotify.Event
	errors chan error
	added  []string
}

func (f *fakeSource) Add(dir string) error          { f.added = append(f.added, dir); return nil }
func (f *fakeSource) Events() <-chan fsnotify.Event { return f.events }
func (f *fakeSource) Errors() <-chan error          { return f.errors }

// A watcher error (the kernel queue overflowed, so events were lost) wakes
// the waiter to re-check and re-add its watches; it never ends the wait.
func TestUntilRechecksOnWatcherError(t *testing.T) {
	cases := []struct {
		name string
		send func(f *fakeSource)
	}{
		{"overflow", func(f *fakeSource) { f.errors <- fsnotify.ErrEventOverflow }},
		{"read error", func(f *fakeSource) { f.errors <- errors.New("read failed") }},
		{"event", func(f *fakeSource) { f.events <- fsnotify.Event{Name: "x", Op: fsnotify.Write} }},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			f := &fakeSource{events: make(chan fsnotify.Event), errors: make(chan error)}
			ctx, cancel := context.WithTimeout(context.Background(), time.Minute) // hang guard only
			defer cancel()
			checks := make(chan int, 2)
			n := 0
			done := make(chan error, 1)
			go func() {
				done <- until(ctx, f, func() []string { return []string{"d"} }, func() (bool, error) {
					n++
					checks <- n
					return n == 2, nil
				})
			}()
			<-checks  // the first check ran, the waiter blocks next
			c.send(f) // unbuffered: received by the waiter's select
			if got := <-checks; got != 2 {
				t.Fatalf("check %d after the wake-up, want 2", got)
			}
			if err := <-done; err != nil {
				t.Fatalf("until = %v, want nil", err)
			}
			if c.name != "event" && len(f.added) != 2 {
				t.Fatalf("watches added %v, want them added again after the error", f.added)
			}
		})
	}
}

// Closed channels (the watcher went away) end the wait with an error
// rather than spinning.
func TestUntilEndsOnClosedWatcher(t *testing.T) {
	f := &fakeSource{events: make(chan fsnotify.Event), errors: make(chan error)}
	close(f.errors)
	err := until(context.Background(), f, func() []string { return nil }, func() (bool, error) { return false, nil })
	if !errors.Is(err, errClosed) {
		t.Fatalf("until = %v, want errClosed", err)
	}
}

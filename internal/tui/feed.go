package tui

import (
	"context"

	tea "github.com/charmbracelet/bubbletea"

	"github.com/plasmodium/pm/internal/bus"
)

// feed carries what background work (the bus subscription, a reply being
// streamed) tells the model. One next() is outstanding at a time: the
// model re-arms it after each feedMsg.
type feed struct {
	ctx context.Context
	ch  chan tea.Msg
}

// feedMsg wraps a message that came through the feed.
type feedMsg struct{ msg tea.Msg }

func newFeed(ctx context.Context) *feed { return &feed{ctx: ctx, ch: make(chan tea.Msg, 64)} }

// push hands msg to the model, or drops it once the screen is gone.
func (f *feed) push(msg tea.Msg) {
	select {
	case f.ch <- msg:
	case <-f.ctx.Done():
	}
}

// next waits for the feed's next message.
func (f *feed) next() tea.Msg {
	select {
	case m := <-f.ch:
		return feedMsg{m}
	case <-f.ctx.Done():
		return nil
	}
}

// busMsg is one event from the bus.
type busMsg struct{ ev bus.Event }

// pastMsg is the bus's last events before the screen opened, oldest first.
type pastMsg struct{ evs []bus.Event }

// follow hands the feed the bus's last `past` events at once, then streams
// it from there until ctx ends.
func (f *feed) follow(b bus.Bus, past int) {
	if b == nil {
		return
	}
	ds, end, err := b.Tail(past)
	if err != nil {
		f.push(errMsg{err})
		return
	}
	if len(ds) > 0 {
		evs := make([]bus.Event, len(ds))
		for i, d := range ds {
			evs[i] = d.Event
		}
		f.push(pastMsg{evs})
	}
	go func() {
		for d, err := range b.Subscribe(f.ctx, end) {
			if err != nil {
				if f.ctx.Err() == nil {
					f.push(errMsg{err})
				}
				return
			}
			f.push(busMsg{d.Event})
		}
	}()
}

// errMsg is a failure to show in the status line.
type errMsg struct{ err error }

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

// follow streams the bus from its end into the feed until ctx ends.
func (f *feed) follow(b bus.Bus) {
	if b == nil {
		return
	}
	_, end, err := b.Tail(0)
	if err != nil {
		f.push(errMsg{err})
		return
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

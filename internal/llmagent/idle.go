package llmagent

import (
	"context"
	"errors"
	"time"

	"github.com/plasmodium/pm/internal/inbox"
	"github.com/plasmodium/pm/internal/store"
)

var errIdle = errors.New("idle")

// idleOut returns a context that ends with errIdle once the resident has
// had nothing to do for runtime.resident_idle, and the timer to pause while
// a request is handled. With resident_idle "0" it never fires.
func (r *Runner) idleOut(ctx context.Context, a *store.Agent) (context.Context, *idleTimer) {
	ctx, cancel := context.WithCancelCause(ctx)
	it := &idleTimer{after: r.Store.Config().Runtime.ResidentIdleAfter(), cancel: cancel}
	if it.after == 0 {
		return ctx, it
	}
	it.t = time.AfterFunc(it.after, func() {
		out, err := inbox.IdleOut(r.Store, r.State, a.Name, a.Pid)
		switch {
		case out:
			it.cancel(errIdle)
		case err == nil:
			it.Reset() // a message came in meanwhile: serve it, then wait again
		}
	})
	return ctx, it
}

// idleTimer is a resident's idle clock; a zero after never fires.
type idleTimer struct {
	after  time.Duration
	t      *time.Timer
	cancel context.CancelCauseFunc
}

// Close stops the clock for good and releases its context.
func (it *idleTimer) Close() {
	it.Stop()
	it.cancel(context.Canceled)
}

func (it *idleTimer) Stop() {
	if it.t != nil {
		it.t.Stop()
	}
}

func (it *idleTimer) Reset() {
	if it.t != nil {
		it.t.Reset(it.after)
	}
}

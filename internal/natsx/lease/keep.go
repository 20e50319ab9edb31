package lease

import (
	"context"
	"errors"
	"sync"
	"time"
)

// Keep is the one renewal loop of every lease pm holds on a hub: an
// agent's (its host), a worker's registration, a critical section's. It
// renews every third of the TTL and, when the holder asks for it
// (OnLoss), fences on loss: a renewal refused, a loss the holder learnt
// otherwise (Lose: a fence mark refused), or no renewal acknowledged
// within the TTL less a fifth after it was sent, by this machine's clock.
// The hub expires a key no earlier than a TTL after the last renewal it
// stored, which came after that renewal was sent, so a holder fenced by
// the deadline has stopped before any other holder can take the lease.

// Margin is how much before the TTL a holder with no acknowledged renewal
// counts its lease lost: time to stop what it runs before the hub lets
// another holder take it.
func Margin(ttl time.Duration) time.Duration { return ttl / 5 }

// KeepOptions say what a loss is and who hears of it.
type KeepOptions struct {
	// IsLost says which renewal errors mean the lease is gone (nil:
	// errors.Is(err, ErrLost)); any other error is tried again at the
	// next tick.
	IsLost func(error) bool
	// OnLoss, when set, is called once when the lease is lost; it also
	// arms the deadline (no renewal acknowledged within the TTL less
	// Margin is a loss). Without it a loss only ends the renewals.
	OnLoss func(why error)
	// Warn hears a renewal that failed without a loss (nil: nothing).
	Warn func(error)
	// Since is when the lease was last written (its acquire sent); the
	// first deadline counts from it. Zero: Keep's call.
	Since time.Time
}

// Kept is a lease being kept.
type Kept struct {
	ttl    time.Duration
	renew  func(context.Context) error
	o      KeepOptions
	lost   chan struct{}
	once   sync.Once
	why    error
	stop   chan struct{}
	done   chan struct{}
	timer  *time.Timer // the deadline: lose unless a renewal resets it
	mu     sync.Mutex
	closed bool // Stop was called: no loss is reported after it
}

// ErrDeadline: no renewal of the lease was acknowledged within its TTL
// less Margin.
var ErrDeadline = errors.New("lease: no renewal succeeded within its TTL")

// Keep renews through renew every ttl/3 (each attempt bounded by ttl/3)
// until Stop, ctx's end, or a loss. A ttl of 0 renews nothing (a lease
// that cannot expire: the files'), and is lost only through Lose.
func Keep(ctx context.Context, ttl time.Duration, renew func(context.Context) error, o KeepOptions) *Kept {
	if o.IsLost == nil {
		o.IsLost = func(err error) bool { return errors.Is(err, ErrLost) }
	}
	if o.Since.IsZero() {
		o.Since = time.Now()
	}
	k := &Kept{ttl: ttl, renew: renew, o: o, lost: make(chan struct{}), stop: make(chan struct{}), done: make(chan struct{})}
	if ttl <= 0 || renew == nil {
		close(k.done)
		return k
	}
	if o.OnLoss != nil {
		k.timer = time.AfterFunc(time.Until(o.Since.Add(ttl-Margin(ttl))), func() { k.Lose(ErrDeadline) })
	}
	go k.loop(ctx)
	return k
}

func (k *Kept) loop(ctx context.Context) {
	defer close(k.done)
	tick := time.NewTicker(k.ttl / 3)
	defer tick.Stop()
	for {
		select {
		case <-k.stop:
			return
		case <-k.lost:
			return
		case <-ctx.Done():
			return
		case <-tick.C:
		}
		sent := time.Now()
		op, cancel := context.WithTimeout(ctx, k.ttl/3)
		err := k.renew(op)
		cancel()
		switch {
		case err == nil:
			if k.timer != nil {
				k.timer.Reset(time.Until(sent.Add(k.ttl - Margin(k.ttl))))
			}
		case k.o.IsLost(err):
			k.Lose(err)
			return
		case k.o.Warn != nil:
			k.o.Warn(err) // the hub did not answer: again at the next tick, until the deadline
		}
	}
}

// Lose marks the lease lost (once: the first reason stays) and tells
// OnLoss, unless the holder stopped keeping it first.
func (k *Kept) Lose(why error) {
	k.mu.Lock()
	defer k.mu.Unlock()
	if k.closed {
		return
	}
	k.once.Do(func() {
		k.why = why
		if k.o.OnLoss != nil {
			k.o.OnLoss(why) // before Lost closes: a waiter on it sees what OnLoss did
		}
		close(k.lost)
	})
}

// Lost is closed once the lease is lost.
func (k *Kept) Lost() <-chan struct{} { return k.lost }

// IsLost reports whether the lease is lost.
func (k *Kept) IsLost() bool {
	select {
	case <-k.lost:
		return true
	default:
		return false
	}
}

// Why is the loss's reason (nil while kept).
func (k *Kept) Why() error {
	if !k.IsLost() {
		return nil
	}
	return k.why
}

// Stop ends the renewals and returns once none is in flight (the holder
// may release the lease then); no loss is reported after it.
func (k *Kept) Stop() {
	k.mu.Lock()
	if k.closed {
		k.mu.Unlock()
		<-k.done
		return
	}
	k.closed = true
	k.mu.Unlock()
	close(k.stop)
	if k.timer != nil {
		k.timer.Stop()
	}
	<-k.done
}

package lease_test

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/plasmodium/pm/internal/natsx/lease"
)

// Keep, the one renewal loop: it renews until stopped and reports no loss
// then; a refused renewal, a loss learnt otherwise (Lose) or no renewal
// answered by the deadline is one loss, reported once, and ends the
// renewals; a failure that is no loss is tried again.
func TestKeep(t *testing.T) {
	refused := fmt.Errorf("renew: %w", lease.ErrLost)
	timeout := errors.New("no answer")
	mine := errors.New("my kind of loss")
	cases := []struct {
		name    string
		answers []error // renewal i answers answers[min(i, len-1)]
		isLost  func(error) bool
		lose    error // Lose(lose) after the first renewal
		noFence bool  // no OnLoss: no deadline
		want    error // the loss (nil: kept until Stop)
	}{
		{name: "kept until stopped", answers: []error{nil}},
		{name: "a renewal refused", answers: []error{nil, refused}, want: lease.ErrLost},
		{name: "failures tried again (no deadline asked)", answers: []error{timeout}, noFence: true},
		{name: "no renewal answered by the deadline", answers: []error{timeout}, want: lease.ErrDeadline},
		{name: "a loss learnt otherwise", answers: []error{nil}, lose: refused, want: lease.ErrLost},
		{name: "the holder's own kind of loss", answers: []error{nil, mine}, isLost: func(err error) bool { return errors.Is(err, mine) }, want: mine},
	}
	const hang = 20 * time.Second
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			var mu sync.Mutex
			n := 0
			renewed := make(chan int, 64)
			renew := func(context.Context) error {
				mu.Lock()
				defer mu.Unlock()
				err := tc.answers[min(n, len(tc.answers)-1)]
				n++
				renewed <- n
				return err
			}
			losses := make(chan error, 4)
			o := lease.KeepOptions{IsLost: tc.isLost, OnLoss: func(why error) { losses <- why }}
			if tc.noFence {
				o.OnLoss = nil
			}
			// A TTL long enough that a loaded machine's late tick does not
			// reach the deadline (a renewal every second, the deadline 2.4 s
			// after the last one sent).
			k := lease.Keep(context.Background(), 3*time.Second, renew, o)
			// Two renewals (or one and the loss) have come: each is awaited,
			// never timed.
			select {
			case <-renewed:
			case <-time.After(hang):
				t.Fatal("no renewal came")
			}
			if tc.lose != nil {
				k.Lose(tc.lose)
			}
			if tc.want == nil {
				for range 2 {
					select {
					case <-renewed:
					case why := <-losses:
						t.Fatalf("a kept lease was lost: %v", why)
					case <-time.After(hang):
						t.Fatal("renewals stopped")
					}
				}
				k.Stop()
				if k.IsLost() || k.Why() != nil {
					t.Fatalf("lost after Stop: %v", k.Why())
				}
				k.Lose(refused) // after Stop: nothing
				if k.IsLost() {
					t.Fatal("Lose after Stop lost the lease")
				}
				return
			}
			select {
			case why := <-losses:
				if !errors.Is(why, tc.want) {
					t.Fatalf("lost with %v, want %v", why, tc.want)
				}
			case <-time.After(hang):
				t.Fatal("the loss never came")
			}
			<-k.Lost()
			if !errors.Is(k.Why(), tc.want) {
				t.Fatalf("Why %v, want %v", k.Why(), tc.want)
			}
			k.Lose(errors.New("a second loss"))
			k.Stop() // returns: the renewals ended with the loss
			mu.Lock()
			after := n
			mu.Unlock()
			select {
			case why := <-losses:
				t.Fatalf("a second loss reported: %v", why)
			default:
			}
			// No renewal after the loss: the loop has ended (Stop waited).
			mu.Lock()
			if n != after {
				t.Fatalf("renewed after the loss (%d, then %d)", after, n)
			}
			mu.Unlock()
		})
	}
}

// A lease of no TTL (the files') renews nothing and is lost only through
// Lose.
func TestKeepNoTTL(t *testing.T) {
	k := lease.Keep(context.Background(), 0, nil, lease.KeepOptions{OnLoss: func(error) {}})
	if k.IsLost() {
		t.Fatal("lost at once")
	}
	k.Lose(lease.ErrFenced)
	if !errors.Is(k.Why(), lease.ErrFenced) {
		t.Fatalf("Why %v", k.Why())
	}
	k.Stop()
}

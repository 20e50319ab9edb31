package natsstate_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"testing"
	"time"

	"github.com/nats-io/nats.go/jetstream"

	"github.com/plasmodium/pm/internal/hub/hubtest"
	"github.com/plasmodium/pm/internal/natsx"
	"github.com/plasmodium/pm/internal/state"
	"github.com/plasmodium/pm/internal/state/natsstate"
)

// watchBound is how long a test lets a Watch wait for a change it made
// before it calls the watch asleep: no speed assertion, only a hang's.
const watchBound = 2 * time.Minute

// mailWatch watches the agent's scope on st until its mailbox holds an
// entry; checks receives each check's call. It returns once the watch
// has made its first check (its consumers exist), and done ends with the
// watch's error.
func mailWatch(t *testing.T, st *natsstate.State, scope state.Scope) (checks chan int, done chan error) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), watchBound)
	t.Cleanup(cancel)
	checks, done = make(chan int, 1000), make(chan error, 1)
	n := 0
	go func() {
		done <- st.Watch(ctx, scope, func() (bool, error) {
			n++
			checks <- n
			end, err := st.MailboxEnd(scope.Agent)
			return end > 0, err
		})
	}()
	select {
	case <-checks:
	case err := <-done:
		t.Fatalf("the watch ended before its first check: %v", err)
	}
	return checks, done
}

// A waiter on an agent's mailbox (a resident's Serve) is not woken by the
// pieces of the agent's own streamed reply: only a watch that asks for
// the reply stream (Scope.Replies, a caller waiting on the reply) is.
// Each piece woke the resident's own wait before (a check, reading its
// mailbox, per piece).
func TestWatchOfTheMailboxSleepsThroughReplies(t *testing.T) {
	h := hubtest.Single(t)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	st, err := natsstate.Open(ctx, h.Connect(0), "replies")
	if err != nil {
		t.Fatal(err)
	}
	const agent, pieces = "oak_0001", 30
	checks, done := mailWatch(t, st, state.Scope{Agent: agent})
	for i := range pieces {
		if err := st.AppendReply(agent, map[string]int{"piece": i}); err != nil {
			t.Fatal(err)
		}
	}
	if err := st.Post(agent, map[string]string{"kind": "request"}); err != nil {
		t.Fatal(err)
	}
	if err := <-done; err != nil {
		t.Fatal(err)
	}
	close(checks)
	n := 0
	for n = range checks {
	}
	// The first check, and the one the post woke (a check per piece
	// before: up to 1 + pieces + 1).
	if n != 2 {
		t.Fatalf("the watch of the mailbox checked %d times for %d reply pieces and one post, want twice (its first, and the post's)", n, pieces)
	}
}

// A watch's consumer lost under a waiter does not leave it asleep. Its
// consumers deleted (by an operator, or lost with their node): a change
// made after is seen (the ordered consumer makes itself a new one). The
// mailbox's stream deleted with them: no new consumer can follow it, and
// the waiter was asleep for good; now the consumer's error wakes it, its
// check reads again and the watch ends with the check's error.
func TestWatchWokenByItsConsumerLost(t *testing.T) {
	for _, set := range hubtest.Sets() {
		for _, streamToo := range []bool{false, true} {
			t.Run(fmt.Sprintf("%s/stream-deleted=%v", set.Name, streamToo), func(t *testing.T) {
				h := set.Start(t)
				ctx, cancel := context.WithCancel(context.Background())
				defer cancel()
				c := h.Connect(0)
				project := fmt.Sprintf("lost-%v", streamToo)
				st, err := natsstate.Open(ctx, c, project)
				if err != nil {
					t.Fatal(err)
				}
				const agent = "oak_0001"
				_, done := mailWatch(t, st, state.Scope{Agent: agent})
				names, err := natsx.ProjectNames(project)
				if err != nil {
					t.Fatal(err)
				}
				deleted := 0
				for _, stream := range []string{names.Mail, natsx.KVStream(names.Records)} {
					s, err := c.JS.Stream(ctx, stream)
					if err != nil {
						t.Fatal(err)
					}
					lister := s.ConsumerNames(ctx)
					for name := range lister.Name() {
						if err := s.DeleteConsumer(ctx, name); err != nil && !errors.Is(err, jetstream.ErrConsumerNotFound) {
							t.Fatal(err)
						}
						deleted++
					}
					if err := lister.Err(); err != nil {
						t.Fatal(err)
					}
				}
				if deleted == 0 {
					t.Fatal("the watch has no consumer to delete")
				}
				if streamToo {
					if err := c.JS.DeleteStream(ctx, names.Mail); err != nil {
						t.Fatal(err)
					}
					err := <-done
					if err == nil || errors.Is(err, context.DeadlineExceeded) {
						t.Fatalf("the watch, its mailbox's stream deleted: %v, want the check's error at once", err)
					}
					t.Logf("the watch ended: %v", err)
					return
				}
				if err := st.Post(agent, json.RawMessage(`{"kind":"request"}`)); err != nil {
					t.Fatal(err)
				}
				if err := <-done; err != nil {
					t.Fatalf("the watch, its %d consumers deleted, did not see the post: %v", deleted, err)
				}
			})
		}
	}
}

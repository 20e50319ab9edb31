package natsstate_test

import (
	"context"
	"encoding/json"
	"fmt"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/plasmodium/pm/internal/hub/hubtest"
	"github.com/plasmodium/pm/internal/ids"
	"github.com/plasmodium/pm/internal/state"
)

// firstSayRounds bounds TestFirstSayReachesAFollowerOnAnotherNode.
const firstSayRounds = 200

// The bench's flake (issue 24, pmbench -only hub: about one run in four):
// the first message of a fresh room, said on one node, never reached the
// follower (pm chat --follow) on another node that had just started
// following it. Each round opens a fresh room and starts a follower on
// node 2 (FollowRoom from the start); then one message is appended on
// node 1: in even rounds once the follower's watch is in place (its first
// check ran: subscribed just before the say), in odd rounds at once (the
// say racing the follower's subscription). Every round must deliver it.
// A round waits at most a minute (the lost message never came: a hang
// is the failure, not a time).
func TestFirstSayReachesAFollowerOnAnotherNode(t *testing.T) {
	h := hubtest.Three(t)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	w, f := openOn(t, ctx, h, 0, "firstsay"), openOn(t, ctx, h, 1, "firstsay")
	var tk *state.Task
	err := w.WithTasks(func() error {
		var err error
		tk, err = w.CreateTask(func(id string) (*state.Task, []byte, error) {
			return &state.Task{ID: id, Description: "first say", Owner: "oak_0001", Status: state.TaskActive, BlockedBy: []string{}}, nil, nil
		})
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	for round := range firstSayRounds {
		ph, err := w.CreatePhase(tk.ID, func(_ *state.Task, _ []*state.Phase, id string) (*state.Phase, error) {
			return &state.Phase{ID: id, TaskID: tk.ID, Name: fmt.Sprintf("round %d", round), MessageLimit: 10, Roles: []string{}, Status: state.PhaseActive}, nil
		}, nil)
		if err != nil {
			t.Fatal(err)
		}
		rctx, rcancel := context.WithTimeout(ctx, time.Minute)
		subscribed := make(chan struct{})
		var once sync.Once
		var delivered atomic.Bool
		got := make(chan string, 1)
		ended := make(chan error, 1)
		go func() {
			_, err := f.FollowRoom(rctx, tk.ID, ph.ID, 0, func() (bool, error) {
				once.Do(func() { close(subscribed) })
				return delivered.Load(), nil
			}, func(raw []byte) error {
				var m state.Message
				if err := json.Unmarshal(raw, &m); err != nil {
					return err
				}
				delivered.Store(true)
				got <- m.ID
				return nil
			})
			ended <- err
		}()
		if round%2 == 0 {
			select {
			case <-subscribed:
			case err := <-ended:
				rcancel()
				t.Fatalf("round %d: the follower ended before its first check: %v", round, err)
			}
		}
		m := state.Message{ID: ids.Default.New(ids.Message), PhaseID: ph.ID, Author: "oak_0001", Content: fmt.Sprintf("the first say of round %d", round)}
		if err := w.WithPhase(tk.ID, ph.ID, func(tx state.RoomTx) error { return tx.Append(m) }); err != nil {
			rcancel()
			t.Fatal(err)
		}
		// FollowRoom returns once until has seen the message delivered:
		// what it ended with and what it delivered are read after.
		err = <-ended
		rcancel()
		select {
		case id := <-got:
			if id != m.ID {
				t.Fatalf("round %d: the follower delivered %s, want %s", round, id, m.ID)
			}
		default:
			t.Fatalf("round %d: the follower ended without the first say (%v)", round, err)
		}
		if err != nil {
			t.Fatalf("round %d: the follower: %v", round, err)
		}
	}
}

package state

import (
	"context"
	"errors"
)

// RoomWatcher is what FollowRoomByWatch needs of a backend.
type RoomWatcher interface {
	ReadRoom(taskID, phaseID string, from int, v *MessageView, fn func(raw []byte) error) (int, error)
	Watcher
}

// FollowRoomByWatch is Phases.FollowRoom for a backend whose Watch of the
// room's task (Scope{Task}) wakes on each message appended to the room
// and on each change of its phase record: the room is read from the last
// position after each wake-up, so nothing is handed on twice and, as
// Watch loses no change, nothing appended is missed. raw is copied for
// fn to keep.
func FollowRoomByWatch(ctx context.Context, st RoomWatcher, taskID, phaseID string, from int, until func() (bool, error), fn func(raw []byte) error) (int, error) {
	pos := from
	read := func() error {
		var err error
		pos, err = st.ReadRoom(taskID, phaseID, pos, nil, func(raw []byte) error {
			return fn(append([]byte(nil), raw...))
		})
		return err
	}
	err := st.Watch(ctx, Scope{Task: taskID}, func() (bool, error) {
		if err := read(); err != nil {
			return true, err
		}
		done, err := until()
		if err != nil || !done {
			return false, err
		}
		return true, read()
	})
	return pos, err
}

// WatchAny is Watcher.Watch over several scopes at once (a caller waiting
// for its own mailbox and another agent's record, inbox.Call): check runs
// first once every scope's watch is in place, then again after a change
// to any of them, with Watch's guarantees (no change acknowledged after
// WatchAny was called is missed; a wake-up may be spurious).
func WatchAny(ctx context.Context, w Watcher, scopes []Scope, check func() (bool, error)) error {
	if len(scopes) == 1 {
		return w.Watch(ctx, scopes[0], check)
	}
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	wake := make(chan struct{}, 1)
	ready := make(chan struct{}, len(scopes))
	failed := make(chan error, len(scopes))
	for _, sc := range scopes {
		go func() {
			first := true
			err := w.Watch(ctx, sc, func() (bool, error) {
				// A watch's first check runs once it is in place.
				if first {
					first = false
					ready <- struct{}{}
				}
				select {
				case wake <- struct{}{}:
				default:
				}
				return false, nil
			})
			if err != nil && !errors.Is(err, context.Canceled) {
				failed <- err
			}
		}()
	}
	for range scopes {
		select {
		case <-ready:
		case err := <-failed:
			return err
		case <-ctx.Done():
			return ctx.Err()
		}
	}
	for {
		select { // the wake-ups before this check are covered by it
		case <-wake:
		default:
		}
		done, err := check()
		if err != nil || done {
			return err
		}
		select {
		case <-wake:
		case err := <-failed:
			return err
		case <-ctx.Done():
			return ctx.Err()
		}
	}
}

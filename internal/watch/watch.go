package watch

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"syscall"
	"time"

	"github.com/fsnotify/fsnotify"
	"github.com/plasmodium/pm/internal/errs"
	"github.com/plasmodium/pm/internal/jsonl"
)

// Until blocks until check reports done, re-checking after every file event in
// the directories that dirs returns (recomputed after each event, so a wait can
// follow directories that appear later). It checks once after the watches are
// in place, so a change that lands before the first event is never missed.
// A watcher error (an overflowed event queue) is a wake-up too: events may
// have been lost, so it re-checks instead of failing.
func Until(ctx context.Context, dirs func() []string, check func() (bool, error)) error {
	w, err := fsnotify.NewWatcher()
	if err != nil {
		return explain(err)
	}
	defer w.Close()
	return explain(until(ctx, notifier{w}, dirs, check))
}

// ErrLimit wraps the kernel's answer when the user's inotify instances
// (EMFILE) or watches (ENOSPC: "no space left on device") are used up, so the
// caller can say why it cannot wait, and what to raise.
var ErrLimit = errors.New("inotify limit reached: raise fs.inotify.max_user_instances / max_user_watches (sysctl), or end other watchers")

// LimitTry is what to do when inotify is used up: the limits are the
// inotify sysctls (per user), not the open-files limit (ulimit -n) that the
// kernel's EMFILE suggests.
const LimitTry = "raise fs.inotify.max_user_instances and fs.inotify.max_user_watches (sudo sysctl -w fs.inotify.max_user_instances=1024 fs.inotify.max_user_watches=524288), or end other file watchers"

// explain turns an exhausted-inotify error into ErrLimit (wrapping both),
// with the Try: line that names the limits to raise.
func explain(err error) error {
	if errors.Is(err, syscall.EMFILE) || errors.Is(err, syscall.ENOSPC) {
		return &errs.Error{Code: errs.Failure, Try: LimitTry, Err: fmt.Errorf("%w (%w)", ErrLimit, err)}
	}
	return err
}

// UntilOrPoll is Until for a process that must not stop waiting when the
// inotify limits are used up (the supervisor, a waiter keeping it alive):
// then it checks every `every` instead, and calls degraded once with the
// reason, so the caller says so where a person will look. Polling is not a
// state it stays in: each period it tries to watch again, and once its
// watches are in place it calls degraded(nil) (once a call, polled before
// or not: a caller that said it polls, in an earlier call, unsays it).
// Any other error ends it as it ends Until.
func UntilOrPoll(ctx context.Context, dirs func() []string, check func() (bool, error), every time.Duration, degraded func(error)) error {
	return UntilOrPollWith(ctx, nil, dirs, check, every, degraded)
}

// UntilFunc is Until's signature: tests inject a wait that fails as the
// kernel does when inotify is used up.
type UntilFunc func(ctx context.Context, dirs func() []string, check func() (bool, error)) error

// UntilOrPollWith is UntilOrPoll waiting with until (nil: Until).
func UntilOrPollWith(ctx context.Context, until UntilFunc, dirs func() []string, check func() (bool, error), every time.Duration, degraded func(error)) error {
	if until == nil {
		until = Until
	}
	polling, said := false, false
	// until checks once its watches are in place: its first check is the
	// news that it watches (again).
	watching := func() (bool, error) {
		if !said {
			said, polling = true, false
			if degraded != nil {
				degraded(nil)
			}
		}
		return check()
	}
	t := time.NewTicker(every)
	defer t.Stop()
	for {
		err := until(ctx, dirs, watching)
		if !errors.Is(err, ErrLimit) {
			return err
		}
		if !polling && degraded != nil {
			degraded(err)
		}
		polling, said = true, false
		if done, err := check(); done || err != nil {
			return err
		}
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-t.C:
		}
	}
}

// Poll calls check now and then every `every` until it reports done or ctx
// ends: the fallback when file events cannot be had, never the first choice.
func Poll(ctx context.Context, every time.Duration, check func() (bool, error)) error {
	t := time.NewTicker(every)
	defer t.Stop()
	for {
		if done, err := check(); done || err != nil {
			return err
		}
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-t.C:
		}
	}
}

// source is the part of an fsnotify watcher that Until uses, so a test can
// inject what the kernel rarely does on demand (an overflow).
type source interface {
	Add(dir string) error
	Events() <-chan fsnotify.Event
	Errors() <-chan error
}

type notifier struct{ w *fsnotify.Watcher }

func (n notifier) Add(dir string) error          { return n.w.Add(dir) }
func (n notifier) Events() <-chan fsnotify.Event { return n.w.Events }
func (n notifier) Errors() <-chan error          { return n.w.Errors }

// errClosed: the watcher's channels closed under us; waiting on would spin.
var errClosed = errors.New("file watcher closed")

func until(ctx context.Context, w source, dirs func() []string, check func() (bool, error)) error {
	watched := map[string]bool{}
	add := func() error {
		for _, d := range dirs() {
			if watched[d] {
				continue
			}
			err := w.Add(d)
			if errors.Is(err, os.ErrNotExist) {
				// Not there (yet, or any more, e.g. after pm reset): watch the
				// nearest existing parent so its return wakes us to add it.
				err = addParent(w, watched, d)
			} else if err == nil {
				watched[d] = true
			}
			if err != nil {
				return err
			}
		}
		return nil
	}
	forget := func(ev fsnotify.Event) {
		if ev.Has(fsnotify.Remove) || ev.Has(fsnotify.Rename) {
			delete(watched, ev.Name)
		}
	}
	for {
		if err := add(); err != nil {
			return err
		}
		done, err := check()
		if err != nil || done {
			return err
		}
		select {
		case <-ctx.Done():
			return ctx.Err()
		case _, ok := <-w.Errors():
			if !ok {
				return errClosed
			}
			// Overflow or a read error: events may be lost, and a lost
			// Remove would leave a stale watch. Forget every watch and
			// re-check; the loop adds them again.
			clear(watched)
		case ev, ok := <-w.Events():
			if !ok {
				return errClosed
			}
			forget(ev)
			drain(w, forget)
		}
	}
}

func addParent(w source, watched map[string]bool, d string) error {
	for p := filepath.Dir(d); ; p = filepath.Dir(p) {
		if watched[p] {
			return nil
		}
		err := w.Add(p)
		if err == nil {
			watched[p] = true
			return nil
		}
		if !errors.Is(err, os.ErrNotExist) || filepath.Dir(p) == p {
			return err
		}
	}
}

// drain handles events already queued: one check covers them all, but a
// removed directory must still be forgotten so it is watched again.
func drain(w source, forget func(fsnotify.Event)) {
	for {
		select {
		case ev, ok := <-w.Events():
			if !ok {
				return
			}
			forget(ev)
		default:
			return
		}
	}
}

// Lines follows a JSONL file: it hands every complete line after r.Offset to
// fn, then blocks on file events for more, until stop (checked after each
// wake-up) reports true or ctx ends. Lines written before stop turned true are
// still delivered. raw is valid only until fn returns (jsonl.Reader).
func Lines(ctx context.Context, r *jsonl.Reader, fn func(raw []byte) error, stop func() (bool, error)) error {
	dir := filepath.Dir(r.Path)
	return Until(ctx, func() []string { return []string{dir} }, func() (bool, error) {
		if err := r.Next(fn); err != nil {
			return false, err
		}
		if stop == nil {
			return false, nil
		}
		done, err := stop()
		if err != nil || !done {
			return false, err
		}
		return true, r.Next(fn)
	})
}

// Renames watches dir and sends on the returned channel the name (base) of
// every entry renamed away from it, "" when events were lost (the watcher
// overflowed: the caller must look at everything). The watch is in place
// when Renames returns, so nothing renamed after that is missed; the
// channel closes when ctx ends or the watcher fails. A watch that cannot
// be made is an error (ErrLimit's explanation when inotify is used up).
func Renames(ctx context.Context, dir string) (<-chan string, error) {
	w, err := fsnotify.NewWatcher()
	if err != nil {
		return nil, explain(err)
	}
	if err := w.Add(dir); err != nil {
		w.Close()
		return nil, explain(err)
	}
	out := make(chan string, 64)
	go func() {
		defer close(out)
		defer w.Close()
		send := func(name string) bool {
			select {
			case out <- name:
				return true
			case <-ctx.Done():
				return false
			}
		}
		for {
			select {
			case <-ctx.Done():
				return
			case _, ok := <-w.Errors:
				if !ok || !send("") {
					return
				}
			case ev, ok := <-w.Events:
				if !ok {
					return
				}
				if ev.Has(fsnotify.Rename) && filepath.Dir(ev.Name) == filepath.Clean(dir) {
					if !send(filepath.Base(ev.Name)) {
						return
					}
				}
			}
		}
	}()
	return out, nil
}

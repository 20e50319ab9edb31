package watch

import (
	"context"
	"errors"
	"os"
	"path/filepath"

	"github.com/fsnotify/fsnotify"
	"github.com/plasmodium/pm/internal/jsonl"
)

// Until blocks until check reports done, re-checking after every file event in
// the directories that dirs returns (recomputed after each event, so a wait can
// follow directories that appear later). It checks once after the watches are
// in place, so a change that lands before the first event is never missed.
func Until(ctx context.Context, dirs func() []string, check func() (bool, error)) error {
	w, err := fsnotify.NewWatcher()
	if err != nil {
		return err
	}
	defer w.Close()
	watched := map[string]bool{}
	add := func() error {
		for _, d := range dirs() {
			if watched[d] {
				continue
			}
			if err := w.Add(d); err != nil {
				if errors.Is(err, os.ErrNotExist) {
					continue // not there yet; retried after the next event
				}
				return err
			}
			watched[d] = true
		}
		return nil
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
		case err := <-w.Errors:
			if err != nil {
				return err
			}
		case ev := <-w.Events:
			if ev.Has(fsnotify.Remove) || ev.Has(fsnotify.Rename) {
				delete(watched, ev.Name)
			}
			drain(w)
		}
	}
}

// drain swallows events already queued: one check covers them all.
func drain(w *fsnotify.Watcher) {
	for {
		select {
		case <-w.Events:
		default:
			return
		}
	}
}

// Lines follows a JSONL file: it hands every complete line after r.Offset to
// fn, then blocks on file events for more, until stop (checked after each
// wake-up) reports true or ctx ends. Lines written before stop turned true are
// still delivered.
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

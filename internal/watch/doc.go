// Package watch turns fsnotify events into wake-ups. pm never sleeps in a
// polling loop: waiters block on file events and re-check state when one comes.
//
// Invariant: the state is checked after the watches are added, so a change
// that happens between "check" and "wait" cannot be missed. When the user's
// inotify instances or watches are used up, Until fails with ErrLimit (the
// kernel's error kept), never silently.
package watch

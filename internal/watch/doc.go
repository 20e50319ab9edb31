// Package watch turns fsnotify events into wake-ups. pm never sleeps in a
// polling loop: waiters block on file events and re-check state when one comes.
//
// Invariant: the state is checked after the watches are added, so a change
// that happens between "check" and "wait" cannot be missed. When the user's
// inotify instances or watches are used up, Until fails with ErrLimit (the
// kernel's error kept, and a Try: line naming the inotify sysctls, not
// ulimit -n), never silently. UntilOrPoll is the one way to wait on
// regardless: it falls back to a check every interval and tells its
// caller, who says so where a person looks (the supervisor records it for
// pm status); each interval it tries to watch again, and tells its caller
// once it does (degraded(nil)), so polling lasts only while inotify is used
// up.
//
// Renames is the one watch that says what changed: the names of the
// entries renamed away from one directory (the temp files of agent
// records landing, store.WatchAgentRecords), its watch in place before it
// returns, "" when events were lost (look at everything).
package watch

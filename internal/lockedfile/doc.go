// Package lockedfile is the one lock helper: a cross-process flock on a
// sidecar "<file>.lock", atomic JSON rewrites (temp file, fsync, rename) and a
// locked read-modify-write (Update), in the spirit of go-internal's lockedfile.
//
// Invariants: a JSON file (and a log cut to its total: WriteAtomicFrom) is
// only ever replaced whole by rename, the directory synced after; every
// read-modify-write of shared state happens inside With; locks are never held
// across a process spawn or a wait, but for LockWithin's (gitx's mirror lock,
// held over its git run, its wait bounded by a context) and LockDirectory's;
// every lock is released (LOCK_UN) before its descriptor is closed, so a
// child forked meanwhile does not keep it. Locks and the hot files of a short
// command are opened with the bare system calls (OpenFile, ReadFile,
// lockFile), never through os.Open's poller registration: a
// regular file cannot be polled, and setting the poller up is a cost every
// pm say would pay.
package lockedfile

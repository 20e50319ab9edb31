package lockedfile

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"sync"
	"syscall"

	"github.com/plasmodium/pm/internal/crashpoint"
)

// LockPath is the sidecar file that guards path. A sidecar (rather than the
// file itself) is used because JSON files are replaced by rename, which would
// leave a lock on the old inode.
func LockPath(path string) string { return path + ".lock" }

// With runs fn while holding the exclusive cross-process lock of path.
func With(path string, fn func() error) error {
	fd, err := lockFile(path, syscall.LOCK_EX)
	if err != nil {
		return err
	}
	defer unlockFile(fd)
	return fn()
}

// WithShared runs fn while holding path's lock shared: holders of the shared
// lock do not wait for each other, only for (and hold off) an exclusive one.
func WithShared(path string, fn func() error) error {
	fd, err := lockFile(path, syscall.LOCK_SH)
	if err != nil {
		return err
	}
	defer unlockFile(fd)
	return fn()
}

// lockFile opens path's lock file (made if missing) and flocks it with how
// (LOCK_EX, LOCK_SH, or LOCK_EX|LOCK_NB: EWOULDBLOCK when held). It works on the bare
// descriptor: an *os.File would register it with the runtime's poller (five
// system calls, and the poller's set-up in a short command) for a file that
// is only ever locked.
func lockFile(path string, how int) (int, error) {
	lock := LockPath(path)
	fd, err := openFD(lock, syscall.O_RDONLY|syscall.O_CREAT, 0o600)
	if err != nil {
		return -1, fmt.Errorf("lock %s: %w", path, err)
	}
	if _, err := retryEINTR(func() (int, error) { return 0, syscall.Flock(fd, how) }); err != nil {
		syscall.Close(fd)
		if err == syscall.EWOULDBLOCK {
			return -1, err
		}
		return -1, fmt.Errorf("lock %s: %w", path, &fs.PathError{Op: "flock", Path: lock, Err: err})
	}
	return fd, nil
}

// unlockFile releases the lock, then closes the descriptor: unlocking first
// releases it even while a child forked meanwhile (before its exec closes
// the O_CLOEXEC copy) still holds the descriptor.
func unlockFile(fd int) error {
	_ = syscall.Flock(fd, syscall.LOCK_UN)
	return syscall.Close(fd)
}

func retryEINTR(call func() (int, error)) (int, error) {
	for {
		n, err := call()
		if err != syscall.EINTR {
			return n, err
		}
	}
}

// WriteAtomic replaces path with data: write a temp file in the same directory,
// fsync it, rename it over path, fsync the directory. A reader sees the old or
// the new content, never a mix, and a crash leaves one of the two.
func WriteAtomic(path string, data []byte) error { return WriteAtomicMode(path, data, 0) }

// WriteAtomicMode is WriteAtomic giving the new file permissions perm (0:
// CreateTemp's 0600), for a file that replaces a user's own (pm design
// --apply keeps the file's mode).
func WriteAtomicMode(path string, data []byte, perm os.FileMode) error {
	return writeAtomic(path, "", "", bytes.NewReader(data), perm)
}

// WriteAtomicFrom is WriteAtomicMode with the new content read from r, for
// content too big to hold at once (a log's kept lines, copied from the
// file it replaces).
func WriteAtomicFrom(path string, r io.Reader, perm os.FileMode) error {
	return writeAtomic(path, "", "", r, perm)
}

// WriteAtomicVia is WriteAtomic with the temp file made in tmpDir (on the
// same file system), named prefix followed by random characters: the
// rename that replaces path is then seen in tmpDir too (inotify's
// IN_MOVED_FROM, with the temp's name), at the instant the new content is
// in place. A watcher of tmpDir learns which file was replaced from the
// prefix with no second write that a crash could skip (the supervisor
// learns of every agent record written: store.WatchAgentRecords).
func WriteAtomicVia(path, tmpDir, prefix string, data []byte) error {
	return writeAtomic(path, tmpDir, prefix, bytes.NewReader(data), 0)
}

func writeAtomic(path, tmpDir, prefix string, data io.Reader, perm os.FileMode) error {
	dir := filepath.Dir(path)
	if tmpDir == "" {
		tmpDir, prefix = dir, "."+filepath.Base(path)+".tmp-"
	}
	f, err := os.CreateTemp(tmpDir, prefix+"*")
	if err != nil {
		return err
	}
	tmp := f.Name()
	ok := false
	defer func() {
		if !ok {
			f.Close()
			os.Remove(tmp)
		}
	}()
	if _, err := io.Copy(f, data); err != nil {
		return err
	}
	if perm != 0 {
		if err := f.Chmod(perm); err != nil {
			return err
		}
	}
	if err := f.Sync(); err != nil {
		return err
	}
	if err := f.Close(); err != nil {
		return err
	}
	if err := os.Rename(tmp, path); err != nil {
		return err
	}
	ok = true
	err = syncDir(dir)
	if tmpDir != dir {
		err = errors.Join(err, syncDir(tmpDir)) // the rename removed the temp's name there
	}
	crashpoint.Hit("wrote " + filepath.Join(filepath.Base(dir), filepath.Base(path)))
	return err
}

func syncDir(dir string) error {
	d, err := os.Open(dir)
	if err != nil {
		return err
	}
	defer d.Close()
	return d.Sync()
}

// WriteJSON writes v as indented JSON with WriteAtomic. The caller holds the lock.
func WriteJSON(path string, v any) error { return writeJSONVia(path, "", "", v) }

func writeJSONVia(path, tmpDir, prefix string, v any) error {
	data, err := json.MarshalIndent(v, "", "  ")
	if err != nil {
		return err
	}
	return writeAtomic(path, tmpDir, prefix, bytes.NewReader(append(data, '\n')), 0)
}

// ErrNotExist is returned by ReadJSON when the file is missing.
var ErrNotExist = os.ErrNotExist

// readBufs recycles ReadJSON's read buffers: json.Unmarshal keeps no
// reference to its input, so a buffer is free again once v is decoded.
var readBufs = sync.Pool{New: func() any { b := make([]byte, 0, 4096); return &b }}

// ReadJSON decodes path into v. A syntax error names the file and line.
func ReadJSON(path string, v any) error { return ReadJSONIf(path, v, nil) }

// ErrSkipped is returned by ReadJSONIf when keep rejected the file.
var ErrSkipped = errors.New("skipped by filter")

// ReadJSONIf is ReadJSON for scans that want few of many records: when keep
// is not nil and returns false for the file's raw bytes, v is left alone and
// ErrSkipped is returned without decoding. keep must not retain raw.
func ReadJSONIf(path string, v any, keep func(raw []byte) bool) error {
	bp := readBufs.Get().(*[]byte)
	defer readBufs.Put(bp)
	data, err := readFile(path, *bp)
	if err != nil {
		return err
	}
	if cap(data) <= 1<<20 {
		*bp = data[:0] // keep a grown buffer, unless a huge file grew it
	}
	if keep != nil && !keep(data) {
		return ErrSkipped
	}
	return DecodeJSON(path, data, v)
}

// ErrMalformed marks a file that is not valid JSON (a corrupt record):
// errors.Is(err, ErrMalformed) tells it from a missing or unreadable one.
var ErrMalformed = errors.New("malformed JSON")

// FastDecoder is a record type with an exact decoder of its own for the
// files pm writes (store.Agent, store.Phase: a short command reads them in
// a fresh process, where encoding/json's reflective set-up for their types
// cost more than reading the files). DecodeJSON, and so ReadJSON,
// ReadJSONIf and Update, try it first. DecodeFast must report true only
// when data is valid JSON and it set the value exactly as json.Unmarshal
// into that value would; when it reports false it must leave the value
// untouched, and encoding/json decodes (its errors are the ones reported).
type FastDecoder interface {
	DecodeFast(data []byte) bool
}

// DecodeJSON decodes data into v, naming file and line on a syntax error.
// A FastDecoder decodes itself when it can.
func DecodeJSON(path string, data []byte, v any) error {
	if d, ok := v.(FastDecoder); ok && d.DecodeFast(data) {
		return nil
	}
	err := json.Unmarshal(data, v)
	if err == nil {
		return nil
	}
	var syn *json.SyntaxError
	var typ *json.UnmarshalTypeError
	switch {
	case errors.As(err, &syn):
		return fmt.Errorf("%s:%d: %w: %v", path, lineAt(data, syn.Offset), ErrMalformed, err)
	case errors.As(err, &typ):
		return fmt.Errorf("%s:%d: %v", path, lineAt(data, typ.Offset), err)
	}
	return fmt.Errorf("%s: %v", path, err)
}

func lineAt(data []byte, off int64) int {
	line := 1
	for i := int64(0); i < off && i < int64(len(data)); i++ {
		if data[i] == '\n' {
			line++
		}
	}
	return line
}

// ErrUnchanged, returned by an Update function, means "nothing to change":
// Update then writes nothing and reports no error, so a read-check that
// usually finds nothing to do costs no rewrite.
var ErrUnchanged = errors.New("lockedfile: unchanged")

// Update reads path into v (leaving v untouched when the file is missing and
// create is true), calls fn, and writes v back atomically, all under the lock.
// When fn returns an error nothing is written.
func Update[T any](path string, create bool, fn func(v *T) error) (T, error) {
	return UpdateVia(path, "", "", create, fn)
}

// UpdateVia is Update writing through a temp file in tmpDir named prefix...
// (WriteAtomicVia), so a watcher of tmpDir sees the write land.
func UpdateVia[T any](path, tmpDir, prefix string, create bool, fn func(v *T) error) (T, error) {
	var v T
	err := With(path, func() error {
		if err := ReadJSON(path, &v); err != nil {
			if !(create && errors.Is(err, os.ErrNotExist)) {
				return err
			}
		}
		if err := fn(&v); err != nil {
			if errors.Is(err, ErrUnchanged) {
				return nil
			}
			return err
		}
		return writeJSONVia(path, tmpDir, prefix, &v)
	})
	return v, err
}

// Held is a lock taken with TryLock and kept until Unlock, for a process that
// holds a lock for its whole life (the supervisor).
type Held struct {
	mu sync.Mutex
	fd int // -1 once unlocked
}

// TryLock takes path's lock if it is free, without waiting; ok is false when
// another process holds it.
func TryLock(path string) (h *Held, ok bool, err error) {
	fd, err := lockFile(path, syscall.LOCK_EX|syscall.LOCK_NB)
	switch {
	case err == syscall.EWOULDBLOCK:
		return nil, false, nil
	case err != nil:
		return nil, false, err
	}
	return &Held{fd: fd}, true, nil
}

// Unlock releases the lock; unlocking twice is harmless.
func (h *Held) Unlock() error {
	h.mu.Lock()
	defer h.mu.Unlock()
	if h.fd < 0 {
		return nil
	}
	err := unlockFile(h.fd)
	h.fd = -1
	return err
}

// LockWithin takes path's lock (LOCK_EX or LOCK_SH) like With, waiting no
// longer than ctx allows: a lock still held by another process when ctx
// ends is ctx's error (context.DeadlineExceeded), and the wait given up is
// let go of as soon as the lock comes (it is never held for nobody). The
// caller calls unlock once done; unlock releases before it closes, so a
// child the holder forked meanwhile (git, for gitx's mirror) does not keep
// the lock through its inherited descriptor.
func LockWithin(ctx context.Context, path string, how int) (unlock func(), err error) {
	if how != syscall.LOCK_EX && how != syscall.LOCK_SH {
		return nil, fmt.Errorf("lock %s: not LOCK_EX or LOCK_SH", path)
	}
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	// At once when free: no goroutine for the common case.
	fd, err := lockFile(path, how|syscall.LOCK_NB)
	if err == nil {
		return func() { unlockFile(fd) }, nil
	}
	if err != syscall.EWOULDBLOCK {
		return nil, err
	}
	type got struct {
		fd  int
		err error
	}
	ch := make(chan got, 1)
	go func() {
		fd, err := lockFile(path, how)
		ch <- got{fd, err}
	}()
	select {
	case g := <-ch:
		if g.err != nil {
			return nil, g.err
		}
		return func() { unlockFile(g.fd) }, nil
	case <-ctx.Done():
		go func() {
			if g := <-ch; g.err == nil {
				unlockFile(g.fd)
			}
		}()
		return nil, ctx.Err()
	}
}

// LockDirectory holds flock(2) LOCK_EX on dir itself (no sidecar: a
// directory is never replaced by rename) until unlock runs, released
// before it is closed as With's.
func LockDirectory(dir string) (unlock func(), err error) {
	fd, err := openFD(dir, syscall.O_RDONLY|syscall.O_DIRECTORY, 0)
	if err != nil {
		return nil, fmt.Errorf("lock %s: %w", dir, err)
	}
	if _, err := retryEINTR(func() (int, error) { return 0, syscall.Flock(fd, syscall.LOCK_EX) }); err != nil {
		syscall.Close(fd)
		return nil, fmt.Errorf("lock %s: %w", dir, &fs.PathError{Op: "flock", Path: dir, Err: err})
	}
	return func() { unlockFile(fd) }, nil
}

package bus

import (
	"bytes"
	"context"
	"errors"
	"io"
	"iter"
	"os"
	"path/filepath"

	"github.com/plasmodium/pm/internal/jsonl"
	"github.com/plasmodium/pm/internal/watch"
)

// WaitFunc blocks until check reports done, calling it again whenever
// something may have changed in dirs. watch.Until is the real one; tests
// inject their own wake-ups.
type WaitFunc func(ctx context.Context, dirs func() []string, check func() (bool, error)) error

// Line is one complete, valid JSON line of a followed file and the cursor
// just past it.
type Line struct {
	Raw  []byte
	Next Cursor
}

// Follower follows one JSONL file (events.jsonl, a phase's messages.jsonl)
// from a cursor: the one follow mechanism behind the file bus and
// pm chat --follow.
type Follower struct {
	Path string
	Bad  func(jsonl.BadLine) // skipped lines are reported here
	// Until, if set, is asked each time the follower has caught up; when it
	// reports true the follower reads once more (lines written before it
	// turned true are still delivered) and ends.
	Until func() (bool, error)
	Wait  WaitFunc // nil: watch.Until
	// Keep, if set, says which valid lines are records of the file (a
	// room's messages: store.isMessage); the others are passed over.
	Keep func(raw []byte) bool
}

// errStop unwinds a read when the consumer stopped ranging.
var errStop = errors.New("consumer stopped")

// Lines yields every complete line after from, in order, then blocks for
// more until ctx ends (yielding ctx's error), Until reports true, or the
// consumer stops ranging. A read or watch error is yielded last.
func (f *Follower) Lines(ctx context.Context, from Cursor) iter.Seq2[Line, error] {
	return func(yield func(Line, error) bool) {
		fr := &fileReader{Follower: f, pos: from}
		give := func(l Line) bool { return yield(l, nil) }
		check := func() (bool, error) {
			if err := fr.read(give); err != nil || fr.stopped {
				return true, err
			}
			if f.Until == nil {
				return false, nil
			}
			done, err := f.Until()
			if err != nil || !done {
				return false, err
			}
			return true, fr.read(give)
		}
		wait := f.Wait
		if wait == nil {
			wait = watch.Until
		}
		dir := filepath.Dir(f.Path)
		err := wait(ctx, func() []string { return []string{dir} }, check)
		if err != nil && !fr.stopped {
			yield(Line{}, err)
		}
	}
}

// fileReader is one follow's state across wake-ups.
type fileReader struct {
	*Follower
	pos     Cursor
	line    int // lines read in the current file, for bad-line reports
	stopped bool
}

// read hands every complete line after pos to give, advancing pos past it
// (and past skipped lines, so they are reported once). A missing file has no
// lines; whatever file appears next is read from its beginning.
func (fr *fileReader) read(give func(Line) bool) error {
	f, err := os.Open(fr.Path)
	if errors.Is(err, os.ErrNotExist) {
		fr.restart()
		return nil
	}
	if err != nil {
		return err
	}
	defer f.Close()
	id := &ident{f: f}
	if err := fr.revalidate(f, id); err != nil {
		return err
	}
	r := &jsonl.Reader{Path: fr.Path, Offset: fr.pos.off, Line: fr.line, Bad: fr.Bad}
	err = r.NextIn(f, func(raw []byte) error {
		sum, err := id.at(r.Offset)
		if err != nil {
			return err
		}
		fr.pos, fr.line = Cursor{off: r.Offset, id: sum}, r.Line
		if fr.Keep != nil && !fr.Keep(raw) {
			return nil
		}
		// raw is the reader's buffer, valid during this call only; a
		// Line is the subscriber's to keep.
		if !give(Line{Raw: bytes.Clone(raw), Next: fr.pos}) {
			fr.stopped = true
			return errStop
		}
		return nil
	})
	if fr.stopped {
		return nil
	}
	if err != nil {
		return err
	}
	sum, err := id.at(r.Offset)
	fr.pos, fr.line = Cursor{off: r.Offset, id: sum}, r.Line
	return err
}

func (fr *fileReader) restart() { fr.pos, fr.line = Cursor{}, 0 }

// revalidate restarts from the beginning when pos belongs to another file:
// the file is now shorter than pos, or begins differently.
func (fr *fileReader) revalidate(f *os.File, id *ident) error {
	if fr.pos.off == 0 {
		return nil
	}
	st, err := f.Stat()
	if err != nil {
		return err
	}
	if st.Size() < fr.pos.off {
		fr.restart()
		return nil
	}
	sum, err := id.at(fr.pos.off)
	if err != nil {
		return err
	}
	if sum != fr.pos.id {
		fr.restart()
	}
	return nil
}

// ident computes a file's identity at an offset, reading its head once it
// is long enough to stay the same.
type ident struct {
	f    *os.File
	head []byte
}

func (id *ident) at(off int64) (uint32, error) {
	if int64(len(id.head)) < min(off, headLen) {
		buf := make([]byte, headLen)
		n, err := id.f.ReadAt(buf, 0)
		if err != nil && !errors.Is(err, io.EOF) {
			return 0, err
		}
		id.head = buf[:n]
	}
	return fileID(id.head, off), nil
}

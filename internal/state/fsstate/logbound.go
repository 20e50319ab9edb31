package fsstate

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"

	"github.com/plasmodium/pm/internal/jsonl"
	"github.com/plasmodium/pm/internal/lockedfile"
	"github.com/plasmodium/pm/internal/state"
)

// A transcript's or reply stream's total (state.LogBounds) on the files.
//
// After each append the file's size is checked (one stat); once it is over
// the bound, the file is rewritten under its lock (lockedfile.With, the
// lock every append takes) with what is kept: a header line, then the kept
// lines as they were. The header, {"pm_cut":{"base":X,"entries":N,
// "bytes":B}}, is no entry: it holds what was dropped in all (the mark a
// read from 0 hands on) and the base X that keeps positions valid.
//
// Positions are logical offsets: a line's position is its byte offset in
// the file plus X, and X is chosen so that every kept line keeps the
// position it had before the cut (X = the first kept line's old position
// less the header's length). So a reader's position is valid across any
// number of cuts: one inside what was dropped reads from the first kept
// line, any other from where it was. A reader that opened the file before
// a cut reads the file it opened, whole and consistent, and the positions
// it is handed are valid in the new one. An uncut file has no header: X
// is 0 and positions are byte offsets, as they always were.

// cutPrefix opens a header line; no entry starts so (a transcript's
// entries are go-openai messages, {"role":...; a reply's pieces {"corr":...).
const cutPrefix = `{"pm_cut":`

// cutHeader is a cut file's first line.
type cutHeader struct {
	Base int64 `json:"base"`
	state.Cut
}

func isCutHeader(raw []byte) bool { return bytes.HasPrefix(raw, []byte(cutPrefix)) }

// maxHeader bounds a header line (three int64s and the names).
const maxHeader = headerLen

// readHeader reads f's header: zero and 0 when f has none (not cut).
func readHeader(f *os.File) (cutHeader, int64, error) {
	buf := make([]byte, maxHeader)
	n, err := f.ReadAt(buf, 0)
	if err != nil && !errors.Is(err, io.EOF) {
		return cutHeader{}, 0, err
	}
	buf = buf[:n]
	end := bytes.IndexByte(buf, '\n')
	if !isCutHeader(buf) || end < 0 {
		return cutHeader{}, 0, nil
	}
	var w struct {
		Cut cutHeader `json:"pm_cut"`
	}
	if err := json.Unmarshal(buf[:end], &w); err != nil {
		return cutHeader{}, 0, fmt.Errorf("%s: a cut header that does not read: %w", f.Name(), err)
	}
	return w.Cut, int64(end + 1), nil
}

// headerOf is readHeader of path (none for a missing file).
func headerOf(path string) (cutHeader, int64, error) {
	f, err := lockedfile.OpenFile(path, os.O_RDONLY, 0) // a regular file: no poller
	if errors.Is(err, fs.ErrNotExist) {
		return cutHeader{}, 0, nil
	}
	if err != nil {
		return cutHeader{}, 0, err
	}
	defer f.Close()
	return readHeader(f)
}

// headerLen is a header line's length, newline included: its JSON is
// padded with spaces to it, so the base it holds does not change it.
const headerLen = 128

// headerLine is h as its line.
func headerLine(h cutHeader) []byte {
	b, _ := json.Marshal(map[string]cutHeader{"pm_cut": h}) // at most ~100 bytes: three int64s
	b = append(b, bytes.Repeat([]byte(" "), headerLen-1-len(b))...)
	return append(b, '\n')
}

// mark is the entry a read from 0 hands on first, nil when h cut nothing.
func (f *FS) mark(kind state.Log, h cutHeader) json.RawMessage {
	if h.Entries == 0 {
		return nil
	}
	return state.MarkEntry(kind, h.Cut, state.LogBoundsOf(f.s.Config()).Of(kind))
}

// endOf is the position after path's last line (0 when there is no file).
func endOf(path string) (int64, error) {
	f, err := lockedfile.OpenFile(path, os.O_RDONLY, 0) // a regular file: no poller
	if errors.Is(err, fs.ErrNotExist) {
		return 0, nil
	}
	if err != nil {
		return 0, err
	}
	defer f.Close()
	h, _, err := readHeader(f)
	if err != nil {
		return 0, err
	}
	st, err := f.Stat()
	if err != nil {
		return 0, err
	}
	return st.Size() + h.Base, nil
}

// keepBound is the check after an append: one stat, and a cut when the
// file is over its bound.
func (f *FS) keepBound(kind state.Log, path string) error {
	bound := state.LogBoundsOf(f.s.Config()).Of(kind)
	st, err := os.Stat(path)
	if err != nil || st.Size() <= bound {
		return err
	}
	return lockedfile.With(path, func() error { return f.cut(kind, path, bound) })
}

// cut rewrites path with what state.PlanCut keeps of it (at most
// state.LowWater of bound), its header saying what was dropped in all;
// the caller holds path's lock.
func (f *FS) cut(kind state.Log, path string, bound int64) error {
	file, err := lockedfile.OpenFile(path, os.O_RDONLY, 0) // a regular file: no poller
	if err != nil {
		return err
	}
	defer file.Close()
	st, err := file.Stat()
	if err != nil || st.Size() <= bound { // another writer cut it first
		return err
	}
	h, hlen, err := readHeader(file)
	if err != nil {
		return err
	}
	var (
		plan   []state.Entry
		starts []int64
		prev   []byte
		total  int64
	)
	r := &jsonl.Reader{Path: path, Offset: hlen, Bad: f.s.BadLine}
	start := hlen
	if err := r.NextIn(file, func(raw []byte) error {
		size := r.Offset - start // a bad line before it counts with it
		plan = append(plan, state.Entry{Size: size, Kind: state.CutKind(kind, prev, raw)})
		starts = append(starts, start)
		prev, start, total = append(prev[:0], raw...), r.Offset, total+size
		return nil
	}); err != nil {
		return err
	}
	n := state.PlanCut(plan, total, state.LowWater(bound))
	if n == 0 {
		return nil
	}
	c := starts[n]
	// The first kept line keeps its position: c+h.Base before, the
	// header's length plus the new base after.
	line := headerLine(cutHeader{Base: c + h.Base - headerLen,
		Cut: state.Cut{Entries: h.Entries + int64(n), Bytes: h.Bytes + c - hlen}})
	tmp, err := os.CreateTemp(filepath.Dir(path), filepath.Base(path)+".cut-*")
	if err != nil {
		return err
	}
	defer os.Remove(tmp.Name()) // after the rename, nothing
	if _, err := tmp.Write(line); err != nil {
		tmp.Close()
		return err
	}
	if _, err := io.Copy(tmp, io.NewSectionReader(file, c, st.Size()-c)); err != nil {
		tmp.Close()
		return err
	}
	if err := tmp.Chmod(0o644); err != nil { // as jsonl.Append makes it
		tmp.Close()
		return err
	}
	if err := tmp.Sync(); err != nil {
		tmp.Close()
		return err
	}
	if err := tmp.Close(); err != nil {
		return err
	}
	return os.Rename(tmp.Name(), path)
}

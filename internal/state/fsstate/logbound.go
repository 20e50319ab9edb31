package fsstate

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"

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

// readHeader reads f's header: zero and 0 when f has none (not cut).
func readHeader(f *os.File) (cutHeader, int64, error) {
	buf := make([]byte, headerLen)
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

// keepBound is the check after an append, under path's lock (the caller
// holds it): one stat, and a cut when the file is over its bound and,
// after a cut that left it over (one step or reply longer than the bound),
// has grown to where a plan is due again (state.PlanAgainAt).
func (f *FS) keepBound(kind state.Log, path string) error {
	bound := state.LogBoundsOf(f.s.Config()).Of(kind)
	st, err := os.Stat(path)
	if err != nil {
		return err
	}
	if at := f.planAt(path); st.Size() <= bound || st.Size() < at {
		if at != 0 && st.Size() <= bound { // a new file of a removed agent's name, say
			f.planMu.Lock()
			delete(f.planAgain, path)
			f.planMu.Unlock()
		}
		return nil
	}
	kept, err := f.cut(kind, path, bound)
	if err != nil {
		return err
	}
	f.planMu.Lock()
	defer f.planMu.Unlock()
	if kept > bound {
		if f.planAgain == nil {
			f.planAgain = map[string]int64{}
		}
		f.planAgain[path] = state.PlanAgainAt(kept, bound)
	} else {
		delete(f.planAgain, path)
	}
	return nil
}

// planAt is the size path must reach before a cut is planned again (0:
// at its bound).
func (f *FS) planAt(path string) int64 {
	f.planMu.Lock()
	defer f.planMu.Unlock()
	return f.planAgain[path]
}

// cut rewrites path with what state.PlanCut keeps of it (at most
// state.LowWater of bound), its header saying what was dropped in all,
// and returns the file's size after; the caller holds path's lock.
func (f *FS) cut(kind state.Log, path string, bound int64) (int64, error) {
	file, err := lockedfile.OpenFile(path, os.O_RDONLY, 0) // a regular file: no poller
	if err != nil {
		return 0, err
	}
	defer file.Close()
	st, err := file.Stat()
	if err != nil {
		return 0, err
	}
	h, hlen, err := readHeader(file)
	if err != nil {
		return 0, err
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
		return 0, err
	}
	n := state.PlanCut(plan, total, state.LowWater(bound))
	if n == 0 {
		return st.Size(), nil
	}
	c := starts[n]
	// The first kept line keeps its position: c+h.Base before, the
	// header's length plus the new base after.
	line := headerLine(cutHeader{Base: c + h.Base - headerLen,
		Cut: state.Cut{Entries: h.Entries + int64(n), Bytes: h.Bytes + c - hlen}})
	kept := io.MultiReader(bytes.NewReader(line), io.NewSectionReader(file, c, st.Size()-c))
	if err := lockedfile.WriteAtomicFrom(path, kept, 0o644); err != nil { // 0644: as jsonl.Append makes it
		return 0, err
	}
	return headerLen + st.Size() - c, nil
}

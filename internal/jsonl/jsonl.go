package jsonl

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"

	"github.com/plasmodium/pm/internal/crashpoint"
	"github.com/plasmodium/pm/internal/lockedfile"
)

// MaxLine bounds one record. A longer line is refused on append and skipped
// (and reported) on read, so one bad writer cannot make readers allocate
// without bound.
const MaxLine = 1 << 20

// maxKeptLong is the most a Reader keeps of the buffer it assembled a line
// longer than its read buffer in, between lines.
const maxKeptLong = 64 << 10

// TornMarker is written after an unterminated tail that is valid JSON on its
// own, before its newline: see AppendHeld.
const TornMarker = "!torn"

// Append writes v as one JSON line to path under path's lock.
func Append(path string, v any) error {
	return lockedfile.With(path, func() error { return AppendHeld(path, v) })
}

// AppendHeld writes v as one JSON line; the caller holds lockedfile.With(path).
// If an earlier writer died mid-line, the torn tail is terminated first so the
// new record stays whole and parseable. A torn tail is a write nobody was told
// succeeded, so it must stay invalid forever: one that is valid JSON on its
// own (a whole record minus its newline, after ENOSPC or a kill at a page
// boundary) gets TornMarker before its newline, which no JSON value can end
// with; any other tail is invalid already and only gets the newline.
func AppendHeld(path string, v any) error {
	line, err := marshal(v)
	if err != nil {
		return err
	}
	if len(line)+1 > MaxLine {
		return fmt.Errorf("%s: record of %d bytes is over the %d byte line limit", path, len(line), MaxLine)
	}
	f, err := lockedfile.OpenFile(path, os.O_RDWR|os.O_APPEND|os.O_CREATE, 0o644)
	if err != nil {
		return err
	}
	defer f.Close()
	buf := make([]byte, 0, len(line)+len(TornMarker)+2)
	torn, whole, err := tornTail(f)
	if err != nil {
		return err
	}
	if whole {
		buf = append(buf, TornMarker...)
	}
	if torn {
		buf = append(buf, '\n')
	}
	buf = append(append(buf, line...), '\n')
	// One write call per record: with O_APPEND and the lock held, the line lands whole.
	if _, err := f.Write(buf); err != nil {
		return err
	}
	crashpoint.Hit("appended " + filepath.Join(filepath.Base(filepath.Dir(path)), filepath.Base(path)))
	return f.Close()
}

// ExactMarshaler is a json.Marshaler whose MarshalJSON writes exactly what
// json.Marshal writes for the value: compact, valid JSON, escaped as
// encoding/json escapes. store.Message and bus.Event are: their encoders
// are hand-written for a short command's start-up, and fuzz targets
// (FuzzMessageJSON, FuzzEventJSON) keep MarshalJSON's bytes equal to the
// reflective encoding's. AppendHeld calls MarshalJSON directly for them:
// json.Marshal would find the method by reflection, then scan and compact
// its output again, only to give the same bytes.
//
// The promise is a property of the type's encoder, established by its
// tests; no method can compute it, and a runtime check would be the
// re-scan it saves. So it is a marker method beside MarshalJSON, not a
// second encoder that would have to be kept equal to the first. The value
// must not be a nil pointer (MarshalJSON on a value receiver would panic
// where json.Marshal writes null): pm appends values.
type ExactMarshaler interface {
	json.Marshaler
	// MarshalsExactly does nothing: it marks MarshalJSON as exact.
	MarshalsExactly()
}

// marshal is json.Marshal(v), without its second pass for an
// ExactMarshaler. An error comes from json.Marshal, which wraps it.
func marshal(v any) ([]byte, error) {
	if m, ok := v.(ExactMarshaler); ok {
		if line, err := m.MarshalJSON(); err == nil {
			return line, nil
		}
	}
	return json.Marshal(v)
}

// tornTail reports whether f ends without a newline and, if so, whether that
// unterminated tail is valid JSON on its own (and so would be revived as a
// record by a bare newline).
func tornTail(f *os.File) (torn, whole bool, err error) {
	st, err := f.Stat()
	if err != nil || st.Size() == 0 {
		return false, false, err
	}
	b := make([]byte, 1)
	if _, err := f.ReadAt(b, st.Size()-1); err != nil {
		return false, false, err
	}
	if b[0] == '\n' {
		return false, false, nil
	}
	start, err := lastNewline(f, st.Size())
	if err != nil {
		return true, false, err
	}
	if st.Size()-start > MaxLine {
		return true, false, nil // skipped by readers for its size anyway
	}
	tail := make([]byte, st.Size()-start)
	if _, err := f.ReadAt(tail, start); err != nil {
		return true, false, err
	}
	tail = bytes.TrimRight(tail, "\r")
	return true, len(bytes.TrimSpace(tail)) > 0 && json.Valid(tail), nil
}

// BadLine describes a line a reader skipped.
type BadLine struct {
	Path   string
	Line   int   // 1-based line number, 0 when unknown (tail reads)
	Offset int64 // byte offset of the line's start
	Reason string
}

func (b BadLine) String() string {
	if b.Line > 0 {
		return fmt.Sprintf("%s:%d: skipped %s", b.Path, b.Line, b.Reason)
	}
	return fmt.Sprintf("%s@%d: skipped %s", b.Path, b.Offset, b.Reason)
}

// Reader reads complete JSON lines from a file starting at an offset. It never
// fails on content: a malformed line is reported through Bad and skipped; an
// unterminated final line is left for the next call (it may still be being written).
//
// The raw line a callback gets is a slice of the Reader's read buffer (a
// line longer than the buffer, of a scratch copy): it is valid only until
// the callback returns, and a callback that keeps it must copy it.
type Reader struct {
	Path   string
	Offset int64 // next byte to read
	Line   int   // lines consumed so far (valid or not)
	Bad    func(BadLine)

	// valid, when set, decides which lines are records in place of
	// json.Valid (Decode validates by decoding; NextChecked).
	valid    func(raw []byte) bool
	buf      []byte // the read buffer, kept for the next call
	long     []byte // a line longer than buf, copied as it is read
	bufLimit int    // tests: the read buffer's size, to make lines straddle refills
}

// Next calls fn with each complete, valid line after r.Offset, advancing it.
// raw is valid only until fn returns (see Reader).
func (r *Reader) Next(fn func(raw []byte) error) error {
	f, err := openExisting(r.Path)
	if f == nil {
		return err
	}
	defer f.Close()
	return r.NextIn(f, fn)
}

// NextChecked is Next with valid deciding which lines are records: it must
// report true only for a line that is valid JSON and false for every line
// that is not; it may report false for a valid line it does not vouch
// for, which json.Valid then decides. A record type's own scanner (pm's
// message lines: store.ReadMessageViews) validates, and may decode, the
// lines it knows in one pass.
func (r *Reader) NextChecked(valid func(raw []byte) bool, fn func(raw []byte) error) error {
	defer r.checkWith(valid)()
	return r.Next(fn)
}

// NextInChecked is NextChecked on a file the caller opened (NextIn).
func (r *Reader) NextInChecked(f *os.File, valid func(raw []byte) bool, fn func(raw []byte) error) error {
	defer r.checkWith(valid)()
	return r.NextIn(f, fn)
}

// checkWith makes valid, then json.Valid, decide which lines are records,
// until the function it returns puts json.Valid alone back.
func (r *Reader) checkWith(valid func(raw []byte) bool) (restore func()) {
	r.valid = func(raw []byte) bool { return valid(raw) || json.Valid(raw) }
	return func() { r.valid = nil }
}

// NextIn is Next on a file the caller opened, so a follower can check which
// file it reads (a recreated one restarts) and read that same file.
func (r *Reader) NextIn(f *os.File, fn func(raw []byte) error) error {
	if _, err := f.Seek(r.Offset, io.SeekStart); err != nil {
		return err
	}
	size := int64(-1)
	if st, err := f.Stat(); err == nil && st.Mode().IsRegular() {
		size = st.Size() - r.Offset
	}
	return r.scan(f, size, fn)
}

// The read buffer: one raw read fills it, and every line complete inside
// it is handed on in place. It is sized to what is left of the file (a
// small inbox gets a small one), between these bounds.
const (
	minBuffer = 4 << 10
	maxBuffer = 256 << 10
)

// buffer returns a read buffer for about size bytes (-1: unknown).
func (r *Reader) buffer(size int64) []byte {
	n := maxBuffer
	if size >= 0 && size+1 < maxBuffer {
		n = max(int(size)+1, minBuffer)
	}
	if r.bufLimit > 0 {
		n = r.bufLimit
		r.buf = r.buf[:min(len(r.buf), n)]
	}
	if len(r.buf) < n {
		r.buf = make([]byte, n)
	}
	return r.buf
}

// scan reads src (size bytes are expected, -1 if unknown) and hands on each
// complete line: a line complete inside the buffer as a slice of it, a
// longer one copied into r.long (bounded by MaxLine: a longer line's bytes
// are consumed, not kept, and it is reported).
func (r *Reader) scan(src io.Reader, size int64, fn func(raw []byte) error) error {
	buf := r.buffer(size)
	start, end := 0, 0 // buf[start:end] is read and not handed on
	inLong := false    // the line being read did not fit in buf: r.long holds its start
	var longN int64    // bytes of that line consumed into r.long (or skipped) so far
	over := false      // that line is over MaxLine
	var rerr error     // the read error, once there is one
	for empty := 0; ; {
		if i := bytes.IndexByte(buf[start:end], '\n'); i >= 0 {
			line := buf[start : start+i]
			n := int64(i + 1)
			if inLong {
				n += longN
				if !over && len(r.long)+i <= MaxLine {
					r.long = append(r.long, line...)
					line = r.long
				} else {
					over = true
				}
			} else if i > MaxLine {
				over = true
			}
			start += i + 1
			lineStart := r.Offset
			r.Offset += n
			r.Line++
			wasOver := over
			inLong, longN, over, r.long = false, 0, false, r.long[:0]
			if wasOver {
				r.report(lineStart, "line over the size limit")
				continue
			}
			err := r.emit(line, lineStart, fn)
			if cap(r.long) > maxKeptLong {
				r.long = nil // a long-lived reader does not keep a rare long line's megabyte
			}
			if err != nil {
				return err
			}
			continue
		}
		if rerr != nil {
			// Unterminated tail (or EOF): leave it for a later call.
			if errors.Is(rerr, io.EOF) {
				return nil
			}
			return rerr
		}
		switch {
		case start == 0 && end == len(buf):
			// No newline in a full buffer: the line is longer than it.
			if !inLong {
				inLong, r.long = true, r.long[:0]
			}
			if !over && len(r.long)+end <= MaxLine {
				r.long = append(r.long, buf[:end]...)
			} else {
				over, r.long = true, r.long[:0]
			}
			longN += int64(end)
			end = 0
		case start > 0:
			end = copy(buf, buf[start:end])
			start = 0
		}
		n, err := src.Read(buf[end:])
		end += n
		rerr = err
		if n == 0 && err == nil {
			if empty++; empty > 100 {
				rerr = io.ErrNoProgress
			}
		} else {
			empty = 0
		}
	}
}

func (r *Reader) report(start int64, reason string) {
	if r.Bad != nil {
		r.Bad(BadLine{Path: r.Path, Line: r.Line, Offset: start, Reason: reason})
	}
}

func (r *Reader) emit(raw []byte, start int64, fn func([]byte) error) error {
	raw = bytes.TrimRight(raw, "\r")
	if len(bytes.TrimSpace(raw)) == 0 {
		return nil
	}
	if r.valid != nil && !r.valid(raw) || r.valid == nil && !json.Valid(raw) {
		r.report(start, "malformed or torn JSON line")
		return nil
	}
	return fn(raw)
}

// Decode is Next with each line decoded into a T: one json.Unmarshal per
// line, which validates it too (Next's json.Valid pass is skipped), so a
// reader that needs the values scans each line once. A line that is not
// JSON is reported and skipped as Next does; a valid line whose values do
// not fit T is still passed on (Next would pass it too), with the fields
// that fit. A T that is a LineDecoder decodes its usual lines itself.
// v is one T, zeroed before each line, and raw one line of the read
// buffer: both are valid only until fn returns.
func Decode[T any](r *Reader, fn func(raw []byte, v *T) error) error {
	var v T
	r.valid = func(raw []byte) bool {
		var zero T
		v = zero
		if d, ok := any(&v).(LineDecoder); ok && d.DecodeLine(raw) {
			return true // valid, decoded exactly as below
		}
		if err := json.Unmarshal(raw, &v); err != nil {
			// Values that do not fit T (a wrong type, a bad time: any
			// error of a valid line) still pass, as Next passes them; only
			// a line that is not JSON is reported. The scan of Valid runs
			// on failures alone, so a good line is still scanned once.
			var syn *json.SyntaxError
			if errors.As(err, &syn) || !json.Valid(raw) {
				return false
			}
		}
		return true
	}
	defer func() { r.valid = nil }()
	return r.Next(func(raw []byte) error { return fn(raw, &v) })
}

// ReadAll decodes every valid line of path into T, skipping bad ones.
func ReadAll[T any](path string, bad func(BadLine)) ([]T, error) {
	var out []T
	r := &Reader{Path: path, Bad: bad}
	err := r.Next(func(raw []byte) error {
		if v, ok := decodeRecord[T](raw, path, r.Line, bad); ok {
			out = append(out, v)
		}
		return nil
	})
	return out, err
}

// decodeRecord decodes one valid line (line number line) into T as ReadAll
// does: a line that does not fit T is reported to bad and skipped.
func decodeRecord[T any](raw []byte, path string, line int, bad func(BadLine)) (T, bool) {
	var v T
	if err := json.Unmarshal(raw, &v); err != nil {
		if bad != nil {
			bad(BadLine{Path: path, Line: line, Reason: "line does not fit the record: " + err.Error()})
		}
		return v, false
	}
	return v, true
}

// Count returns the number of valid lines in path (a missing file has none).
func Count(path string) (int, error) {
	n := 0
	r := &Reader{Path: path}
	err := r.Next(func([]byte) error { n++; return nil })
	return n, err
}

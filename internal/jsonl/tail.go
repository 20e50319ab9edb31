package jsonl

import (
	"bytes"
	"encoding/json"
	"errors"
	"github.com/plasmodium/pm/internal/lockedfile"
	"io"
	"os"
	"slices"
)

// Tail returns the last n valid lines of path, oldest first, reading backwards
// from the end in blocks so a large log is never parsed whole. It also returns
// the offset just past the last complete line (an unterminated final line is
// not included), so a follower can continue from there.
func Tail(path string, n int, bad func(BadLine)) (lines [][]byte, end int64, err error) {
	f, err := openExisting(path)
	if f == nil {
		return nil, 0, err
	}
	defer f.Close()
	return TailIn(f, path, n, bad)
}

// openExisting opens path for reading; a missing file is no file and no
// error (every reader takes it as empty).
func openExisting(path string) (*os.File, error) {
	f, err := lockedfile.OpenFile(path, os.O_RDONLY, 0) // a regular file: no poller
	if errors.Is(err, os.ErrNotExist) {
		return nil, nil
	}
	return f, err
}

// TailIn is Tail on a file the caller opened (path names it in reports), so
// the offset it returns is known to belong to that file.
func TailIn(f *os.File, path string, n int, bad func(BadLine)) (lines [][]byte, end int64, err error) {
	return TailMatch(f, path, n, nil, bad)
}

// TailBefore is the last n valid lines of f that end at or before end (a
// line boundary: an offset a follower reached), oldest first.
func TailBefore(f *os.File, path string, end int64, n int, bad func(BadLine)) ([][]byte, error) {
	lines, skipped, err := scanBack(f, path, end, n, nil)
	if err != nil {
		return nil, err
	}
	if bad != nil {
		for _, b := range skipped {
			bad(b)
		}
	}
	return lines, nil
}

// TailMatch is TailIn counting only the lines keep accepts (nil: all), so
// "the last n of a kind" is found however many other lines come after them.
func TailMatch(f *os.File, path string, n int, keep func(raw []byte) bool, bad func(BadLine)) (lines [][]byte, end int64, err error) {
	st, err := f.Stat()
	if err != nil {
		return nil, 0, err
	}
	// Ignore an unterminated final line: it is still being written or torn.
	// end is computed even for n <= 0: a follower starts there and must not
	// begin in the middle of that line.
	end = st.Size()
	if end > 0 {
		last := make([]byte, 1)
		if _, err := f.ReadAt(last, end-1); err != nil {
			return nil, 0, err
		}
		if last[0] != '\n' {
			end, err = lastNewline(f, end)
			if err != nil {
				return nil, 0, err
			}
		}
	}
	lines, skipped, err := scanBack(f, path, end, n, keep)
	if err != nil {
		return nil, 0, err
	}
	if bad != nil {
		for _, b := range skipped {
			bad(b)
		}
	}
	return lines, end, nil
}

// tailBlock is how much TailIn reads at a time, backwards.
const tailBlock = 64 << 10

// scanBack collects up to n valid lines that keep accepts, walking back
// from end (a line boundary) one block at a time. Each byte is read once and
// each line looked at once, so the cost is linear in what is scanned (the
// lines returned and those skipped or filtered out on the way), however
// large the file. Lines over MaxLine are skipped, like Reader does.
func scanBack(f *os.File, path string, end int64, n int, keep func([]byte) bool) (out [][]byte, skipped []BadLine, err error) {
	if n <= 0 {
		return nil, nil, nil
	}
	pos := end
	var buf []byte // the unscanned bytes [pos, pos+len(buf)); they end on a line boundary
	for len(out) < n && (pos > 0 || len(buf) > 0) {
		nl := bytes.LastIndexByte(buf[:max(len(buf)-1, 0)], '\n')
		if nl < 0 && pos > 0 {
			// The last line starts before pos: read the block before it.
			step := min(int64(tailBlock), pos)
			pos -= step
			chunk := make([]byte, step, step+int64(len(buf)))
			if _, err := f.ReadAt(chunk, pos); err != nil && !errors.Is(err, io.EOF) {
				return nil, nil, err
			}
			buf = append(chunk, buf...)
			continue
		}
		line := buf[nl+1:]
		buf = buf[:nl+1]
		off := pos + int64(len(buf))
		if p, bad := judge(path, line, off); bad != nil {
			skipped = append(skipped, *bad)
		} else if p != nil && (keep == nil || keep(p)) {
			out = append(out, p)
		}
	}
	slices.Reverse(out)
	slices.Reverse(skipped)
	return out, skipped, nil
}

// judge reads one raw line (with its newline) at offset off: the JSON to
// keep, nothing for a blank line, or why it is skipped.
func judge(path string, raw []byte, off int64) ([]byte, *BadLine) {
	raw = bytes.TrimSuffix(raw, []byte{'\n'})
	if len(raw) > MaxLine {
		return nil, &BadLine{Path: path, Offset: off, Reason: "line over the size limit"}
	}
	p := bytes.TrimRight(raw, "\r")
	if len(bytes.TrimSpace(p)) == 0 {
		return nil, nil
	}
	if !json.Valid(p) {
		return nil, &BadLine{Path: path, Offset: off, Reason: "malformed or torn JSON line"}
	}
	return p, nil
}

func lastNewline(f *os.File, end int64) (int64, error) {
	const block = 4096
	pos := end
	for pos > 0 {
		step := int64(block)
		if pos < step {
			step = pos
		}
		pos -= step
		chunk := make([]byte, step)
		if _, err := f.ReadAt(chunk, pos); err != nil && !errors.Is(err, io.EOF) {
			return 0, err
		}
		if i := bytes.LastIndexByte(chunk, '\n'); i >= 0 {
			return pos + int64(i) + 1, nil
		}
	}
	return 0, nil
}

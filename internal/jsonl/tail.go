package jsonl

import (
	"bytes"
	"encoding/json"
	"errors"
	"io"
	"os"
	"slices"
)

// Tail returns the last n valid lines of path, oldest first, reading backwards
// from the end in blocks so a large log is never parsed whole. It also returns
// the offset just past the last complete line (an unterminated final line is
// not included), so a follower can continue from there.
func Tail(path string, n int, bad func(BadLine)) (lines [][]byte, end int64, err error) {
	f, err := os.Open(path)
	if err != nil {
		if errors.Is(err, os.ErrNotExist) {
			return nil, 0, nil
		}
		return nil, 0, err
	}
	defer f.Close()
	return TailIn(f, path, n, bad)
}

// TailIn is Tail on a file the caller opened (path names it in reports), so
// the offset it returns is known to belong to that file.
func TailIn(f *os.File, path string, n int, bad func(BadLine)) (lines [][]byte, end int64, err error) {
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
	if n <= 0 {
		return nil, end, nil
	}
	const block = 64 << 10
	var buf []byte // holds bytes [pos, end)
	var skipped []BadLine
	pos := end
	for pos > 0 {
		step := int64(block)
		if pos < step {
			step = pos
		}
		pos -= step
		chunk := make([]byte, step)
		if _, err := f.ReadAt(chunk, pos); err != nil && !errors.Is(err, io.EOF) {
			return nil, 0, err
		}
		buf = append(chunk, buf...)
		if bytes.Count(buf, []byte{'\n'}) > n || pos == 0 {
			lines, skipped = collect(path, buf, pos, n)
			if len(lines) >= n || pos == 0 {
				break
			}
		}
	}
	// Report only from the final pass, so a line is reported once however
	// many blocks it took to find n valid lines.
	if bad != nil {
		for _, b := range skipped {
			bad(b)
		}
	}
	return lines, end, nil
}

// collect takes the last n valid lines of buf, which starts at file offset
// base, and the lines it skipped on the way (oldest first). If base > 0 the
// first fragment may be partial and is dropped. Like Reader, it skips lines
// over MaxLine.
func collect(path string, buf []byte, base int64, n int) (out [][]byte, skipped []BadLine) {
	parts := bytes.Split(bytes.TrimSuffix(buf, []byte{'\n'}), []byte{'\n'})
	first := 0
	if base > 0 {
		first = 1
	}
	off := base + int64(len(buf)) // start of the line after parts[i]
	for i := len(parts) - 1; i >= first && len(out) < n; i-- {
		off -= int64(len(parts[i]) + 1)
		if len(parts[i]) > MaxLine {
			skipped = append(skipped, BadLine{Path: path, Offset: off, Reason: "line over the size limit"})
			continue
		}
		p := bytes.TrimRight(parts[i], "\r")
		if len(bytes.TrimSpace(p)) == 0 {
			continue
		}
		if !json.Valid(p) {
			skipped = append(skipped, BadLine{Path: path, Offset: off, Reason: "malformed or torn JSON line"})
			continue
		}
		out = append(out, p)
	}
	slices.Reverse(out)
	slices.Reverse(skipped)
	return out, skipped
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

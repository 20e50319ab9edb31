package jsonl

import (
	"bytes"
	"encoding/json"
	"errors"
	"io"
	"os"
)

// Tail returns the last n valid lines of path, oldest first, reading backwards
// from the end in blocks so a large log is never parsed whole. It also returns
// the file size it read up to, so a follower can continue from there.
func Tail(path string, n int, bad func(BadLine)) (lines [][]byte, end int64, err error) {
	f, err := os.Open(path)
	if err != nil {
		if errors.Is(err, os.ErrNotExist) {
			return nil, 0, nil
		}
		return nil, 0, err
	}
	defer f.Close()
	st, err := f.Stat()
	if err != nil {
		return nil, 0, err
	}
	size := st.Size()
	if n <= 0 {
		return nil, size, nil
	}
	// Ignore an unterminated final line: it is still being written or torn.
	end = size
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
	const block = 64 << 10
	var buf []byte // holds bytes [pos, end)
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
			lines = collect(path, buf, pos, n, bad)
			if len(lines) >= n || pos == 0 {
				break
			}
		}
	}
	return lines, end, nil
}

// collect takes the last n valid lines of buf, which starts at file offset
// base. If base > 0 the first fragment may be partial and is dropped.
func collect(path string, buf []byte, base int64, n int, bad func(BadLine)) [][]byte {
	parts := bytes.Split(bytes.TrimSuffix(buf, []byte{'\n'}), []byte{'\n'})
	first := 0
	if base > 0 {
		first = 1
	}
	var out [][]byte
	for i := len(parts) - 1; i >= first && len(out) < n; i-- {
		p := bytes.TrimRight(parts[i], "\r")
		if len(bytes.TrimSpace(p)) == 0 {
			continue
		}
		if !json.Valid(p) {
			if bad != nil {
				bad(BadLine{Path: path, Offset: -1, Reason: "malformed or torn JSON line"})
			}
			continue
		}
		out = append(out, p)
	}
	for i, j := 0, len(out)-1; i < j; i, j = i+1, j-1 {
		out[i], out[j] = out[j], out[i]
	}
	return out
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

package jsonl

import (
	"io"
	"os"
)

// LastRecords is ReadAll[T] followed by keeping the last n records (n > 0),
// without holding or decoding the whole file: the same records, the same
// total (len of ReadAll's result) and the same bad-line reports, each once.
//
// The total is counted forwards through the Reader (json.Valid per line, as
// ReadAll); a line is decoded only to learn whether it fits T, and only
// when fits does not vouch for it (fits must report true only for lines
// json.Unmarshal decodes into T without error; nil vouches for none). The
// last n records are found backwards (TailMatch) and only they are decoded
// and kept. Both passes read the file up to one line boundary, so a record
// appended meanwhile is in neither.
func LastRecords[T any](path string, n int, fits func(raw []byte) bool, bad func(BadLine)) (last []T, total int, err error) {
	f, err := openExisting(path)
	if f == nil {
		return nil, 0, err
	}
	defer f.Close()
	fitting := func(raw []byte) bool {
		if fits != nil && fits(raw) {
			return true
		}
		_, ok := decodeRecord[T](raw, path, 0, nil)
		return ok
	}
	// Bad lines are reported by the forward pass, which sees them all.
	lines, end, err := TailMatch(f, path, n, fitting, nil)
	if err != nil {
		return nil, 0, err
	}
	for _, raw := range lines {
		v, _ := decodeRecord[T](raw, path, 0, nil) // fitting accepted it
		last = append(last, v)
	}
	r := &Reader{Path: path, Bad: bad}
	err = r.scan(io.NewSectionReader(f, 0, end), end, func(raw []byte) error {
		if fits != nil && fits(raw) {
			total++
		} else if _, ok := decodeRecord[T](raw, path, r.Line, bad); ok {
			total++
		}
		return nil
	})
	return last, total, err
}

// LastLines is LastRecords for lines kept as they are: the last n (n > 0)
// valid lines keep accepts (nil accepts every one), oldest first, and how
// many valid lines keep accepts in all, with the file's bad lines reported
// once. A missing file has none.
func LastLines(path string, n int, keep func(raw []byte) bool, bad func(BadLine)) (last [][]byte, total int, err error) {
	f, err := openExisting(path)
	if f == nil {
		return nil, 0, err
	}
	defer f.Close()
	return LastLinesIn(f, path, n, keep, bad)
}

// LastLinesIn is LastLines of f, opened on path by the caller (who reads
// something else of the same file: one open, one file, whatever replaces
// path meanwhile).
func LastLinesIn(f *os.File, path string, n int, keep func(raw []byte) bool, bad func(BadLine)) (last [][]byte, total int, err error) {
	lines, end, err := TailMatch(f, path, n, keep, nil) // the forward pass reports
	if err != nil {
		return nil, 0, err
	}
	r := &Reader{Path: path, Bad: bad}
	err = r.scan(io.NewSectionReader(f, 0, end), end, func(raw []byte) error {
		if keep == nil || keep(raw) {
			total++
		}
		return nil
	})
	return lines, total, err
}

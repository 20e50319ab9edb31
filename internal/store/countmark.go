package store

import (
	"bytes"
	"hash/fnv"
	"math"
	"os"
	"strconv"
	"syscall"

	"github.com/plasmodium/pm/internal/lockedfile"

	"github.com/plasmodium/pm/internal/jsonl"
)

// A count mark (messages.count beside messages.jsonl) records that the first
// Offset bytes of the log hold Messages messages, so a say under the
// messages lock counts only the lines after it: constant in the size of the
// room. The log is the truth and the mark only a cache of it:
//
//   - Offset is always a line boundary the reader reached, and the log is
//     append-only under the lock, so a mark once true stays true; a torn tail
//     or a crash between an append and a mark write leaves lines after the
//     mark, which are counted.
//   - A mark that is missing, unparsable, past the end of the log, not on a
//     newline, of another file (inode), or whose check does not match its
//     numbers is ignored: the whole log is counted and the mark rewritten.
//   - The mark is one fixed-size record rewritten in place (pwrite at 0, no
//     truncation: an O_TRUNC rewrite made ext4 flush it, ~0.1 ms, and left
//     readers an empty file meanwhile). A reader without the lock may see
//     old and new bytes mixed, or a crash may leave them so: the record's
//     check (FNV-1a of the bytes before it) tells such a mix from a mark.
//     The check is no seal: whoever can write the mark can write the log
//     (docs/security.md, "Not covered yet").
//   - The mark is written only under the messages lock, and only once the
//     counted tail exceeds countMarkEvery bytes: most says write nothing
//     more than their line, and none checks more than that many bytes.
type countMark struct {
	Messages int
	Offset   int64
	Inode    uint64
}

// markSize is the size of the mark's record: its JSON padded with spaces,
// then a newline.
const markSize = 128

// encode is the mark's record: {"messages":M,"offset":O,"inode":I,"check":C}
// padded to markSize.
func (m countMark) encode() []byte {
	b := make([]byte, 0, markSize)
	b = append(b, `{"messages":`...)
	b = strconv.AppendInt(b, int64(m.Messages), 10)
	b = append(b, `,"offset":`...)
	b = strconv.AppendInt(b, m.Offset, 10)
	b = append(b, `,"inode":`...)
	b = strconv.AppendUint(b, m.Inode, 10)
	b = append(b, `,"check":`...)
	b = strconv.AppendUint(b, uint64(markCheck(b)), 10)
	b = append(b, '}')
	for len(b) < markSize-1 {
		b = append(b, ' ')
	}
	return append(b, '\n')
}

func markCheck(b []byte) uint32 {
	h := fnv.New32a()
	h.Write(b)
	return h.Sum32()
}

// decodeMark parses a record encode wrote (bytes after its line are
// ignored); ok is false for anything else, a mixed record included.
func decodeMark(data []byte) (m countMark, ok bool) {
	const checkKey = `,"check":`
	if i := bytes.IndexByte(data, '\n'); i >= 0 {
		data = data[:i]
	}
	data = bytes.TrimRight(data, " ")
	checkAt := bytes.LastIndex(data, []byte(checkKey))
	if checkAt < 0 {
		return m, false
	}
	var nums [4]uint64
	rest := data
	for i, key := range [...]string{`{"messages":`, `,"offset":`, `,"inode":`, checkKey} {
		after, found := bytes.CutPrefix(rest, []byte(key))
		if !found {
			return m, false
		}
		end := 0
		for end < len(after) && after[end] >= '0' && after[end] <= '9' {
			end++
		}
		n, err := strconv.ParseUint(string(after[:end]), 10, 64)
		if err != nil {
			return m, false
		}
		nums[i], rest = n, after[end:]
	}
	if string(rest) != "}" || nums[0] > math.MaxInt32 || nums[1] > math.MaxInt64 ||
		uint64(markCheck(data[:checkAt+len(checkKey)])) != nums[3] {
		return m, false
	}
	return countMark{Messages: int(nums[0]), Offset: int64(nums[1]), Inode: nums[2]}, true
}

// countMarkEvery is how many uncounted bytes after the mark make a say
// rewrite it. Each say checks every line after the mark (validLine; with
// json.Valid it was about 3 µs a KiB here) and a rewrite in place is an
// open, a pwrite and a close, so a small window costs least: with 4 KiB a say checks at most ~20 lines and
// rewrites the mark once in ~20 says (64 KiB made the say before a rewrite
// 0.2 ms slower than the one after it). A variable so tests can make every
// say rewrite it.
var countMarkEvery int64 = 4 << 10

// CountMarkPath is the count mark of a phase's messages (see countMark).
func (s *Store) CountMarkPath(taskID, phaseID string) string {
	return s.MessagesPath(taskID, phaseID) + ".count"
}

// countHeld counts the phase's messages from its count mark, with the
// messages lock held, and moves the mark forward when the tail was long.
func (s *Store) countHeld(taskID, phaseID string) (int, error) {
	path := s.MessagesPath(taskID, phaseID)
	f, err := lockedfile.OpenFile(path, os.O_RDONLY, 0)
	if os.IsNotExist(err) {
		return 0, nil
	}
	if err != nil {
		return 0, err
	}
	defer f.Close()
	n, next, err := s.countIn(taskID, phaseID, f)
	if err != nil {
		return 0, err
	}
	if next.Offset-next.from > countMarkEvery {
		// Best effort: a mark not written is only a longer count next time.
		_ = s.writeCountMark(taskID, phaseID, next.countMark)
	}
	return n, nil
}

// markAhead is the mark a count reached, and the offset it counted from.
type markAhead struct {
	countMark
	from int64
}

// countIn counts the messages of f (the phase's log) from its count mark
// when that can be trusted. It only reads the mark, so it needs no lock: a
// mark being rewritten in place may read mixed, which its check refuses,
// and a mark once true stays true (see countMark).
func (s *Store) countIn(taskID, phaseID string, f *os.File) (int, markAhead, error) {
	st, err := f.Stat()
	if err != nil {
		return 0, markAhead{}, err
	}
	var ino uint64
	if sys, ok := st.Sys().(*syscall.Stat_t); ok {
		ino = sys.Ino
	}
	mark := s.readCountMark(taskID, phaseID, f, st.Size(), ino)
	n := mark.Messages
	r := &jsonl.Reader{Path: f.Name(), Offset: mark.Offset} // no Bad: old torn lines are not reported on each count
	if err := r.NextInChecked(f, validLine, countMessage(&n)); err != nil {
		return 0, markAhead{}, err
	}
	return n, markAhead{countMark{Messages: n, Offset: r.Offset, Inode: ino}, mark.Offset}, nil
}

// readCountMark returns the phase's mark if it can be trusted for the log f
// (size bytes, inode ino), else the zero mark (count from the start).
func (s *Store) readCountMark(taskID, phaseID string, f *os.File, size int64, ino uint64) countMark {
	mf, err := lockedfile.OpenFile(s.CountMarkPath(taskID, phaseID), os.O_RDONLY, 0)
	if err != nil {
		return countMark{}
	}
	var rec [markSize]byte // a mark is one record: a longer file is read no further
	n, _ := mf.ReadAt(rec[:], 0)
	mf.Close()
	m, ok := decodeMark(rec[:n])
	if !ok || m.Offset <= 0 || m.Offset > size || m.Inode != ino {
		return countMark{}
	}
	last := make([]byte, 1)
	if _, err := f.ReadAt(last, m.Offset-1); err != nil || last[0] != '\n' {
		return countMark{}
	}
	return m
}

// writeCountMark writes m over the phase's mark, in place.
func (s *Store) writeCountMark(taskID, phaseID string, m countMark) error {
	f, err := lockedfile.OpenFile(s.CountMarkPath(taskID, phaseID), os.O_WRONLY|os.O_CREATE, 0o644)
	if err != nil {
		return err
	}
	_, err = f.WriteAt(m.encode(), 0)
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	return err
}

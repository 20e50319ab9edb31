package bus

import (
	"fmt"
	"hash/crc32"
	"strconv"
	"strings"
)

// Cursor is a position on a bus (or in any followed JSONL file): everything
// before it was delivered. It is opaque to callers; String and ParseCursor
// carry it across processes (a browser resuming after a reconnect).
//
// A cursor holds a byte offset (an index on the in-memory bus) and the
// identity of the file it belongs to: a checksum of the file's first bytes
// (a generation on the in-memory bus). A file recreated under the same name
// (pm reset) is shorter than the offset or starts differently, so a reader
// holding an old cursor starts the new file from its beginning instead of
// resuming in the middle of a line.
// The zero Cursor is the beginning.
type Cursor struct {
	off int64
	id  uint32
}

// cursorPrefix versions the string form.
const cursorPrefix = "c1."

// String is the serialized cursor; ParseCursor reads it back.
func (c Cursor) String() string {
	return cursorPrefix + strconv.FormatUint(uint64(c.id), 16) + "." + strconv.FormatInt(c.off, 16)
}

// ParseCursor reads a cursor written by String. The empty string is the
// beginning.
func ParseCursor(s string) (Cursor, error) {
	if s == "" {
		return Cursor{}, nil
	}
	rest, ok := strings.CutPrefix(s, cursorPrefix)
	idPart, offPart, ok2 := strings.Cut(rest, ".")
	if !ok || !ok2 {
		return Cursor{}, fmt.Errorf("bad bus cursor %q", s)
	}
	id, err := strconv.ParseUint(idPart, 16, 32)
	if err != nil {
		return Cursor{}, fmt.Errorf("bad bus cursor %q: %w", s, err)
	}
	off, err := strconv.ParseInt(offPart, 16, 64)
	if err != nil || off < 0 {
		return Cursor{}, fmt.Errorf("bad bus cursor %q: bad offset", s)
	}
	return Cursor{off: off, id: uint32(id)}, nil
}

// MarshalText makes a Cursor a JSON string.
func (c Cursor) MarshalText() ([]byte, error) { return []byte(c.String()), nil }

// UnmarshalText reads the JSON string form.
func (c *Cursor) UnmarshalText(b []byte) error {
	p, err := ParseCursor(string(b))
	if err != nil {
		return err
	}
	*c = p
	return nil
}

// headLen is how much of a file's beginning identifies it. It covers the
// first record or more: its timestamp and kind differ between two files.
const headLen = 512

// fileID identifies a file by its first min(off, headLen) bytes, which an
// append-only file never changes once they are written.
func fileID(head []byte, off int64) uint32 {
	n := min(off, int64(len(head)))
	return crc32.ChecksumIEEE(head[:n])
}

// Reached reports whether c is at or past target on the same bus (the same
// file generation): a follower at c has delivered everything before target.
func (c Cursor) Reached(target Cursor) bool { return c.id == target.id && c.off >= target.off }

package store

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"
)

// The count from a mark must always equal the full count of the log, whatever
// state the mark is in: the log is the truth.
func TestCountHeldAgreesWithFullCount(t *testing.T) {
	defer func(v int64) { countMarkEvery = v }(countMarkEvery)
	countMarkEvery = 0 // every count rewrites the mark
	msg := func(i int) string { return fmt.Sprintf(`{"id":"ms-%06d","body":"m"}`+"\n", i) }
	cases := []struct {
		name string
		// edit changes the log or the mark after a first, marking count.
		edit func(t *testing.T, log, mark string)
	}{
		{"appended after the mark", func(t *testing.T, log, _ string) { appendTo(t, log, msg(100)+msg(101)) }},
		{"torn tail after the mark", func(t *testing.T, log, _ string) { appendTo(t, log, `{"id":"ms-torn","bo`) }},
		{"hand-written lines", func(t *testing.T, log, _ string) {
			appendTo(t, log, "{\"id\":\"\"}\n[1]\n{ \"id\": \"x\" }\nnot json\n")
		}},
		{"mark missing", func(t *testing.T, _, mark string) { os.Remove(mark) }},
		{"mark cut short", func(t *testing.T, _, mark string) { writeFile(t, mark, `{"messages":3,"off`) }},
		{"mark past the end", func(t *testing.T, _, mark string) { writeFile(t, mark, `{"messages":3,"offset":999999}`) }},
		{"mark not on a line boundary", func(t *testing.T, _, mark string) { writeFile(t, mark, `{"messages":0,"offset":5}`) }},
		{"log replaced", func(t *testing.T, log, _ string) {
			writeFile(t, log+".new", msg(1))
			if err := os.Rename(log+".new", log); err != nil {
				t.Fatal(err)
			}
		}},
		{"negative count", func(t *testing.T, _, mark string) { writeFile(t, mark, `{"messages":-1,"offset":1}`) }},
		{"mark of an older build (plain JSON)", func(t *testing.T, log, mark string) {
			writeFile(t, mark, fmt.Sprintf(`{"messages":3,"offset":%d,"inode":%d}`, len(msg(0))*3, inodeAt(t, log)))
		}},
		{"mark mixed from two writes (a check that does not match)", func(t *testing.T, log, mark string) {
			// A true mark for 10 lines with the count of another: each part
			// parses, only the check tells.
			rec := countMark{Messages: 10, Offset: int64(len(msg(0)) * 10), Inode: inodeAt(t, log)}.encode()
			writeFile(t, mark, strings.Replace(string(rec), `"messages":10`, `"messages":12`, 1))
		}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			s := newInternalStore(t)
			task, phase := "tk-000001", "ph-000001"
			log, mark := s.MessagesPath(task, phase), s.CountMarkPath(task, phase)
			if err := os.MkdirAll(filepath.Dir(log), 0o755); err != nil {
				t.Fatal(err)
			}
			for i := range 20 {
				appendTo(t, log, msg(i))
			}
			if _, err := s.countHeld(task, phase); err != nil {
				t.Fatal(err)
			}
			if _, err := os.Stat(mark); err != nil {
				t.Fatalf("no mark written: %v", err)
			}
			c.edit(t, log, mark)
			for range 2 { // from the edited mark, then from the rewritten one
				got, err := s.countHeld(task, phase)
				if err != nil {
					t.Fatal(err)
				}
				want, err := s.MessageCount(task, phase)
				if err != nil {
					t.Fatal(err)
				}
				if got != want {
					t.Fatalf("countHeld = %d, MessageCount = %d", got, want)
				}
				if _, last, err := s.LastMessages(task, phase, 1); err != nil || last != want {
					t.Fatalf("LastMessages counted %d, %v; MessageCount = %d", last, err, want)
				}
			}
		})
	}
}

// Below the threshold no mark is written: a say writes only its line.
func TestCountHeldWritesMarkOnlyPastThreshold(t *testing.T) {
	s := newInternalStore(t)
	task, phase := "tk-000001", "ph-000001"
	log := s.MessagesPath(task, phase)
	if err := os.MkdirAll(filepath.Dir(log), 0o755); err != nil {
		t.Fatal(err)
	}
	appendTo(t, log, `{"id":"ms-000001"}`+"\n")
	if n, err := s.countHeld(task, phase); err != nil || n != 1 {
		t.Fatalf("countHeld = %d, %v; want 1", n, err)
	}
	if _, err := os.Stat(s.CountMarkPath(task, phase)); !os.IsNotExist(err) {
		t.Fatalf("mark written for a small tail: %v", err)
	}
}

func newInternalStore(t *testing.T) *Store {
	t.Helper()
	root, _, err := Init(t.TempDir(), time.Now)
	if err != nil {
		t.Fatal(err)
	}
	s, err := Open(root)
	if err != nil {
		t.Fatal(err)
	}
	return s
}

func appendTo(t *testing.T, path, data string) {
	t.Helper()
	f, err := os.OpenFile(path, os.O_WRONLY|os.O_APPEND|os.O_CREATE, 0o644)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	if _, err := f.WriteString(data); err != nil {
		t.Fatal(err)
	}
}

func writeFile(t *testing.T, path, data string) {
	t.Helper()
	if err := os.WriteFile(path, []byte(data), 0o644); err != nil {
		t.Fatal(err)
	}
}

// However long the room, a count under the lock checks at most
// countMarkEvery bytes and one line after the mark: the mark keeps up.
func TestCountHeldKeepsTheTailShort(t *testing.T) {
	s := newInternalStore(t)
	task, phase := "tk-000001", "ph-000001"
	log := s.MessagesPath(task, phase)
	if err := os.MkdirAll(filepath.Dir(log), 0o755); err != nil {
		t.Fatal(err)
	}
	line := `{"id":"msg-000001","phase_id":"ph-000001","author":"oak_0001","content":"` + strings.Repeat("x", 150) + `","timestamp":"2026-01-02T03:04:05Z"}` + "\n"
	for i := 1; i <= 20*int(countMarkEvery)/len(line); i++ {
		appendTo(t, log, line)
		if n, err := s.countHeld(task, phase); err != nil || n != i {
			t.Fatalf("countHeld = %d, %v; want %d", n, err, i)
		}
		st, err := os.Stat(log)
		if err != nil {
			t.Fatal(err)
		}
		f, err := os.Open(log)
		if err != nil {
			t.Fatal(err)
		}
		mark := s.readCountMark(task, phase, f, st.Size(), inodeOf(t, st))
		f.Close()
		if tail := st.Size() - mark.Offset; tail > countMarkEvery+int64(len(line)) {
			t.Fatalf("after %d messages the next count checks %d bytes past the mark (bound %d)", i, tail, countMarkEvery+int64(len(line)))
		}
	}
}

func inodeOf(t *testing.T, st os.FileInfo) uint64 {
	t.Helper()
	sys, ok := st.Sys().(*syscall.Stat_t)
	if !ok {
		t.Fatal("no inode")
	}
	return sys.Ino
}

func inodeAt(t *testing.T, path string) uint64 {
	t.Helper()
	st, err := os.Stat(path)
	if err != nil {
		t.Fatal(err)
	}
	return inodeOf(t, st)
}

// A record decodes to the mark it was made from, whatever follows its
// line; change any byte of its numbers and it no longer decodes.
func TestMarkRecord(t *testing.T) {
	for _, m := range []countMark{{}, {Messages: 1, Offset: 2, Inode: 3}, {Messages: 1 << 30, Offset: 1 << 40, Inode: 1<<64 - 1}} {
		rec := m.encode()
		if len(rec) != markSize {
			t.Fatalf("record of %d bytes: %q", len(rec), rec)
		}
		for _, data := range [][]byte{rec, append(append([]byte{}, rec...), "junk after the line"...)} {
			if got, ok := decodeMark(data); !ok || got != m {
				t.Fatalf("decodeMark(%q) = %+v, %v; want %+v", data, got, ok, m)
			}
		}
		for i, c := range rec {
			if c < '0' || c > '9' {
				continue
			}
			mixed := append([]byte{}, rec...)
			mixed[i] = '0' + (c-'0'+1)%10
			if got, ok := decodeMark(mixed); ok {
				t.Fatalf("decodeMark took %q (byte %d changed) as %+v", mixed, i, got)
			}
		}
	}
}

func FuzzDecodeMark(f *testing.F) {
	f.Add(countMark{Messages: 5, Offset: 100, Inode: 7}.encode())
	f.Add([]byte(`{"messages":3,"offset":1}`))
	f.Fuzz(func(t *testing.T, data []byte) {
		m, ok := decodeMark(data)
		if !ok {
			return
		}
		if m.Messages < 0 || m.Offset < 0 {
			t.Fatalf("decodeMark(%q) = %+v", data, m)
		}
		if back, ok := decodeMark(m.encode()); !ok || back != m {
			t.Fatalf("round trip of %+v: %+v, %v", m, back, ok)
		}
	})
}

// A mark file is read no further than one record: a huge one (a hostile
// writer) costs a count no more than a true one.
func TestCountMarkReadsOneRecord(t *testing.T) {
	s := newInternalStore(t)
	task, phase := "tk-000001", "ph-000001"
	log := s.MessagesPath(task, phase)
	if err := os.MkdirAll(filepath.Dir(log), 0o755); err != nil {
		t.Fatal(err)
	}
	line := `{"id":"msg-000001","content":"x"}` + "\n"
	for range 3 {
		appendTo(t, log, line)
	}
	rec := countMark{Messages: 2, Offset: int64(2 * len(line)), Inode: inodeAt(t, log)}.encode()
	writeFile(t, s.CountMarkPath(task, phase), string(rec)+strings.Repeat("junk ", 1<<20))
	f, err := os.Open(log)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	if m := s.readCountMark(task, phase, f, int64(3*len(line)), inodeAt(t, log)); m.Messages != 2 {
		t.Fatalf("readCountMark = %+v: the record before the junk was not taken", m)
	}
	if n, err := s.countHeld(task, phase); err != nil || n != 3 {
		t.Fatalf("countHeld = %d, %v; want 3", n, err)
	}
}

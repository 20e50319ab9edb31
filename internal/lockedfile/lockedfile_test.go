package lockedfile

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"

	"github.com/plasmodium/pm/internal/testproc"
)

type counter struct {
	N    int      `json:"n"`
	Seen []string `json:"seen,omitempty"`
}

func TestWriteAtomic(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "f.json")
	for _, content := range []string{"first", "second, longer content", ""} {
		if err := WriteAtomic(path, []byte(content)); err != nil {
			t.Fatal(err)
		}
		got, err := os.ReadFile(path)
		if err != nil || string(got) != content {
			t.Fatalf("content = %q, %v; want %q", got, err, content)
		}
	}
	ents, _ := os.ReadDir(dir)
	if len(ents) != 1 {
		var names []string
		for _, e := range ents {
			names = append(names, e.Name())
		}
		t.Fatalf("directory holds %v, want only f.json (no temp files left)", names)
	}
}

func TestWriteAtomicMissingDir(t *testing.T) {
	path := filepath.Join(t.TempDir(), "no", "f.json")
	if err := WriteAtomic(path, []byte("x")); err == nil {
		t.Fatal("WriteAtomic into a missing directory succeeded")
	}
}

func TestWriteJSON(t *testing.T) {
	path := filepath.Join(t.TempDir(), "f.json")
	if err := WriteJSON(path, counter{N: 3}); err != nil {
		t.Fatal(err)
	}
	got, _ := os.ReadFile(path)
	if string(got) != "{\n  \"n\": 3\n}\n" {
		t.Fatalf("WriteJSON wrote %q", got)
	}
	if err := WriteJSON(path, map[string]any{"f": func() {}}); err == nil {
		t.Fatal("WriteJSON of a func succeeded")
	}
	if again, _ := os.ReadFile(path); string(again) != string(got) {
		t.Fatal("failed WriteJSON changed the file")
	}
}

func TestReadJSONErrors(t *testing.T) {
	tests := []struct {
		name    string
		data    string
		wantSub []string
	}{
		{"syntax on line 3", "{\n  \"n\": 1,\n  \"seen\": [\"a\",, ]\n}\n", []string{"f.json:3:", "malformed JSON"}},
		{"syntax on line 1", "{oops}", []string{"f.json:1:", "malformed JSON"}},
		{"type error on line 2", "{\n  \"n\": \"three\"\n}\n", []string{"f.json:2:"}},
		{"truncated", "{\n  \"n\": 1,\n", []string{"f.json"}},
		{"empty file", "", []string{"f.json"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			path := filepath.Join(t.TempDir(), "f.json")
			if err := os.WriteFile(path, []byte(tt.data), 0o644); err != nil {
				t.Fatal(err)
			}
			var c counter
			err := ReadJSON(path, &c)
			if err == nil {
				t.Fatal("ReadJSON succeeded")
			}
			for _, s := range tt.wantSub {
				if !strings.Contains(err.Error(), s) {
					t.Errorf("error %q does not contain %q", err, s)
				}
			}
			if !strings.HasPrefix(err.Error(), path) {
				t.Errorf("error %q does not start with the path", err)
			}
		})
	}
}

func TestDecodeJSONLine(t *testing.T) {
	tests := []struct {
		data string
		line int
	}{
		{"{\"n\": x}", 1},
		{"{\n\"n\": x}", 2},
		{"{\n\n\n\"n\": true}", 4},
		{"\n\n\n\n{\"n\": 1,}", 5},
	}
	for _, tt := range tests {
		var c counter
		err := DecodeJSON("cfg.json", []byte(tt.data), &c)
		want := fmt.Sprintf("cfg.json:%d:", tt.line)
		if err == nil || !strings.HasPrefix(err.Error(), want) {
			t.Errorf("DecodeJSON(%q) = %v, want prefix %q", tt.data, err, want)
		}
	}
	var c counter
	if err := DecodeJSON("cfg.json", []byte(`{"n": 2}`), &c); err != nil || c.N != 2 {
		t.Fatalf("valid JSON: %v, %+v", err, c)
	}
}

func TestReadJSONMissing(t *testing.T) {
	var c counter
	err := ReadJSON(filepath.Join(t.TempDir(), "none.json"), &c)
	if !errors.Is(err, ErrNotExist) || !errors.Is(err, os.ErrNotExist) {
		t.Fatalf("missing file: %v, want ErrNotExist", err)
	}
}

func TestUpdate(t *testing.T) {
	boom := errors.New("boom")
	tests := []struct {
		name    string
		initial *string
		create  bool
		fn      func(*counter) error
		wantErr func(error) bool
		want    *string // file content afterwards; nil = no file
	}{
		{
			name: "create missing", create: true,
			fn:   func(c *counter) error { c.N++; return nil },
			want: ptr("{\n  \"n\": 1\n}\n"),
		},
		{
			name: "missing without create", create: false,
			fn:      func(c *counter) error { c.N++; return nil },
			wantErr: func(err error) bool { return errors.Is(err, os.ErrNotExist) },
		},
		{
			name: "modify existing", initial: ptr(`{"n": 41}`),
			fn:   func(c *counter) error { c.N++; return nil },
			want: ptr("{\n  \"n\": 42\n}\n"),
		},
		{
			name: "fn error writes nothing", initial: ptr(`{"n": 41}`),
			fn:      func(c *counter) error { c.N = 1000; return boom },
			wantErr: func(err error) bool { return errors.Is(err, boom) },
			want:    ptr(`{"n": 41}`),
		},
		{
			name: "fn error on create writes nothing", create: true,
			fn:      func(c *counter) error { c.N = 1; return boom },
			wantErr: func(err error) bool { return errors.Is(err, boom) },
		},
		{
			name: "malformed file is not replaced", initial: ptr("{\n\"n\": ]"), create: true,
			fn:      func(c *counter) error { c.N = 1; return nil },
			wantErr: func(err error) bool { return err != nil && strings.Contains(err.Error(), "f.json:2:") },
			want:    ptr("{\n\"n\": ]"),
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			path := filepath.Join(t.TempDir(), "f.json")
			if tt.initial != nil {
				if err := os.WriteFile(path, []byte(*tt.initial), 0o644); err != nil {
					t.Fatal(err)
				}
			}
			_, err := Update(path, tt.create, tt.fn)
			if tt.wantErr == nil && err != nil {
				t.Fatalf("Update: %v", err)
			}
			if tt.wantErr != nil && !tt.wantErr(err) {
				t.Fatalf("Update error = %v", err)
			}
			got, rerr := os.ReadFile(path)
			switch {
			case tt.want == nil && rerr == nil:
				t.Fatalf("file exists with %q, want none", got)
			case tt.want != nil && string(got) != *tt.want:
				t.Fatalf("file = %q, want %q", got, *tt.want)
			}
		})
	}
}

func ptr(s string) *string { return &s }

func TestWithSerialises(t *testing.T) {
	path := filepath.Join(t.TempDir(), "f")
	inside := 0
	var mu sync.Mutex
	var wg sync.WaitGroup
	for range 16 {
		wg.Go(func() {
			for range 20 {
				if err := With(path, func() error {
					mu.Lock()
					inside++
					n := inside
					mu.Unlock()
					if n != 1 {
						t.Errorf("%d holders of the lock at once", n)
					}
					mu.Lock()
					inside--
					mu.Unlock()
					return nil
				}); err != nil {
					t.Error(err)
				}
			}
		})
	}
	wg.Wait()
	if _, err := os.Stat(LockPath(path)); err != nil {
		t.Fatalf("lock sidecar: %v", err)
	}
}

func TestWithReturnsFnError(t *testing.T) {
	boom := errors.New("boom")
	if err := With(filepath.Join(t.TempDir(), "f"), func() error { return boom }); !errors.Is(err, boom) {
		t.Fatalf("With = %v, want fn's error", err)
	}
	if err := With(filepath.Join(t.TempDir(), "missing", "f"), func() error { return nil }); err == nil {
		t.Fatal("With in a missing directory succeeded")
	}
}

const helperEnv = "PM_LOCKEDFILE_TEST_HELPER"

// TestHelperProcess is not a test: it is the child process of
// TestUpdateConcurrentProcesses, incrementing the counter in PM_LF_PATH.
func TestHelperProcess(t *testing.T) {
	if os.Getenv(helperEnv) != "1" {
		t.Skip("helper process")
	}
	n, _ := strconv.Atoi(os.Getenv("PM_LF_N"))
	if err := increment(os.Getenv("PM_LF_PATH"), os.Getenv("PM_LF_W"), n, 3); err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	os.Exit(0)
}

func increment(path, who string, n, g int) error {
	var wg sync.WaitGroup
	errc := make(chan error, g)
	for k := range g {
		wg.Go(func() {
			for i := k; i < n; i += g {
				if _, err := Update(path, true, func(c *counter) error {
					c.N++
					c.Seen = append(c.Seen, who+"/"+strconv.Itoa(i))
					return nil
				}); err != nil {
					errc <- err
					return
				}
			}
		})
	}
	wg.Wait()
	close(errc)
	return <-errc
}

func checkCounter(t *testing.T, path string, want int) {
	t.Helper()
	var c counter
	if err := ReadJSON(path, &c); err != nil {
		t.Fatal(err)
	}
	if c.N != want || len(c.Seen) != want {
		t.Fatalf("counter = %d with %d entries, want %d (lost increments)", c.N, len(c.Seen), want)
	}
	seen := map[string]bool{}
	for _, s := range c.Seen {
		if seen[s] {
			t.Fatalf("increment %s applied twice", s)
		}
		seen[s] = true
	}
}

func TestUpdateConcurrentGoroutines(t *testing.T) {
	path := filepath.Join(t.TempDir(), "f.json")
	const writers, n = 8, 40
	var wg sync.WaitGroup
	for w := range writers {
		wg.Go(func() {
			if err := increment(path, "g"+strconv.Itoa(w), n, 1); err != nil {
				t.Error(err)
			}
		})
	}
	wg.Wait()
	checkCounter(t, path, writers*n)
}

func TestUpdateConcurrentProcesses(t *testing.T) {
	if testing.Short() {
		t.Skip("spawns processes")
	}
	path := filepath.Join(t.TempDir(), "f.json")
	const procs, n = 5, 60
	wait := testproc.Start(t, procs, func(w int) []string {
		return []string{helperEnv + "=1", "PM_LF_PATH=" + path, "PM_LF_W=p" + strconv.Itoa(w), "PM_LF_N=" + strconv.Itoa(n)}
	})
	if err := increment(path, "parent", n, 3); err != nil {
		t.Fatal(err)
	}
	wait()
	checkCounter(t, path, (procs+1)*n)
}

// An Update function that returns ErrUnchanged leaves the file untouched.
func TestUpdateUnchangedWritesNothing(t *testing.T) {
	path := filepath.Join(t.TempDir(), "f.json")
	if err := WriteJSON(path, map[string]int{"n": 1}); err != nil {
		t.Fatal(err)
	}
	before, _ := os.Stat(path)
	v, err := Update(path, false, func(v *map[string]int) error { (*v)["n"] = 2; return ErrUnchanged })
	if err != nil || v["n"] != 2 {
		t.Fatalf("Update = %v, %v", v, err)
	}
	after, _ := os.Stat(path)
	var got map[string]int
	if err := ReadJSON(path, &got); err != nil || got["n"] != 1 || !os.SameFile(before, after) {
		t.Fatalf("file changed: %v %v same inode %v", got, err, os.SameFile(before, after))
	}
}

// fastCounter decodes itself when the data is exactly "fast" and declines
// anything else.
type fastCounter struct {
	counter
	tried int
}

func (c *fastCounter) DecodeFast(data []byte) bool {
	c.tried++
	if string(data) != "fast" {
		return false
	}
	c.N = -1
	return true
}

// TestDecodeJSONFastDecoder: DecodeJSON takes a FastDecoder's own decoding
// when it reports true; when it declines, encoding/json decodes, with the
// same errors as for any other type.
func TestDecodeJSONFastDecoder(t *testing.T) {
	var c fastCounter
	if err := DecodeJSON("f.json", []byte("fast"), &c); err != nil || c.N != -1 || c.tried != 1 {
		t.Fatalf("fast: %v, %+v", err, c)
	}
	c = fastCounter{}
	if err := DecodeJSON("f.json", []byte(`{"n": 2}`), &c); err != nil || c.N != 2 || c.tried != 1 {
		t.Fatalf("declined: %v, %+v", err, c)
	}
	for _, data := range []string{"{\n\"n\": x}", "{\n\n\"n\": 1,}", ""} {
		var plain counter
		want := DecodeJSON("f.json", []byte(data), &plain)
		got := DecodeJSON("f.json", []byte(data), &fastCounter{})
		if want == nil || got == nil || got.Error() != want.Error() {
			t.Errorf("DecodeJSON(%q) = %v, want %v", data, got, want)
		}
	}
}

// TryLock takes a free lock once: flock locks belong to the open file, so a
// second TryLock, even from this process, finds it held until Unlock, after
// which With gets it. Unlocking twice is harmless.
func TestTryLock(t *testing.T) {
	path := filepath.Join(t.TempDir(), "state.json")
	h, ok, err := TryLock(path)
	if err != nil || !ok {
		t.Fatalf("TryLock of a free lock: ok %v, err %v", ok, err)
	}
	if h2, ok, err := TryLock(path); err != nil || ok {
		t.Fatalf("TryLock of a held lock: %v, ok %v, err %v", h2, ok, err)
	}
	entered := make(chan struct{})
	go func() {
		_ = With(path, func() error { close(entered); return nil })
	}()
	if err := h.Unlock(); err != nil {
		t.Fatal(err)
	}
	<-entered // With gets the lock once it is released
	if err := h.Unlock(); err != nil {
		t.Fatalf("second Unlock: %v", err)
	}
	h3, ok, err := TryLock(path)
	if err != nil || !ok {
		t.Fatalf("TryLock after Unlock: ok %v, err %v", ok, err)
	}
	h3.Unlock()
}

// A lock file that cannot be made is an error naming the file, not a hang.
func TestWithUnwritableLockDir(t *testing.T) {
	path := filepath.Join(t.TempDir(), "missing", "state.json")
	err := With(path, func() error { t.Fatal("fn ran without the lock"); return nil })
	if err == nil || !errors.Is(err, fs.ErrNotExist) || !strings.Contains(err.Error(), "state.json.lock") {
		t.Fatalf("With in a missing directory: %v", err)
	}
}

// Unlock releases the lock even while another descriptor of the same open
// file lives on (a child forked in that moment, before its exec closes its
// O_CLOEXEC copy): flock locks belong to the open file, so closing one
// descriptor alone would keep it locked.
func TestUnlockReleasesWithACopyAlive(t *testing.T) {
	path := filepath.Join(t.TempDir(), "state.json")
	h, ok, err := TryLock(path)
	if err != nil || !ok {
		t.Fatalf("TryLock: ok %v, err %v", ok, err)
	}
	child, err := syscall.Dup(h.fd) // the forked child's copy
	if err != nil {
		t.Fatal(err)
	}
	defer syscall.Close(child)
	if err := h.Unlock(); err != nil {
		t.Fatal(err)
	}
	h2, ok, err := TryLock(path)
	if err != nil || !ok {
		t.Fatalf("TryLock after Unlock with a copy of the descriptor alive: ok %v, err %v", ok, err)
	}
	h2.Unlock()
}

// WriteAtomicFrom replaces a file with what a reader holds, in the mode
// asked, through the same temp-and-rename as WriteAtomic (no temp left).
func TestWriteAtomicFrom(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "log.jsonl")
	if err := os.WriteFile(path, []byte("old\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	if err := WriteAtomicFrom(path, strings.NewReader("new\nlines\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	got, err := os.ReadFile(path)
	if err != nil || string(got) != "new\nlines\n" {
		t.Fatalf("read %q, %v", got, err)
	}
	if st, err := os.Stat(path); err != nil || st.Mode().Perm() != 0o644 {
		t.Fatalf("mode %v, %v; want 0644", st.Mode(), err)
	}
	if ents, _ := os.ReadDir(dir); len(ents) != 1 {
		t.Fatalf("%d files in the directory, want 1 (a temp left?)", len(ents))
	}
}

// LockWithin waits for a held lock only as long as its context allows, and
// a wait given up does not keep the lock once it comes: the next taker
// gets it. Shared holders do not wait for each other.
func TestLockWithin(t *testing.T) {
	path := filepath.Join(t.TempDir(), "mirror")
	unlock, err := LockWithin(context.Background(), path, syscall.LOCK_EX)
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() {
		_, err := LockWithin(ctx, path, syscall.LOCK_SH)
		done <- err
	}()
	cancel()
	if err := <-done; !errors.Is(err, context.Canceled) {
		t.Fatalf("LockWithin a held lock, its context ended = %v, want context.Canceled", err)
	}
	unlock()
	a, err := LockWithin(context.Background(), path, syscall.LOCK_SH)
	if err != nil {
		t.Fatal(err)
	}
	b, err := LockWithin(context.Background(), path, syscall.LOCK_SH)
	if err != nil {
		t.Fatal(err)
	}
	a()
	b()
	if _, err := LockWithin(context.Background(), path, syscall.LOCK_NB); err == nil {
		t.Fatal("LockWithin took a lock of no kind")
	}
}

package jsonl

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"testing"

	"github.com/plasmodium/pm/internal/testproc"
)

const helperEnv = "PM_JSONL_TEST_HELPER"

// TestHelperProcess is not a test: it is the child process of
// TestConcurrentAppendProcesses. It appends PM_JSONL_N records as writer
// PM_JSONL_W to PM_JSONL_PATH, from several goroutines at once.
func TestHelperProcess(t *testing.T) {
	if os.Getenv(helperEnv) != "1" {
		t.Skip("helper process")
	}
	path := os.Getenv("PM_JSONL_PATH")
	w, _ := strconv.Atoi(os.Getenv("PM_JSONL_W"))
	n, _ := strconv.Atoi(os.Getenv("PM_JSONL_N"))
	if err := appendMany(path, w, n, 4); err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	os.Exit(0)
}

// appendMany appends records (w, 0..n-1) from g goroutines; the records are
// padded so that a torn or interleaved write could not go unnoticed.
func appendMany(path string, w, n, g int) error {
	var wg sync.WaitGroup
	errc := make(chan error, g)
	for k := range g {
		wg.Go(func() {
			for i := k; i < n; i += g {
				pad := strings.Repeat(string(rune('a'+(w+i)%26)), 100+(i*37)%3000)
				if err := Append(path, rec{W: w, N: i, S: pad}); err != nil {
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

// checkAll asserts that path holds exactly writers*n whole records, each once.
func checkAll(t *testing.T, path string, writers, n int) {
	t.Helper()
	var bad []BadLine
	got, err := ReadAll[rec](path, func(b BadLine) { bad = append(bad, b) })
	if err != nil {
		t.Fatal(err)
	}
	if len(bad) != 0 {
		t.Fatalf("%d torn or malformed lines, first %v", len(bad), bad[0])
	}
	seen := map[[2]int]bool{}
	for _, r := range got {
		k := [2]int{r.W, r.N}
		if seen[k] {
			t.Fatalf("record %v appears twice", k)
		}
		seen[k] = true
		if want := strings.Repeat(string(rune('a'+(r.W+r.N)%26)), 100+(r.N*37)%3000); r.S != want {
			t.Fatalf("record %v has a damaged payload", k)
		}
	}
	if len(got) != writers*n {
		t.Fatalf("%d records, want %d (lost %d)", len(got), writers*n, writers*n-len(got))
	}
	data, _ := os.ReadFile(path)
	if lines := strings.Count(string(data), "\n"); lines != writers*n {
		t.Fatalf("%d newlines, want %d", lines, writers*n)
	}
	if c, _ := Count(path); c != writers*n {
		t.Fatalf("Count = %d, want %d", c, writers*n)
	}
}

func TestConcurrentAppendGoroutines(t *testing.T) {
	path := filepath.Join(t.TempDir(), "x.jsonl")
	const writers, n = 8, 150
	var wg sync.WaitGroup
	for w := range writers {
		wg.Go(func() {
			if err := appendMany(path, w, n, 2); err != nil {
				t.Error(err)
			}
		})
	}
	wg.Wait()
	checkAll(t, path, writers, n)
}

func TestConcurrentAppendProcesses(t *testing.T) {
	if testing.Short() {
		t.Skip("spawns processes")
	}
	path := filepath.Join(t.TempDir(), "x.jsonl")
	const procs, n = 6, 200
	wait := testproc.Start(t, procs, func(w int) []string {
		return []string{helperEnv + "=1", "PM_JSONL_PATH=" + path, "PM_JSONL_W=" + strconv.Itoa(w), "PM_JSONL_N=" + strconv.Itoa(n)}
	})
	// Append from this process too, while the children run.
	if err := appendMany(path, procs, n, 4); err != nil {
		t.Fatal(err)
	}
	wait()
	checkAll(t, path, procs+1, n)
}

// A reader following the file while writers append sees every record exactly
// once and never a torn line.
func TestReaderFollowsConcurrentAppends(t *testing.T) {
	path := filepath.Join(t.TempDir(), "x.jsonl")
	const writers, n = 4, 100
	var wg sync.WaitGroup
	for w := range writers {
		wg.Go(func() {
			if err := appendMany(path, w, n, 1); err != nil {
				t.Error(err)
			}
		})
	}
	done := make(chan struct{})
	go func() { wg.Wait(); close(done) }()
	r := &Reader{Path: path, Bad: func(b BadLine) { t.Errorf("follower saw a bad line: %v", b) }}
	seen := map[[2]int]bool{}
	read := func() {
		if err := r.Next(func(raw []byte) error {
			var v rec
			if err := json.Unmarshal(raw, &v); err != nil {
				t.Errorf("unmarshal: %v", err)
			}
			k := [2]int{v.W, v.N}
			if seen[k] {
				t.Errorf("record %v read twice", k)
			}
			seen[k] = true
			return nil
		}); err != nil {
			t.Fatal(err)
		}
	}
	for finished := false; !finished; {
		select {
		case <-done:
			finished = true
		default:
		}
		read()
	}
	read()
	if len(seen) != writers*n {
		t.Fatalf("follower saw %d records, want %d", len(seen), writers*n)
	}
}

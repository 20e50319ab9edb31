package watch

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/plasmodium/pm/internal/jsonl"
)

// blockedCtx reports (on blocked) each time the waiter is about to block:
// Until asks for Done only right before it waits for an event, after its
// watches are in place and a check came back false.
type blockedCtx struct {
	context.Context
	blocked chan struct{}
}

func (c *blockedCtx) Done() <-chan struct{} {
	select {
	case c.blocked <- struct{}{}:
	default:
	}
	return c.Context.Done()
}

func newCtx(t *testing.T) *blockedCtx {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute) // hang guard only
	t.Cleanup(cancel)
	return &blockedCtx{Context: ctx, blocked: make(chan struct{}, 1)}
}

func write(t *testing.T, path, data string) {
	t.Helper()
	if err := os.WriteFile(path, []byte(data), 0o644); err != nil {
		t.Error(err)
	}
}

func TestUntilWakesOnWrite(t *testing.T) {
	dir := t.TempDir()
	flag := filepath.Join(dir, "flag")
	ctx := newCtx(t)
	var checks atomic.Int32
	done := make(chan error, 1)
	go func() {
		done <- Until(ctx, func() []string { return []string{dir} }, func() (bool, error) {
			checks.Add(1)
			data, _ := os.ReadFile(flag)
			return string(data) == "go", nil
		})
	}()
	<-ctx.blocked // checked once, now waiting on events
	write(t, filepath.Join(dir, "unrelated"), "x")
	write(t, flag, "not yet")
	<-ctx.blocked // woke, re-checked, waits again
	write(t, flag, "go")
	if err := <-done; err != nil {
		t.Fatalf("Until = %v", err)
	}
	if n := checks.Load(); n < 2 {
		t.Fatalf("%d checks; Until returned without re-checking after an event", n)
	}
}

func TestUntilDoneAtFirstCheck(t *testing.T) {
	n := 0
	err := Until(context.Background(), func() []string { return []string{t.TempDir()} }, func() (bool, error) { n++; return true, nil })
	if err != nil || n != 1 {
		t.Fatalf("Until = %v after %d checks, want nil after 1", err, n)
	}
}

func TestUntilCheckError(t *testing.T) {
	boom := errors.New("boom")
	err := Until(context.Background(), func() []string { return []string{t.TempDir()} }, func() (bool, error) { return false, boom })
	if !errors.Is(err, boom) {
		t.Fatalf("Until = %v, want the check's error", err)
	}
}

func TestUntilContextEnds(t *testing.T) {
	ctx := newCtx(t)
	cctx, cancel := context.WithCancel(ctx)
	ctx2 := &blockedCtx{Context: cctx, blocked: ctx.blocked}
	done := make(chan error, 1)
	go func() {
		done <- Until(ctx2, func() []string { return []string{t.TempDir()} }, func() (bool, error) { return false, nil })
	}()
	<-ctx.blocked
	cancel()
	if err := <-done; !errors.Is(err, context.Canceled) {
		t.Fatalf("Until = %v, want context.Canceled", err)
	}
}

func TestUntilMissingDirIsRetried(t *testing.T) {
	base := t.TempDir()
	sub := filepath.Join(base, "later")
	target := filepath.Join(sub, "ready")
	ctx := newCtx(t)
	done := make(chan error, 1)
	go func() {
		done <- Until(ctx, func() []string { return []string{base, sub} }, func() (bool, error) {
			_, err := os.Stat(target)
			return err == nil, nil
		})
	}()
	<-ctx.blocked // sub does not exist yet: only base is watched
	if err := os.Mkdir(sub, 0o755); err != nil {
		t.Fatal(err)
	}
	<-ctx.blocked // woken by the mkdir; sub is watched now
	write(t, target, "x")
	if err := <-done; err != nil {
		t.Fatal(err)
	}
}

func TestUntilBadDir(t *testing.T) {
	file := filepath.Join(t.TempDir(), "f")
	write(t, file, "")
	// Watching works on files too; a path under a file cannot exist.
	err := Until(context.Background(), func() []string { return []string{filepath.Join(file, "x")} }, func() (bool, error) { return true, nil })
	if err == nil {
		t.Fatal("Until watching a path under a file succeeded")
	}
}

func appendLine(t *testing.T, path string, i int) {
	t.Helper()
	if err := jsonl.Append(path, map[string]int{"i": i}); err != nil {
		t.Error(err)
	}
}

func TestLinesDeliversAppendsThenStops(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "x.jsonl")
	stopFile := filepath.Join(dir, "stop")
	for i := range 3 {
		appendLine(t, path, i) // before the follower starts
	}
	ctx := newCtx(t)
	var mu sync.Mutex
	var got []string
	done := make(chan error, 1)
	go func() {
		r := &jsonl.Reader{Path: path}
		done <- Lines(ctx, r, func(raw []byte) error {
			mu.Lock()
			got = append(got, string(raw))
			mu.Unlock()
			return nil
		}, func() (bool, error) {
			_, err := os.Stat(stopFile)
			return err == nil, nil
		})
	}()
	<-ctx.blocked
	const total = 50
	for i := 3; i < total; i++ {
		appendLine(t, path, i)
	}
	// Lines written before stop turns true are still delivered, however the
	// events were coalesced.
	write(t, stopFile, "")
	if err := <-done; err != nil {
		t.Fatal(err)
	}
	if len(got) != total {
		t.Fatalf("delivered %d lines, want %d", len(got), total)
	}
	for i, l := range got {
		if l != fmt.Sprintf(`{"i":%d}`, i) {
			t.Fatalf("line %d = %s", i, l)
		}
	}
}

func TestLinesPicksUpCompletedTail(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "x.jsonl")
	write(t, path, `{"a":`)
	ctx := newCtx(t)
	lines := make(chan string, 4)
	done := make(chan error, 1)
	stop := atomic.Bool{}
	go func() {
		done <- Lines(ctx, &jsonl.Reader{Path: path}, func(raw []byte) error {
			lines <- string(raw)
			stop.Store(true)
			return nil
		}, func() (bool, error) { return stop.Load(), nil })
	}()
	<-ctx.blocked
	f, err := os.OpenFile(path, os.O_WRONLY|os.O_APPEND, 0)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := f.WriteString("1}\n"); err != nil {
		t.Fatal(err)
	}
	f.Close()
	if err := <-done; err != nil {
		t.Fatal(err)
	}
	if l := <-lines; l != `{"a":1}` {
		t.Fatalf("line = %q", l)
	}
}

func TestLinesCallbackErrorStops(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "x.jsonl")
	appendLine(t, path, 1)
	boom := errors.New("boom")
	err := Lines(newCtx(t), &jsonl.Reader{Path: path}, func([]byte) error { return boom }, nil)
	if !errors.Is(err, boom) {
		t.Fatalf("Lines = %v, want the callback's error", err)
	}
}

func TestLinesNilStopFollowsUntilCancel(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "x.jsonl")
	ctx := newCtx(t)
	cctx, cancel := context.WithCancel(ctx)
	ctx2 := &blockedCtx{Context: cctx, blocked: ctx.blocked}
	got := make(chan struct{}, 1)
	done := make(chan error, 1)
	go func() {
		done <- Lines(ctx2, &jsonl.Reader{Path: path}, func([]byte) error { got <- struct{}{}; return nil }, nil)
	}()
	<-ctx.blocked
	appendLine(t, path, 1)
	<-got
	cancel()
	if err := <-done; !errors.Is(err, context.Canceled) {
		t.Fatalf("Lines = %v, want context.Canceled", err)
	}
}

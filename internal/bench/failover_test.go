package bench

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"syscall"
	"testing"
	"time"
)

// The markers' reader ends when the run does (review: it could block for
// good, on a pipe read or on a send nobody takes once the run returned):
// more markers than the channel holds, none taken, then the run ends and
// the reader closes its channel.
func TestReadMarkersEndsWithTheRun(t *testing.T) {
	fifo := filepath.Join(t.TempDir(), "ran.fifo")
	if err := syscall.Mkfifo(fifo, 0o600); err != nil {
		t.Fatal(err)
	}
	rf, err := os.OpenFile(fifo, os.O_RDWR, 0)
	if err != nil {
		t.Fatal(err)
	}
	defer rf.Close()
	ctx, cancel := context.WithCancel(context.Background())
	marks := make(chan marker, 1)
	done := make(chan error, 1)
	go func() { done <- readMarkers(ctx, rf, marks) }()
	for i := range 4 {
		fmt.Fprintf(rf, "a%d w1\n", i)
	}
	if m := <-marks; m.agent != "a0" || m.where != "w1" {
		t.Fatalf("first marker %+v", m)
	}
	cancel() // the run ends with markers unread and the pipe open
	select {
	case err := <-done:
		if err == nil {
			t.Fatal("the reader ended without saying why")
		}
	case <-time.After(time.Minute): // a bound on a failure, not a timing
		t.Fatal("the markers' reader outlived the run")
	}
}

// A file that cannot be given a deadline is refused at once, clearly.
func TestReadMarkersNeedsADeadline(t *testing.T) {
	f, err := os.Create(filepath.Join(t.TempDir(), "plain"))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	if err := readMarkers(context.Background(), f, make(chan marker)); err == nil {
		t.Fatal("a reader that cannot be bounded was started")
	}
}

package bench

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
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
	marks, err := readMarkers(ctx, rf, 1)
	if err != nil {
		t.Fatal(err)
	}
	for i := range 4 {
		fmt.Fprintf(rf, "a%d w1\n", i)
	}
	if m := <-marks.C; m.agent != "a0" || m.where != "w1" {
		t.Fatalf("first marker %+v", m)
	}
	cancel() // the run ends with markers unread and the pipe open
	select {
	case <-markersDone(marks.C):
		if marks.err == nil {
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
	if _, err := readMarkers(context.Background(), f, 1); err == nil {
		t.Fatal("a reader that cannot be bounded was started")
	}
}

// A pipe every writer closed ends the reading with a reason that says so
// (review: it said "pipe: <nil>").
func TestReadMarkersSaysThePipeEnded(t *testing.T) {
	r, w, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	marks, err := readMarkers(context.Background(), r, 1)
	if err != nil {
		t.Fatal(err)
	}
	w.Close()
	<-markersDone(marks.C)
	if marks.err == nil || strings.Contains(marks.err.Error(), "<nil>") || !strings.Contains(marks.err.Error(), "ended") {
		t.Fatalf("why the reading ended: %v", marks.err)
	}
}

// markersDone is closed once c is, its markers taken.
func markersDone(c <-chan marker) <-chan struct{} {
	done := make(chan struct{})
	go func() {
		for range c {
		}
		close(done)
	}()
	return done
}

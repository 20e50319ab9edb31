package ops

import (
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"

	"github.com/plasmodium/pm/internal/errs"
	"github.com/plasmodium/pm/internal/state/fsstate"
	"github.com/plasmodium/pm/internal/task"
)

func TestReadContextFile(t *testing.T) {
	dir := t.TempDir()
	write := func(name string, size int) string {
		p := filepath.Join(dir, name)
		if err := os.WriteFile(p, []byte(strings.Repeat("a", size)), 0o644); err != nil {
			t.Fatal(err)
		}
		return p
	}
	fifo := filepath.Join(dir, "fifo")
	if err := syscall.Mkfifo(fifo, 0o644); err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		name string
		path string
		code errs.Code
		size int
	}{
		{"small file", write("small", 10), errs.OK, 10},
		{"empty file", write("empty", 0), errs.OK, 0},
		{"exactly the bound", write("max", task.MaxContext), errs.OK, task.MaxContext},
		{"one byte over", write("over", task.MaxContext+1), errs.Usage, 0},
		{"missing", filepath.Join(dir, "missing"), errs.NotFound, 0},
		{"directory", dir, errs.Usage, 0},
		{"device reporting size 0", "/dev/zero", errs.Usage, 0},
		{"fifo with no writer (must not block)", fifo, errs.Usage, 0},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := ReadContextFile(tt.path)
			if errs.CodeOf(err) != tt.code {
				t.Fatalf("ReadContextFile(%s) = %d bytes, %v; want exit %d", tt.path, len(got), err, tt.code)
			}
			if err == nil && len(got) != tt.size {
				t.Fatalf("read %d bytes, want %d", len(got), tt.size)
			}
			if err != nil && !hasTry(err) {
				t.Fatalf("%v: want a Try line", err)
			}
		})
	}
}

func TestSendBounded(t *testing.T) {
	sesss := newStore(t)
	sess := &Session{Store: sesss, State: fsstate.New(sesss), Actor: agentActor("o1", "tk-aaaaaa", "", "")}
	_, err := Send(t.Context(), sess, SendInput{PO: "greeter", Message: strings.Repeat("x", MaxSend+1)})
	if errs.CodeOf(err) != errs.Usage {
		t.Fatalf("Send of %d bytes: %v; want exit 2", MaxSend+1, err)
	}
}

package driver_test

import (
	"context"
	"os"
	"strconv"
	"syscall"
	"testing"

	"github.com/plasmodium/pm/internal/driver"
)

// A descriptor this process inherited without close-on-exec (what a shell's
// `3>&1` gives pm) is not passed on to a host: only 0, 1, 2 and the host's
// output reach it. Read from /proc/PID/fd once Start returned (the exec has
// happened by then), so no timing is involved.
func TestProcessStartPassesNoInheritedDescriptor(t *testing.T) {
	r, w, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	defer w.Close()
	leaked, err := syscall.Dup(int(w.Fd())) // like an inherited fd: no close-on-exec
	if err != nil {
		t.Fatal(err)
	}
	defer syscall.Close(leaked)
	pipe, err := os.Readlink("/proc/self/fd/" + strconv.Itoa(leaked))
	if err != nil {
		t.Fatal(err)
	}
	d := driver.NewProcess(0)
	h, err := d.Start(context.Background(), driver.Spec{Name: "fds", Argv: []string{"sleep", "60"}})
	if err != nil {
		t.Fatal(err)
	}
	defer func() { _, _ = d.Stop(context.Background(), h) }()
	dir := "/proc/" + strconv.Itoa(h.Pid) + "/fd"
	ents, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range ents {
		if target, _ := os.Readlink(dir + "/" + e.Name()); target == pipe {
			t.Fatalf("the host holds the caller's pipe %s as fd %s", pipe, e.Name())
		}
	}
}

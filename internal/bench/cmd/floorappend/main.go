// Command floorappend is the floor of a `pm say`, for the benchmark harness:
// the least a Go program can do to append one line to a shared log safely.
// It opens the file with O_APPEND, takes flock, writes one line and exits.
//
//	floorappend PATH LINE
package main

import (
	"os"
	"syscall"
)

func main() {
	if len(os.Args) != 3 {
		os.Stderr.WriteString("usage: floorappend PATH LINE\n")
		os.Exit(2)
	}
	f, err := os.OpenFile(os.Args[1], os.O_WRONLY|os.O_APPEND|os.O_CREATE, 0o644)
	if err != nil {
		fail(err)
	}
	if err := syscall.Flock(int(f.Fd()), syscall.LOCK_EX); err != nil {
		fail(err)
	}
	if _, err := f.WriteString(os.Args[2] + "\n"); err != nil {
		fail(err)
	}
}

func fail(err error) {
	os.Stderr.WriteString("floorappend: " + err.Error() + "\n")
	os.Exit(1)
}

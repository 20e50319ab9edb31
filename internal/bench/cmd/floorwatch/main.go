// Command floorwatch is the floor of a `pm chat --follow`, for the benchmark
// harness: it follows a file with fsnotify and prints every whole line
// appended after it started, as it arrives. With floorappend it is the floor
// pair of delivery.
//
//	floorwatch PATH
package main

import (
	"bytes"
	"io"
	"os"

	"github.com/fsnotify/fsnotify"
)

func main() {
	if len(os.Args) != 2 {
		os.Stderr.WriteString("usage: floorwatch PATH\n")
		os.Exit(2)
	}
	w, err := fsnotify.NewWatcher()
	if err != nil {
		fail(err)
	}
	if err := w.Add(os.Args[1]); err != nil {
		fail(err)
	}
	f, err := os.Open(os.Args[1])
	if err != nil {
		fail(err)
	}
	if _, err := f.Seek(0, io.SeekEnd); err != nil {
		fail(err)
	}
	os.Stdout.WriteString("ready\n")
	var pending []byte
	buf := make([]byte, 64<<10)
	for {
		select {
		case _, ok := <-w.Events:
			if !ok {
				return
			}
		case err := <-w.Errors:
			fail(err)
		}
		for {
			n, err := f.Read(buf)
			pending = append(pending, buf[:n]...)
			if n == 0 || err != nil {
				break
			}
		}
		if i := bytes.LastIndexByte(pending, '\n'); i >= 0 {
			os.Stdout.Write(pending[:i+1])
			pending = append(pending[:0], pending[i+1:]...)
		}
	}
}

func fail(err error) {
	os.Stderr.WriteString("floorwatch: " + err.Error() + "\n")
	os.Exit(1)
}

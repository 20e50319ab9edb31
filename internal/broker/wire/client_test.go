//go:build linux

package wire

import (
	"context"
	"errors"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"
)

// A missing socket reads as net.Dial's error did (lite prints it after
// "cannot reach this agent's host").
func TestDialMissingSocket(t *testing.T) {
	path := filepath.Join(t.TempDir(), "sock")
	_, err := dial(context.Background(), path)
	if err == nil || !errors.Is(err, syscall.ENOENT) || !strings.HasPrefix(err.Error(), "dial unix "+path+": connect: ") {
		t.Fatalf("dial of a missing socket: %v", err)
	}
}

// A host whose accept backlog is full answers EAGAIN: dial tries again
// until the host accepts, and gives up when its context ends.
func TestDialWaitsForAFullBacklog(t *testing.T) {
	path := filepath.Join(t.TempDir(), "sock")
	ln, err := syscall.Socket(syscall.AF_UNIX, syscall.SOCK_STREAM, 0)
	if err != nil {
		t.Fatal(err)
	}
	defer syscall.Close(ln)
	if err := syscall.Bind(ln, &syscall.SockaddrUnix{Name: path}); err != nil {
		t.Fatal(err)
	}
	if err := syscall.Listen(ln, 0); err != nil {
		t.Fatal(err)
	}
	// Fill the backlog with connections nobody accepts.
	full := false
	for range 64 {
		fd, err := syscall.Socket(syscall.AF_UNIX, syscall.SOCK_STREAM|syscall.SOCK_NONBLOCK, 0)
		if err != nil {
			t.Fatal(err)
		}
		defer syscall.Close(fd)
		if err := syscall.Connect(fd, &syscall.SockaddrUnix{Name: path}); err == syscall.EAGAIN {
			full = true
			break
		} else if err != nil {
			t.Fatal(err)
		}
	}
	if !full {
		t.Skip("the kernel never reported a full backlog")
	}
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if _, err := dial(ctx, path); !errors.Is(err, context.Canceled) {
		t.Fatalf("dial with a full backlog and an ended context: %v", err)
	}
	done := make(chan error, 1)
	go func() {
		c, err := dial(context.Background(), path)
		if err == nil {
			c.Close()
		}
		done <- err
	}()
	// One accept frees a place in the backlog: the retrying dial gets in.
	nfd, _, err := syscall.Accept(ln)
	if err != nil {
		t.Fatal(err)
	}
	defer syscall.Close(nfd)
	select {
	case err := <-done:
		if err != nil {
			t.Fatalf("dial once the host accepted: %v", err)
		}
	case <-time.After(30 * time.Second):
		t.Fatal("dial still waiting 30 s after the host accepted")
	}
}

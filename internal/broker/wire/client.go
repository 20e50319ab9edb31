package wire

import (
	"context"
	"encoding/binary"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"sync"
	"syscall"
	"time"
)

// ErrGone is a connection that ended before the command's exit code came.
var ErrGone = errors.New("the agent's host closed the connection before the command ended")

// Forward runs args in the host listening at socket, as the agent token
// names, with this process's streams, and returns the command's exit code.
// When ctx ends first (the client was interrupted) it closes the
// connection, which cancels the command in the host, and returns ctx's error.
func Forward(ctx context.Context, socket, token string, args []string, stdin io.Reader, stdout, stderr io.Writer) (int, error) {
	c, err := dial(ctx, socket)
	if err != nil {
		return 0, err
	}
	defer c.Close()
	if len(token) > MaxToken {
		return 0, fmt.Errorf("%s is over %d bytes", TokenEnv, MaxToken)
	}
	line, err := json.Marshal(Request{Args: args})
	if err != nil {
		return 0, err
	}
	// The token first, in its own frame: the host reads nothing else
	// before it (package broker).
	msg := binary.BigEndian.AppendUint32(append(make([]byte, 0, 5+len(token)+len(line)+1), FrameToken), uint32(len(token)))
	msg = append(append(append(msg, token...), line...), '\n')
	if _, err := c.Write(msg); err != nil {
		return 0, err
	}
	stop := context.AfterFunc(ctx, func() { _ = c.Close() })
	defer stop()
	code, err := receive(c, stdin, stdout, stderr)
	if ctx.Err() != nil {
		return 0, ctx.Err()
	}
	return code, err
}

// dial connects to the unix socket at path. The descriptor is non-blocking,
// so os.NewFile puts it in the runtime's poller: a Close from another
// goroutine (ctx's end) ends a Read blocked on it. A host whose backlog is
// full answers EAGAIN: the connect is tried again until ctx ends.
func dial(ctx context.Context, path string) (*os.File, error) {
	fd, err := unixSocket()
	if err != nil {
		return nil, dialError(path, "socket", err)
	}
	for delay := time.Millisecond; ; delay = min(2*delay, 100*time.Millisecond) {
		err = syscall.Connect(fd, &syscall.SockaddrUnix{Name: path})
		if err != syscall.EAGAIN && err != syscall.EINTR {
			break
		}
		select {
		case <-ctx.Done():
			syscall.Close(fd)
			return nil, ctx.Err()
		case <-time.After(delay):
		}
	}
	if err != nil {
		syscall.Close(fd)
		return nil, dialError(path, "connect", err)
	}
	return os.NewFile(uintptr(fd), path), nil
}

// dialError reads as net.Dial's did: "dial unix PATH: connect: ...".
func dialError(path, op string, err error) error {
	return fmt.Errorf("dial unix %s: %s: %w", path, op, err)
}

// receive writes the host's output frames to stdout and stderr, sends
// stdin when asked, and returns the exit code.
func receive(c io.ReadWriter, stdin io.Reader, stdout, stderr io.Writer) (int, error) {
	var sendOnce sync.Once
	for {
		typ, data, err := ReadFrame(c)
		if err != nil {
			return 0, fmt.Errorf("%w: %v", ErrGone, err)
		}
		switch typ {
		case FrameStdout:
			_, _ = stdout.Write(data)
		case FrameStderr:
			_, _ = stderr.Write(data)
		case FrameWantStdin:
			sendOnce.Do(func() { go sendStdin(c, stdin) })
		case FrameExit:
			if len(data) != 4 {
				return 0, fmt.Errorf("%w: bad exit frame", ErrGone)
			}
			return int(int32(binary.BigEndian.Uint32(data))), nil
		}
	}
}

// sendStdin copies stdin to the host in frames, then an empty frame for its
// end. It is the only writer on the connection after the request line.
func sendStdin(c io.Writer, stdin io.Reader) {
	buf := make([]byte, MaxFrame)
	for {
		n, err := stdin.Read(buf)
		if n > 0 {
			if werr := WriteFrame(c, FrameStdin, buf[:n]); werr != nil {
				return
			}
		}
		if err != nil {
			_ = WriteFrame(c, FrameStdin, nil)
			return
		}
	}
}

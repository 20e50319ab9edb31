package broker

import (
	"context"
	"encoding/binary"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"sync"
)

// ErrGone is a connection that ended before the command's exit code came.
var ErrGone = errors.New("the agent's host closed the connection before the command ended")

// Forward runs args in the host listening at socket, as the agent token
// names, with this process's streams, and returns the command's exit code.
// When ctx ends first (the client was interrupted) it closes the
// connection, which cancels the command in the host, and returns ctx's error.
func Forward(ctx context.Context, socket, token string, args []string, stdin io.Reader, stdout, stderr io.Writer) (int, error) {
	var d net.Dialer
	c, err := d.DialContext(ctx, "unix", socket)
	if err != nil {
		return 0, err
	}
	defer c.Close()
	line, err := json.Marshal(request{Token: token, Args: args})
	if err != nil {
		return 0, err
	}
	if _, err := c.Write(append(line, '\n')); err != nil {
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

// receive writes the host's output frames to stdout and stderr, sends
// stdin when asked, and returns the exit code.
func receive(c net.Conn, stdin io.Reader, stdout, stderr io.Writer) (int, error) {
	var sendOnce sync.Once
	for {
		typ, data, err := readFrame(c)
		if err != nil {
			return 0, fmt.Errorf("%w: %v", ErrGone, err)
		}
		switch typ {
		case frameStdout:
			_, _ = stdout.Write(data)
		case frameStderr:
			_, _ = stderr.Write(data)
		case frameWantStdin:
			sendOnce.Do(func() { go sendStdin(c, stdin) })
		case frameExit:
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
			if werr := writeFrame(c, frameStdin, buf[:n]); werr != nil {
				return
			}
		}
		if err != nil {
			_ = writeFrame(c, frameStdin, nil)
			return
		}
	}
}

package wire

import (
	"encoding/binary"
	"fmt"
	"io"
)

// The variables that route a pm command to its agent's host.
const (
	SocketEnv = "PM_BROKER"
	TokenEnv  = "PM_AGENT_TOKEN"
)

// Bounds on what either side reads.
const (
	MaxFrame  = 64 << 10 // one frame's payload
	MaxHeader = 1 << 20  // the request line (arguments: pm send takes 256 KiB)
	MaxToken  = 256      // the token frame's payload, the first thing a host reads
)

// Frame types.
const (
	FrameToken     = 't' // client → host, first: the token, before anything else is read
	FrameStdin     = 'i' // client → host: standard input; empty: end of input
	FrameWantStdin = 'r' // host → client: the command reads its input
	FrameStdout    = 'o'
	FrameStderr    = 'e'
	FrameExit      = 'x' // host → client: the exit code, 4 bytes; the last frame
)

// Request is the line a client sends after its token frame.
type Request struct {
	Args []string `json:"args"`
}

// WriteFrame writes one frame in one Write.
func WriteFrame(w io.Writer, typ byte, data []byte) error {
	buf := make([]byte, 5+len(data))
	buf[0] = typ
	binary.BigEndian.PutUint32(buf[1:5], uint32(len(data)))
	copy(buf[5:], data)
	_, err := w.Write(buf)
	return err
}

// ReadFrame reads one frame; a length over MaxFrame is an error, read no
// further.
func ReadFrame(r io.Reader) (byte, []byte, error) {
	var hdr [5]byte
	if _, err := io.ReadFull(r, hdr[:]); err != nil {
		return 0, nil, err
	}
	n := binary.BigEndian.Uint32(hdr[1:])
	if n > MaxFrame {
		return 0, nil, fmt.Errorf("frame of %d bytes is over %d", n, MaxFrame)
	}
	data := make([]byte, n)
	if _, err := io.ReadFull(r, data); err != nil {
		return 0, nil, err
	}
	return hdr[0], data, nil
}

// ExitFrame is the payload of FrameExit for code.
func ExitFrame(code int) []byte {
	var b [4]byte
	binary.BigEndian.PutUint32(b[:], uint32(int32(code)))
	return b[:]
}

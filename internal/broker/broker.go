package broker

import (
	"github.com/plasmodium/pm/internal/broker/wire"

	"bufio"
	"context"
	"crypto/rand"
	"crypto/subtle"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"os"
	"path/filepath"
	"sync"
	"time"
)

// The variables that route a pm command to its agent's host, and the
// bounds on what either side reads (package wire, the protocol).
const (
	SocketEnv = wire.SocketEnv
	TokenEnv  = wire.TokenEnv
	MaxFrame  = wire.MaxFrame
	MaxHeader = wire.MaxHeader
)

// drainWrites is how long a command whose context ended may still write to
// its client (its last output and exit code) before writes fail.
const drainWrites = 2 * time.Second

// Stdio are the streams of one command run for a client.
type Stdio struct {
	In       io.Reader
	Out, Err io.Writer
}

// Runner runs one pm command line as the host's agent and returns its exit
// code; ctx ends when the client goes away or the server closes.
type Runner func(ctx context.Context, args []string, stdio Stdio) int

// Server is one host's broker.
type Server struct {
	Path  string // the socket
	Token string

	dir    string
	ln     net.Listener
	run    Runner
	ctx    context.Context
	cancel context.CancelFunc
	wg     sync.WaitGroup // every goroutine a client started: Close waits for them

	mu     sync.Mutex // closed, and wg.Add against Close's wg.Wait
	closed bool
}

// NewToken returns a random token (256 bits, hex).
func NewToken() string {
	var b [32]byte
	_, _ = rand.Read(b[:])
	return hex.EncodeToString(b[:])
}

// Listen makes a private directory (0700) under tmp (or /tmp when tmp would
// make the socket's path too long for a unix address) and listens there.
func Listen(tmp, token string, run Runner) (*Server, error) {
	if tmp == "" || len(tmp) > 80 {
		tmp = "/tmp"
	}
	dir, err := os.MkdirTemp(tmp, "pm-broker-")
	if err != nil {
		return nil, fmt.Errorf("broker: %w", err)
	}
	path := filepath.Join(dir, "sock")
	ln, err := net.Listen("unix", path)
	if err != nil {
		os.RemoveAll(dir)
		return nil, fmt.Errorf("broker: %w", err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	return &Server{Path: path, Token: token, dir: dir, ln: ln, run: run, ctx: ctx, cancel: cancel}, nil
}

// Serve accepts clients until Close.
func (s *Server) Serve() {
	for {
		c, err := s.ln.Accept()
		if err != nil {
			return
		}
		if !s.track() {
			_ = c.Close()
			return
		}
		go func() {
			defer s.wg.Done()
			s.handle(c)
		}()
	}
}

// Close stops accepting, ends every command still running (their contexts
// end), waits for them and removes the socket. A nil Server is closed.
func (s *Server) Close() {
	if s == nil {
		return
	}
	_ = s.ln.Close()
	s.mu.Lock()
	s.closed = true
	s.mu.Unlock()
	s.cancel()
	s.wg.Wait()
	os.RemoveAll(s.dir)
}

// track counts one more goroutine for Close to wait for, unless Close has
// begun (a connection accepted just before it is then dropped).
func (s *Server) track() bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.closed {
		return false
	}
	s.wg.Add(1)
	return true
}

// handle runs one client's command.
func (s *Server) handle(c net.Conn) {
	defer c.Close()
	r := bufio.NewReaderSize(c, 64<<10)
	w := &frameWriter{c: c}
	req, err := readRequest(r)
	if err != nil {
		_ = w.write(wire.FrameStderr, []byte("pm: broker: "+err.Error()+"\n"))
		_ = w.exit(2)
		return
	}
	if subtle.ConstantTimeCompare([]byte(req.Token), []byte(s.Token)) != 1 {
		_ = w.write(wire.FrameStderr, []byte("pm: "+TokenEnv+" is not this agent's token\nTry: run pm with the environment your host gave you\n"))
		_ = w.exit(5)
		return
	}
	ctx, cancel := context.WithCancel(s.ctx)
	defer cancel()
	in := &lazyStdin{want: func() error { return w.write(wire.FrameWantStdin, nil) }}
	in.pr, in.pw = io.Pipe()
	if s.track() {
		go func() {
			defer s.wg.Done()
			readStdin(r, in.pw, cancel)
		}()
	}
	// Once the command's context ends (its client left, or Close), nothing
	// the client does may keep it: reading its input fails at once, and
	// writing to a client that stopped reading fails shortly, so the command
	// returns and Close is never held up.
	stop := context.AfterFunc(ctx, func() {
		_ = in.pw.CloseWithError(context.Canceled)
		_ = c.SetWriteDeadline(time.Now().Add(drainWrites))
	})
	defer stop()
	code := s.run(ctx, req.Args, Stdio{In: in, Out: w.stream(wire.FrameStdout), Err: w.stream(wire.FrameStderr)})
	// The command is done with its input: a client still sending must not
	// hold readStdin in a pipe write for good (it then drains the rest).
	_ = in.pr.CloseWithError(io.ErrClosedPipe)
	_ = w.exit(code)
}

func readRequest(r *bufio.Reader) (wire.Request, error) {
	var req wire.Request
	line, err := readLine(r, MaxHeader)
	if err != nil {
		return req, err
	}
	if err := json.Unmarshal(line, &req); err != nil {
		return req, fmt.Errorf("bad request: %v", err)
	}
	return req, nil
}

func readLine(r *bufio.Reader, max int) ([]byte, error) {
	var line []byte
	for {
		chunk, err := r.ReadSlice('\n')
		line = append(line, chunk...)
		if len(line) > max {
			return nil, fmt.Errorf("request over %d bytes", max)
		}
		switch {
		case err == nil:
			return line, nil
		case errors.Is(err, bufio.ErrBufferFull):
			continue
		default:
			return nil, err
		}
	}
}

// readStdin passes the client's input frames to the command; the
// connection's end (the client went away) cancels the command.
func readStdin(r io.Reader, pw *io.PipeWriter, cancel context.CancelFunc) {
	eof := false
	for {
		typ, data, err := wire.ReadFrame(r)
		if err != nil {
			_ = pw.CloseWithError(io.ErrUnexpectedEOF)
			cancel()
			return
		}
		if typ != wire.FrameStdin || eof {
			continue
		}
		if len(data) == 0 {
			eof = true
			_ = pw.Close()
			continue
		}
		if _, err := pw.Write(data); err != nil {
			eof = true // the command stopped reading; drain the rest
		}
	}
}

// lazyStdin asks the client for its input on the first read only.
type lazyStdin struct {
	once   sync.Once
	want   func() error
	pr     *io.PipeReader
	pw     *io.PipeWriter
	wanted error
}

func (l *lazyStdin) Read(p []byte) (int, error) {
	l.once.Do(func() { l.wanted = l.want() })
	if l.wanted != nil {
		return 0, l.wanted
	}
	return l.pr.Read(p)
}

// frameWriter writes frames to the connection, one at a time.
type frameWriter struct {
	mu sync.Mutex
	c  io.Writer
}

func (w *frameWriter) write(typ byte, data []byte) error {
	w.mu.Lock()
	defer w.mu.Unlock()
	return wire.WriteFrame(w.c, typ, data)
}

func (w *frameWriter) exit(code int) error {
	return w.write(wire.FrameExit, wire.ExitFrame(code))
}

// stream is an io.Writer sending its writes as frames of typ.
func (w *frameWriter) stream(typ byte) io.Writer {
	return writerFunc(func(p []byte) (int, error) {
		for off := 0; off < len(p); off += MaxFrame {
			end := min(off+MaxFrame, len(p))
			if err := w.write(typ, p[off:end]); err != nil {
				return off, err
			}
		}
		return len(p), nil
	})
}

type writerFunc func([]byte) (int, error)

func (f writerFunc) Write(p []byte) (int, error) { return f(p) }

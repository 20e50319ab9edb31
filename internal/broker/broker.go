package broker

import (
	"github.com/plasmodium/pm/internal/broker/wire"
	"github.com/plasmodium/pm/internal/errs"

	"bufio"
	"context"
	"crypto/rand"
	"crypto/subtle"
	"encoding/binary"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"os"
	"path/filepath"
	"sync"
	"sync/atomic"
	"time"
)

// The variables that route a pm command to its agent's host, and the
// bounds on what either side reads (package wire, the protocol).
const (
	SocketEnv = wire.SocketEnv
	TokenEnv  = wire.TokenEnv
	MaxFrame  = wire.MaxFrame
	MaxHeader = wire.MaxHeader
	MaxToken  = wire.MaxToken
)

// drainWrites is how long a command whose context ended may still write to
// its client (its last output and exit code) before writes fail.
const drainWrites = 2 * time.Second

// What one host serves at once. A connection is pending until its token
// frame has been read and checked: a client sends it as soon as it
// connects, so a pending connection that stays (an idle or slow one) is
// only ever someone without the token.
const (
	// maxPending connections wait for their token at once; a new one
	// closes the oldest, so idle connections can hold no real client off.
	maxPending = 16
	// maxCommands run at once; a client authenticated beyond that is told
	// so (exit 3) and closed.
	maxCommands = 64
	// authTimeout bounds how long a connection may take to send its token
	// and its request line.
	authTimeout = 10 * time.Second
)

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

	mu       sync.Mutex // closed, pending, commands, and wg.Add against Close's wg.Wait
	closed   bool
	pending  map[net.Conn]uint64 // connections whose token is not read yet, by arrival
	arrivals uint64
	commands int // authenticated commands running

	// What the server took in, for tests: connections accepted, the most
	// pending at once, and bytes read before a connection authenticated.
	accepted    int
	peakPending int
	preAuthRead atomic.Int64
}

// NewToken returns a random token (256 bits, hex).
func NewToken() string {
	var b [32]byte
	_, _ = rand.Read(b[:])
	return hex.EncodeToString(b[:])
}

// Listen makes this host's socket directory under parent (RunDir when
// parent is ""), after sweeping the directories of hosts that are gone,
// and listens there.
func Listen(parent, token string, run Runner) (*Server, error) {
	if parent == "" {
		var err error
		if parent, err = RunDir(); err != nil {
			return nil, err
		}
	}
	Sweep(parent)
	dir, err := socketDir(parent)
	if err != nil {
		return nil, err
	}
	path := filepath.Join(dir, "sock")
	if len(path) > maxSocketPath {
		os.RemoveAll(dir)
		return nil, errs.Failf("set TMPDIR to a shorter directory", "broker: the socket's path %s is over the %d bytes a unix socket's address holds", path, maxSocketPath)
	}
	ln, err := net.Listen("unix", path)
	if err != nil {
		os.RemoveAll(dir)
		return nil, fmt.Errorf("broker: %w", err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	return &Server{Path: path, Token: token, dir: dir, ln: ln, run: run, ctx: ctx, cancel: cancel,
		pending: map[net.Conn]uint64{}}, nil
}

// Serve accepts clients until Close. Accepting never waits: a connection
// is admitted as pending (closing the oldest pending one when maxPending
// wait already) and handled in its own goroutine.
func (s *Server) Serve() {
	backoff := time.Duration(0)
	for {
		c, err := s.ln.Accept()
		if errors.Is(err, net.ErrClosed) {
			return
		}
		if err != nil {
			// Out of descriptors (a flood at the process's limit) is for
			// a moment: the agent must still reach its host after it.
			backoff = min(max(2*backoff, 5*time.Millisecond), time.Second)
			time.Sleep(backoff)
			continue
		}
		backoff = 0
		if !s.admit(c) {
			_ = c.Close()
			return
		}
		go func() {
			defer s.wg.Done()
			s.handle(c)
		}()
	}
}

// admit records c as pending, closing the oldest pending connection when
// maxPending wait already; false once Close has begun.
func (s *Server) admit(c net.Conn) bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.closed {
		return false
	}
	if len(s.pending) >= maxPending {
		var oldest net.Conn
		for p, n := range s.pending {
			if oldest == nil || n < s.pending[oldest] {
				oldest = p
			}
		}
		delete(s.pending, oldest)
		_ = oldest.Close() // its read fails: its goroutine ends
	}
	s.arrivals++
	s.pending[c] = s.arrivals
	s.accepted++
	s.peakPending = max(s.peakPending, len(s.pending))
	s.wg.Add(1)
	return true
}

// authenticated moves c from pending to the running commands: false when
// it is no longer pending (closed for a newer one, or by Close), and a
// refusal when maxCommands run already.
func (s *Server) authenticated(c net.Conn) (bool, *refusal) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if _, ok := s.pending[c]; !ok {
		return false, nil
	}
	delete(s.pending, c)
	if s.commands >= maxCommands {
		return false, &refusal{code: 3, msg: fmt.Sprintf("this agent's host runs at most %d commands at once\nTry: let some end first (a pm wait or pm chat --follow holds one until it ends)", maxCommands)}
	}
	s.commands++
	return true, nil
}

// leave forgets c, pending or running.
func (s *Server) leave(c net.Conn, running bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	delete(s.pending, c)
	if running {
		s.commands--
	}
}

// Close stops accepting, closes the connections still waiting for their
// token, ends every command still running (their contexts end), waits for
// them and removes the socket. A nil Server is closed.
func (s *Server) Close() {
	if s == nil {
		return
	}
	_ = s.ln.Close()
	s.mu.Lock()
	s.closed = true
	for c := range s.pending {
		_ = c.Close()
	}
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

// refusal is an answer to a client whose command does not run: a message
// for its stderr and an exit code. A nil refusal answers nothing.
type refusal struct {
	code int
	msg  string
}

func (r *refusal) send(w *frameWriter) {
	if r != nil && r.msg != "" {
		_ = w.write(wire.FrameStderr, []byte("pm: "+r.msg+"\n"))
		_ = w.exit(r.code)
	}
}

// handle runs one client's command, once its token has been read first
// and checked: before that, nothing but the token frame is read, at most
// 5+MaxToken bytes, within authTimeout.
func (s *Server) handle(c net.Conn) {
	defer c.Close()
	w := &frameWriter{c: c}
	_ = c.SetDeadline(time.Now().Add(authTimeout))
	if r := s.authenticate(c); r != nil {
		s.leave(c, false)
		r.send(w)
		return
	}
	ok, r := s.authenticated(c)
	if !ok {
		r.send(w)
		return
	}
	defer s.leave(c, true)
	r2 := bufio.NewReaderSize(c, 64<<10)
	req, err := readRequest(r2)
	if err != nil {
		(&refusal{code: 2, msg: "broker: " + err.Error()}).send(w)
		return
	}
	_ = c.SetDeadline(time.Time{}) // a command may wait, and read its input, as long as it takes
	ctx, cancel := context.WithCancel(s.ctx)
	defer cancel()
	in := &lazyStdin{want: func() error { return w.write(wire.FrameWantStdin, nil) }}
	in.pr, in.pw = io.Pipe()
	if s.track() {
		go func() {
			defer s.wg.Done()
			readStdin(r2, in.pw, cancel)
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

// authenticate reads the token frame straight from the connection (no
// buffer reads ahead of it) and checks it: a refusal to send, or one with
// no message when the client is gone.
func (s *Server) authenticate(c net.Conn) *refusal {
	var hdr [5]byte
	if !s.readPreAuth(c, hdr[:]) {
		return &refusal{}
	}
	if hdr[0] != wire.FrameToken {
		return &refusal{code: 2, msg: "broker: the connection did not start with its token\nTry: run the pm your host gave you (the one on PATH)"}
	}
	n := binary.BigEndian.Uint32(hdr[1:])
	if n > MaxToken {
		return &refusal{code: 2, msg: fmt.Sprintf("broker: a token frame of %d bytes is over %d", n, MaxToken)}
	}
	tok := make([]byte, n)
	if !s.readPreAuth(c, tok) {
		return &refusal{}
	}
	if subtle.ConstantTimeCompare(tok, []byte(s.Token)) != 1 {
		return &refusal{code: 5, msg: TokenEnv + " is not this agent's token\nTry: run pm with the environment your host gave you"}
	}
	return nil
}

// readPreAuth fills b from c, counting what it read (preAuthRead).
func (s *Server) readPreAuth(c net.Conn, b []byte) bool {
	n, err := io.ReadFull(c, b)
	s.preAuthRead.Add(int64(n))
	return err == nil
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

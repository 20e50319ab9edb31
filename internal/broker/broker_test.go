package broker

import (
	"encoding/binary"
	"os"

	"github.com/plasmodium/pm/internal/broker/wire"

	"bytes"
	"context"
	"errors"
	"io"
	"net"
	"slices"
	"strings"
	"testing"
)

// readFail is a standard input that must not be read.
type readFail struct{ t *testing.T }

func (r readFail) Read([]byte) (int, error) {
	r.t.Error("the client's input was read though the command never asked for it")
	return 0, io.EOF
}

func listen(t *testing.T, run Runner) *Server {
	t.Helper()
	s, err := Listen(shortDir(t), NewToken(), run)
	if err != nil {
		t.Fatal(err)
	}
	go s.Serve()
	t.Cleanup(s.Close)
	return s
}

func TestForward(t *testing.T) {
	echo := func(_ context.Context, args []string, io_ Stdio) int {
		switch args[0] {
		case "cat":
			data, err := io.ReadAll(io_.In)
			if err != nil {
				return 9
			}
			_, _ = io_.Out.Write(data)
		case "big":
			_, _ = io_.Out.Write(bytes.Repeat([]byte("x"), 3*MaxFrame+7))
		default:
			_, _ = io.WriteString(io_.Out, "out:"+strings.Join(args, ","))
			_, _ = io.WriteString(io_.Err, "pm: refused\nTry: something\n")
		}
		return len(args)
	}
	for _, tc := range []struct {
		name     string
		args     []string
		stdin    func(t *testing.T) io.Reader
		code     int
		out, err string
	}{
		{"exit code and both streams", []string{"say", "hi", "there"}, func(t *testing.T) io.Reader { return readFail{t} }, 3, "out:say,hi,there", "pm: refused\nTry: something\n"},
		{"input read when asked", []string{"cat"}, func(*testing.T) io.Reader { return strings.NewReader("from stdin") }, 1, "from stdin", ""},
		{"empty input", []string{"cat"}, func(*testing.T) io.Reader { return strings.NewReader("") }, 1, "", ""},
		{"output over one frame", []string{"big"}, func(t *testing.T) io.Reader { return readFail{t} }, 1, strings.Repeat("x", 3*MaxFrame+7), ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			s := listen(t, echo)
			var out, errOut bytes.Buffer
			code, err := wire.Forward(context.Background(), s.Path, s.Token, tc.args, tc.stdin(t), &out, &errOut)
			if err != nil {
				t.Fatal(err)
			}
			if code != tc.code || out.String() != tc.out || errOut.String() != tc.err {
				t.Fatalf("got %d %q %q, want %d %q %q", code, out.String(), errOut.String(), tc.code, tc.out, tc.err)
			}
		})
	}
}

func TestWrongTokenRunsNothing(t *testing.T) {
	s := listen(t, func(context.Context, []string, Stdio) int {
		t.Error("a command ran for a wrong token")
		return 0
	})
	for _, tok := range []string{"", "x", s.Token + "0", strings.ToUpper(s.Token)} {
		var errOut bytes.Buffer
		code, err := wire.Forward(context.Background(), s.Path, tok, []string{"answer", "rq-000000", "yes"}, readFail{t}, io.Discard, &errOut)
		if err != nil || code != 5 || !strings.Contains(errOut.String(), "Try:") {
			t.Fatalf("token %q: code %d err %v stderr %q", tok, code, err, errOut.String())
		}
	}
}

// A client that goes away ends its command's context in the host; Close
// ends the rest.
func TestCancel(t *testing.T) {
	started := make(chan struct{}, 2)
	ended := make(chan error, 2)
	s := listen(t, func(ctx context.Context, _ []string, _ Stdio) int {
		started <- struct{}{}
		<-ctx.Done()
		ended <- ctx.Err()
		return 124
	})
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() {
		_, err := wire.Forward(ctx, s.Path, s.Token, []string{"wait"}, readFail{t}, io.Discard, io.Discard)
		done <- err
	}()
	<-started
	cancel()
	if err := <-done; !errors.Is(err, context.Canceled) {
		t.Fatalf("Forward: %v", err)
	}
	if err := <-ended; !errors.Is(err, context.Canceled) {
		t.Fatalf("command ctx: %v", err)
	}

	go func() {
		_, err := wire.Forward(context.Background(), s.Path, s.Token, []string{"wait"}, readFail{t}, io.Discard, io.Discard)
		done <- err
	}()
	<-started
	s.Close()
	<-ended
	if err := <-done; err != nil {
		t.Fatalf("Forward after Close: %v (the exit code should still arrive)", err)
	}
}

// What a host reads before a client authenticated is bounded: the token
// frame comes first, at most 5+MaxToken bytes, and nothing is read past a
// frame that is not the token or is too long; after it, the request line
// is bounded by MaxHeader.
func TestOversizedRequest(t *testing.T) {
	s := listen(t, func(context.Context, []string, Stdio) int {
		t.Error("ran an oversized request")
		return 0
	})
	tokenFrame := func(tok string) []byte {
		return append(binary.BigEndian.AppendUint32([]byte{wire.FrameToken}, uint32(len(tok))), tok...)
	}
	for _, tc := range []struct {
		name    string
		send    []byte
		code    int
		stderr  string
		preAuth int64 // bytes the host may read before authentication
	}{
		{"no token first (a request line of 2 MiB)", bytes.Repeat([]byte("a"), 2*MaxHeader), 2, "did not start with its token", 5},
		{"a token frame of 1 GiB", append([]byte{wire.FrameToken, 0x40, 0, 0, 0}, bytes.Repeat([]byte("b"), MaxFrame)...), 2, "over 256", 5},
		{"a request line over MaxHeader", append(tokenFrame(s.Token), bytes.Repeat([]byte("c"), 2*MaxHeader)...), 2, "over", int64(5 + len(s.Token))},
	} {
		t.Run(tc.name, func(t *testing.T) {
			before := s.preAuthRead.Load()
			c, err := net.Dial("unix", s.Path)
			if err != nil {
				t.Fatal(err)
			}
			defer c.Close()
			go func() { _, _ = c.Write(tc.send) }()
			var errOut bytes.Buffer
			code, err := exitAndStderr(c, &errOut)
			if err != nil || code != tc.code || !strings.Contains(errOut.String(), tc.stderr) {
				t.Fatalf("code %d err %v stderr %q", code, err, errOut.String())
			}
			if got := s.preAuthRead.Load() - before; got > tc.preAuth {
				t.Fatalf("read %d bytes before authenticating, want at most %d", got, tc.preAuth)
			}
		})
	}
}

// A flood of connections without the token (issue 20: 64 connections
// each sending up to 1 MiB took a host from 13 to 127 MB) is bounded: idle
// ones wait in at most maxPending places, the oldest closed for a newer
// one; large frames are refused after their 5-byte header or a token's
// worth, so each sender gets only its socket buffer's worth in; and a
// real client is still served, during the flood and after it.
func TestFloodBounded(t *testing.T) {
	s := listen(t, func(_ context.Context, _ []string, io_ Stdio) int {
		_, _ = io.WriteString(io_.Out, "pong")
		return 0
	})
	serve := func() {
		t.Helper()
		var out bytes.Buffer
		code, err := wire.Forward(context.Background(), s.Path, s.Token, []string{"ping"}, readFail{t}, &out, io.Discard)
		if err != nil || code != 0 || out.String() != "pong" {
			t.Fatalf("a real client: code %d, err %v, out %q", code, err, out.String())
		}
	}
	const idle, big = 64, 64
	for range idle {
		c, err := net.Dial("unix", s.Path)
		if err != nil {
			t.Fatal(err)
		}
		defer c.Close()
	}
	serve()
	// Each sender's socket buffer is small, so what it got in is what the
	// host read plus a few KiB: the host that read a 1 MiB line let it
	// write over a MiB.
	most := 0
	wrong := append(binary.BigEndian.AppendUint32([]byte{wire.FrameToken}, MaxToken), bytes.Repeat([]byte("w"), MaxToken)...)
	for i := range big {
		c, err := net.Dial("unix", s.Path)
		if err != nil {
			t.Fatal(err)
		}
		if err := c.(*net.UnixConn).SetWriteBuffer(4096); err != nil {
			t.Fatal(err)
		}
		payload := append([]byte(`{"token":"x","args":["`), bytes.Repeat([]byte("a"), 2*MaxHeader)...) // the old request line
		if i%2 == 1 {
			payload = append(slices.Clip(wrong), bytes.Repeat([]byte("b"), 2*MaxHeader)...)
		}
		n, err := c.Write(payload)
		c.Close()
		most = max(most, n)
		if err == nil || n >= 64<<10 {
			t.Fatalf("sender %d wrote %d of %d bytes (err %v): the host read them", i, n, len(payload), err)
		}
	}
	serve()
	s.mu.Lock()
	accepted, peak := s.accepted, s.peakPending
	s.mu.Unlock()
	read := s.preAuthRead.Load()
	t.Logf("accepted %d connections, at most %d pending at once, %d bytes read before authentication; a sender got at most %d bytes in", accepted, peak, read, most)
	if accepted != idle+big+2 {
		t.Errorf("accepted %d connections, want %d", accepted, idle+big+2)
	}
	if peak > maxPending {
		t.Errorf("%d connections pending at once, over %d", peak, maxPending)
	}
	if max := int64(accepted) * (5 + MaxToken); read > max {
		t.Errorf("read %d bytes before authentication, over %d", read, max)
	}
}

// A command blocked reading the input of a client that never sends it (a
// pipe nobody closes) still ends when the server closes.
func TestCloseEndsBlockedRead(t *testing.T) {
	reading := make(chan struct{})
	s := listen(t, func(_ context.Context, _ []string, io_ Stdio) int {
		close(reading)
		_, err := io.ReadAll(io_.In)
		if err == nil {
			return 0
		}
		return 7
	})
	pr, pw := io.Pipe() // the client's input: never written, never closed
	defer pw.Close()
	done := make(chan int, 1)
	go func() {
		code, _ := wire.Forward(context.Background(), s.Path, s.Token, []string{"say", "-"}, pr, io.Discard, io.Discard)
		done <- code
	}()
	<-reading
	s.Close()
	if code := <-done; code != 7 {
		t.Fatalf("exit %d, want the command's 7 after its read failed", code)
	}
}

// A command that stops reading its input before the client stopped sending
// (pm subtask --context-file - reads a bounded amount) must not leave the
// host's input reader stuck in a pipe write: Close waits for every
// goroutine a client started, so it returns only if none is stuck.
func TestUnreadInputLeavesNothingBehind(t *testing.T) {
	one := func(_ context.Context, _ []string, io_ Stdio) int {
		var b [1]byte
		if _, err := io_.In.Read(b[:]); err != nil {
			return 9
		}
		return 0
	}
	s, err := Listen(shortDir(t), NewToken(), one)
	if err != nil {
		t.Fatal(err)
	}
	go s.Serve()
	var out, errOut bytes.Buffer
	code, err := wire.Forward(context.Background(), s.Path, s.Token, []string{"read-one"}, bytes.NewReader(bytes.Repeat([]byte("y"), 4<<20)), &out, &errOut)
	if err != nil || code != 0 {
		t.Fatalf("code %d, err %v, stderr %q", code, err, errOut.String())
	}
	s.Close() // hangs if the input reader is stuck
}

// exitAndStderr reads a host's frames up to the exit code, keeping stderr.
func exitAndStderr(r io.Reader, stderr io.Writer) (int, error) {
	for {
		typ, data, err := wire.ReadFrame(r)
		if err != nil {
			return 0, err
		}
		switch typ {
		case wire.FrameStderr:
			_, _ = stderr.Write(data)
		case wire.FrameExit:
			return int(int32(binary.BigEndian.Uint32(data))), nil
		}
	}
}

// shortDir is a temporary directory with a short path: t.TempDir() holds
// the test's name, and with a long pid and start time the socket's path
// (DIR/PID-START-RAND/sock) went over the 107 bytes a unix address holds.
func shortDir(t *testing.T) string {
	t.Helper()
	dir, err := os.MkdirTemp("", "b")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(dir) })
	return dir
}

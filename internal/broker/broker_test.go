package broker

import (
	"encoding/binary"
	"github.com/plasmodium/pm/internal/broker/wire"

	"bytes"
	"context"
	"errors"
	"io"
	"net"
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
	s, err := Listen(t.TempDir(), NewToken(), run)
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

func TestOversizedRequest(t *testing.T) {
	s := listen(t, func(context.Context, []string, Stdio) int {
		t.Error("ran an oversized request")
		return 0
	})
	c, err := net.Dial("unix", s.Path)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	go func() { _, _ = c.Write(bytes.Repeat([]byte("a"), 2*MaxHeader)) }()
	var errOut bytes.Buffer
	code, err := exitAndStderr(c, &errOut)
	if err != nil || code != 2 || !strings.Contains(errOut.String(), "over") {
		t.Fatalf("code %d err %v stderr %q", code, err, errOut.String())
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
	s, err := Listen(t.TempDir(), NewToken(), one)
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

package listen

import (
	"net"
	"strings"
	"testing"

	"github.com/plasmodium/pm/internal/errs"
)

// A port in use is a state error with a way on that names the flag, not a
// raw bind error with an unrelated Try.
func TestTCPPortInUse(t *testing.T) {
	busy, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer busy.Close()
	ln, err := TCP(busy.Addr().String(), "--addr")
	if err == nil {
		ln.Close()
		t.Fatal("listened on a port in use")
	}
	if !errs.Is(err, errs.State) {
		t.Fatalf("error %v (%T), want a state error", err, err)
	}
	if try := errs.TryOf(err); !strings.Contains(try, "--addr 127.0.0.1:0") || !strings.Contains(err.Error(), "is in use") {
		t.Errorf("error %q, Try %q", err, try)
	}
	ok, err := TCP("127.0.0.1:0", "--addr")
	if err != nil {
		t.Fatal(err)
	}
	ok.Close()
}

package lease_test

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"

	"github.com/plasmodium/pm/internal/hub"
	"github.com/plasmodium/pm/internal/hub/hubtest"
	"github.com/plasmodium/pm/internal/natsx"
	"github.com/plasmodium/pm/internal/natsx/lease"
	"github.com/plasmodium/pm/internal/testproc"
)

// The network namespace test: the cluster runs in a namespace of its own
// (a "world", made by re-running this test inside new user and network
// namespaces, so it needs no root), and holder A is another process in a
// network namespace of its own, joined to the world by a veth pair; the
// cut is that link going down, the way a machine drops off the network.
const (
	netnsEnv  = "PM_LEASE_NETNS" // "world" or "holder"
	worldAddr = "10.231.7.1"
	holderNet = "10.231.7.2/24"
	netnsUser = "pm"
	netnsPass = "netns-test-password-0123456789"
	netnsKey  = "cedar_a1b2"
	netnsSubj = "t.cedar_a1b2"
)

// The test binary started as TestCutOffHolderInNetns's holder A runs the
// holder, not the tests.
func init() {
	if os.Getenv(netnsEnv) == "holder" {
		os.Exit(holder(os.Stdin, os.Stdout))
	}
}

// TestCutOffHolderInNetns is TestCutOffHolderIsFenced with A in its own
// network namespace and the cut a link down, not a node stopped: A's
// connection is not closed, its packets are lost. Skipped, with the
// reason, where the kernel or the user cannot make the namespaces.
func TestCutOffHolderInNetns(t *testing.T) {
	switch os.Getenv(netnsEnv) {
	case "world":
		world(t)
		return
	case "holder":
		t.Skip("the holder runs from TestMain")
	}
	testproc.RerunInNetns(t, "TestCutOffHolderInNetns", netnsEnv+"=world")
}

// world runs inside the user and network namespaces: the cluster on this
// namespace's loopback and on one end of the veth, holder A in a namespace
// of its own at the other end.
func world(t *testing.T) {
	ctx := ctxFor(t)
	testproc.IP(t, "link", "set", "lo", "up")
	testproc.IP(t, "link", "add", "veth-w", "type", "veth", "peer", "name", "veth-a")
	testproc.IP(t, "addr", "add", worldAddr+"/24", "dev", "veth-w")
	testproc.IP(t, "link", "set", "veth-w", "up")
	// Node n1 also listens on the veth, so it needs credentials (a hub
	// reachable off loopback refuses to start without them); so do all.
	h := hubtest.ThreeWith(t, func(c *hub.Config) {
		c.Auth = hub.Auth{User: netnsUser, Password: netnsPass}
		if c.Name == "n1" {
			c.Listen = worldAddr + ":0"
		}
	})
	cb, err := natsx.Connect(ctx, h.URL(1), nats.UserInfo(netnsUser, netnsPass))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(cb.Close)
	if _, err := cb.Stream(ctx, jetstream.StreamConfig{Name: "T", Subjects: []string{"t.>"}}); err != nil {
		t.Fatal(err)
	}
	lb, err := lease.Open(ctx, cb, time.Second)
	if err != nil {
		t.Fatal(err)
	}

	// Holder A: this binary again, in a network namespace of its own.
	a := exec.Command(os.Args[0])
	a.Env = append(os.Environ(), netnsEnv+"=holder", "PM_LEASE_URL="+h.URL(0))
	a.SysProcAttr = &syscall.SysProcAttr{Cloneflags: syscall.CLONE_NEWNET, Pdeathsig: syscall.SIGKILL}
	a.Stderr = os.Stderr
	toA, err := a.StdinPipe()
	if err != nil {
		t.Fatal(err)
	}
	fromA, err := a.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := a.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { toA.Close(); a.Wait() })
	lines := bufio.NewScanner(fromA)
	ask := func(cmd string) string {
		t.Helper()
		if _, err := fmt.Fprintln(toA, cmd); err != nil {
			t.Fatal(err)
		}
		if !lines.Scan() {
			t.Fatalf("holder A ended before answering %s: %v", cmd, lines.Err())
		}
		return lines.Text()
	}
	testproc.IP(t, "link", "set", "veth-a", "netns", fmt.Sprint(a.Process.Pid))
	if got := ask("hold"); got != "ok" {
		t.Fatalf("holder A: %s", got)
	}

	// The cut: A's link goes down. Its connection stays open, its renewal
	// is never answered.
	testproc.IP(t, "link", "set", "veth-w", "down")
	if got := ask("renew-once"); got == "ok" {
		t.Fatal("a holder cut off from the cluster renewed its lease")
	} else {
		t.Logf("A's renewal while cut off: %s", got)
	}
	if err := lb.WaitFree(ctx, netnsKey); err != nil {
		t.Fatal(err)
	}
	b, err := lb.Acquire(ctx, netnsKey, "worker-b")
	if err != nil {
		t.Fatal(err)
	}
	wb, err := b.Writer(ctx, "T", netnsSubj)
	if err != nil {
		t.Fatal(err)
	}
	if err := wb.Append(ctx, []byte("b: after the takeover")); err != nil {
		t.Fatal(err)
	}

	// The link back: A reaches the cluster again, too late.
	testproc.IP(t, "link", "set", "veth-w", "up")
	if got := ask("renew"); got != "lost" {
		t.Fatalf("the cut-off holder's renewal: %s, want lost", got)
	}
	if got := ask("write"); got != "fenced" {
		t.Fatalf("the cut-off holder's write: %s, want fenced", got)
	}
	if err := wb.Append(ctx, []byte("b: goes on")); err != nil {
		t.Fatalf("the new holder's write: %v", err)
	}
	checkCutStream(ctx, t, cb, netnsSubj)
}

// holder is holder A, in its own network namespace: it answers each line
// of stdin with one line. "hold": bring its end of the link up, connect to
// the one node it reaches, take the lease and write once; "renew-once":
// renew it once; "renew": renew it, repeated while the link comes back;
// "write": write through its fenced Writer, likewise. Answers: ok, lost
// (the lease was taken), fenced (the write was refused), or the error.
func holder(in io.Reader, out io.Writer) int {
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	var le *lease.Lease
	var w *lease.Writer
	answer := func(err error) {
		switch {
		case err == nil:
			fmt.Fprintln(out, "ok")
		case errors.Is(err, lease.ErrLost):
			fmt.Fprintln(out, "lost")
		case errors.Is(err, lease.ErrFenced):
			fmt.Fprintln(out, "fenced")
		default:
			fmt.Fprintln(out, strings.ReplaceAll(err.Error(), "\n", " "))
		}
	}
	lines := bufio.NewScanner(in)
	for lines.Scan() {
		switch lines.Text() {
		case "hold":
			answer(func() error {
				for _, args := range [][]string{{"link", "set", "lo", "up"}, {"addr", "add", holderNet, "dev", "veth-a"}, {"link", "set", "veth-a", "up"}} {
					if b, err := exec.Command("ip", args...).CombinedOutput(); err != nil {
						return fmt.Errorf("ip %v: %v: %s", args, err, b)
					}
				}
				c, err := natsx.Connect(ctx, os.Getenv("PM_LEASE_URL"), nats.UserInfo(netnsUser, netnsPass), nats.IgnoreDiscoveredServers())
				if err != nil {
					return err
				}
				l, err := lease.Open(ctx, c, time.Second)
				if err != nil {
					return err
				}
				if le, err = l.Acquire(ctx, netnsKey, "worker-a"); err != nil {
					return err
				}
				if w, err = le.Writer(ctx, "T", netnsSubj); err != nil {
					return err
				}
				return w.Append(ctx, []byte("a: before the cut"))
			}())
		case "renew-once":
			answer(le.Renew(ctx))
		case "renew":
			// Repeated while the link comes back (natsx.Do): a lost lease
			// is no transient error.
			answer(natsx.Do(ctx, func(op context.Context) error { return le.Renew(op) }))
		case "write":
			answer(natsx.Do(ctx, func(op context.Context) error { return w.Append(op, []byte("a: after the cut")) }))
		}
	}
	return 0
}

// Package hubtest starts hubs for tests: one node, or three in a cluster,
// in-process on loopback with their stores in t.TempDir(), closed (every
// goroutine and port) when the test ends.
package hubtest

import (
	"context"
	"fmt"
	"net"
	"net/url"
	"os"
	"runtime"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/plasmodium/pm/internal/hub"
	"github.com/plasmodium/pm/internal/natsx"
)

// Hubs is a running single node or cluster.
type Hubs struct {
	t     testing.TB
	cfgs  []hub.Config
	Nodes []*hub.Hub // nil where stopped
}

// Single starts one node.
func Single(t testing.TB) *Hubs { return SingleWith(t, nil) }

// SingleWith starts one node with its config changed by with (its Auth,
// say).
func SingleWith(t testing.TB, with func(*hub.Config)) *Hubs {
	t.Helper()
	h := &Hubs{t: t, cfgs: []hub.Config{{Name: "n1", StoreDir: t.TempDir(), Listen: "127.0.0.1:0"}}}
	if with != nil {
		with(&h.cfgs[0])
	}
	h.start()
	return h
}

// Three starts a cluster of three nodes routed to one another.
func Three(t testing.TB) *Hubs { return ThreeWith(t, nil) }

// ThreeWith starts a cluster of three with each node's config changed by
// with.
func ThreeWith(t testing.TB, with func(*hub.Config)) *Hubs {
	t.Helper()
	// The routes must name ports before the nodes listen on them: three
	// free ones, taken together and let go just before the start.
	var lns []net.Listener
	var routes []string
	for range 3 {
		ln, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			t.Fatal(err)
		}
		lns = append(lns, ln)
		routes = append(routes, ln.Addr().String())
	}
	for _, ln := range lns {
		ln.Close()
	}
	h := &Hubs{t: t}
	for i, r := range routes {
		h.cfgs = append(h.cfgs, hub.Config{Name: "n" + string(rune('1'+i)), StoreDir: t.TempDir(), Listen: "127.0.0.1:0", Cluster: r, Routes: routes})
		if with != nil {
			with(&h.cfgs[i])
		}
	}
	h.start()
	return h
}

// Sets is both shapes, for tests that must hold on each.
func Sets() []struct {
	Name  string
	Start func(testing.TB) *Hubs
} {
	return []struct {
		Name  string
		Start func(testing.TB) *Hubs
	}{{"single", Single}, {"three", Three}}
}

func (h *Hubs) start() {
	h.t.Helper()
	h.Nodes = make([]*hub.Hub, len(h.cfgs))
	for i := range h.cfgs {
		h.Start(i)
	}
	h.t.Cleanup(func() {
		for i := range h.Nodes {
			h.Stop(i)
		}
	})
}

// Start (re)starts node i with its store as it was.
func (h *Hubs) Start(i int) {
	h.t.Helper()
	if err := h.TryStart(i); err != nil {
		h.t.Fatalf("start hub %s: %v", h.cfgs[i].Name, err)
	}
}

// TryStart (re)starts node i as Start does, returning the error of a
// start that fails rather than failing the test.
func (h *Hubs) TryStart(i int) error {
	n, err := hub.Start(h.cfgs[i])
	if err != nil {
		return err
	}
	// A restarted node listens where it did, as a node restarted on its
	// machine does: a client that lists it (or waits to reconnect to it)
	// finds it again. Its route port is fixed from the start.
	if u, err := url.Parse(n.ClientURL()); err == nil {
		h.cfgs[i].Listen = u.Host
	}
	h.Nodes[i] = n
	return nil
}

// Store is node i's store directory.
func (h *Hubs) Store(i int) string { return h.cfgs[i].StoreDir }

// Stop shuts node i down (its store stays).
func (h *Hubs) Stop(i int) {
	if h.Nodes[i] != nil {
		h.Nodes[i].Close()
		h.Nodes[i] = nil
	}
}

// WaitCurrent waits until the running nodes have a JetStream leader and a
// leader for each of streams (account $G), every node current with them,
// or fails the test when ctx ends. A restarted node catches up after its
// start returns: a test that stops the nodes before waits, or a stream the
// node is still making can outlive its shutdown. The nodes' own state,
// looked at with a bound (like a script's waitfor): the server announces
// no such moment.
func (h *Hubs) WaitCurrent(ctx context.Context, streams ...string) {
	h.t.Helper()
	for !h.current(streams) {
		select {
		case <-ctx.Done():
			h.t.Fatalf("the cluster has no JetStream leader, or one of %v has none, with every node current", streams)
		case <-time.After(20 * time.Millisecond):
		}
	}
}

func (h *Hubs) current(streams []string) bool {
	leader := false
	led := make([]bool, len(streams))
	for _, n := range h.Nodes {
		if n == nil {
			continue
		}
		srv := n.Server()
		if !srv.JetStreamIsCurrent() {
			return false
		}
		leader = leader || srv.JetStreamIsLeader()
		for i, st := range streams {
			if !srv.JetStreamIsStreamCurrent("$G", st) {
				return false
			}
			led[i] = led[i] || srv.JetStreamIsStreamLeader("$G", st)
		}
	}
	return leader && !slices.Contains(led, false)
}

// URL is node i's client URL.
func (h *Hubs) URL(i int) string { return h.Nodes[i].ClientURL() }

// URLs are the running nodes' client URLs, comma-separated, as a client
// that may fail over to any of them names them.
func (h *Hubs) URLs() string {
	var us []string
	for _, n := range h.Nodes {
		if n != nil {
			us = append(us, n.ClientURL())
		}
	}
	return strings.Join(us, ",")
}

// Connect opens a connection to node i (closed when the test ends).
func (h *Hubs) Connect(i int) *natsx.Conn {
	h.t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	c, err := natsx.Connect(ctx, h.URL(i))
	if err != nil {
		h.t.Fatalf("connect to %s: %v", h.URL(i), err)
	}
	h.t.Cleanup(c.Close)
	return c
}

// Len is the number of nodes.
func (h *Hubs) Len() int { return len(h.cfgs) }

// Main runs a package's tests, then fails the run if a server goroutine
// outlived them (a hub a test did not close). Every hub Close waits for
// its own goroutines, so none may remain.
func Main(m *testing.M) int {
	code := m.Run()
	if code != 0 {
		return code
	}
	// A few of the server's goroutines end just after its shutdown returns
	// (a stream's file store flushes its state once more, seen after a
	// node was stopped and restarted): a hub left running keeps its
	// goroutines for good, so they are looked for again, within a bound.
	deadline := time.Now().Add(10 * time.Second)
	for {
		g := serverGoroutine()
		if g == "" {
			return 0
		}
		if time.Now().After(deadline) {
			fmt.Fprintf(os.Stderr, "hubtest: a server goroutine outlived the tests (a hub not closed):\n%s\n", g)
			return 1
		}
		time.Sleep(50 * time.Millisecond)
	}
}

// serverGoroutine is the stack of a live goroutine of nats-server ("" when
// there is none).
func serverGoroutine() string {
	buf := make([]byte, 1<<20)
	stacks := string(buf[:runtime.Stack(buf, true)])
	for _, g := range strings.Split(stacks, "\n\n") {
		if strings.Contains(g, "nats-server/v2/server.") {
			return g
		}
	}
	return ""
}

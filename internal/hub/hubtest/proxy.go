package hubtest

import (
	"bytes"
	"context"
	"io"
	"net"
	"net/url"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/plasmodium/pm/internal/natsx"
)

// Proxy stands between clients and a node on loopback, and loses an
// answer on demand: the fault a node's loss or a cut link makes, where a
// request reached the hub (and was stored) but its answer never came
// back. LoseNextAnswer arms it: the client's next write is passed to the
// node, then the connection is cut both ways before anything comes back;
// the client reconnects through the proxy, as to another node.
type Proxy struct {
	ln     net.Listener
	target string
	mu     sync.Mutex
	armed  bool
	match  []byte // what the write to pass before the cut holds
	cuts   atomic.Int64
	conns  []net.Conn
}

// NewProxy listens on loopback in front of target (host:port), closed
// when the test ends.
func NewProxy(t testing.TB, target string) *Proxy {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	p := &Proxy{ln: ln, target: target}
	go p.serve()
	t.Cleanup(p.close)
	return p
}

// ProxyTo is a Proxy in front of node i.
func (h *Hubs) ProxyTo(i int) *Proxy {
	h.t.Helper()
	u, err := url.Parse(h.URL(i))
	if err != nil {
		h.t.Fatal(err)
	}
	return NewProxy(h.t, u.Host)
}

// ConnectVia opens a connection through p (closed when the test ends).
func (h *Hubs) ConnectVia(p *Proxy) *natsx.Conn {
	h.t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	c, err := natsx.Connect(ctx, p.URL())
	if err != nil {
		h.t.Fatalf("connect through %s: %v", p.URL(), err)
	}
	h.t.Cleanup(c.Close)
	return c
}

// URL is the proxy's nats:// URL.
func (p *Proxy) URL() string { return "nats://" + p.ln.Addr().String() }

// LoseNextAnswer cuts the connection right after the client's next write
// reached the node: whatever that write asked is done, its answer lost.
func (p *Proxy) LoseNextAnswer() { p.LoseAnswerTo("") }

// LoseAnswerTo is LoseNextAnswer for the client's next write that holds
// s (a subject: "$KV.", "$JS.API.CONSUMER."), once. A write is what one
// read of the client's socket returns: the client's flushes, which keep a
// protocol line whole in practice.
func (p *Proxy) LoseAnswerTo(s string) {
	p.mu.Lock()
	p.armed, p.match = true, []byte(s)
	p.mu.Unlock()
}

// cutAfter reports whether b is the write to pass on before the cut.
func (p *Proxy) cutAfter(b []byte) bool {
	p.mu.Lock()
	defer p.mu.Unlock()
	if !p.armed || !bytes.Contains(b, p.match) {
		return false
	}
	p.armed = false
	return true
}

// Cuts is how many connections LoseNextAnswer has cut.
func (p *Proxy) Cuts() int64 { return p.cuts.Load() }

func (p *Proxy) serve() {
	for {
		c, err := p.ln.Accept()
		if err != nil {
			return
		}
		s, err := net.Dial("tcp", p.target)
		if err != nil {
			c.Close()
			continue
		}
		p.mu.Lock()
		p.conns = append(p.conns, c, s)
		p.mu.Unlock()
		go func() { _, _ = io.Copy(c, s); c.Close() }()
		go p.up(c, s)
	}
}

// up copies the client's writes to the node; armed, it passes one on and
// cuts both ends before the node's answer can come back.
func (p *Proxy) up(c, s net.Conn) {
	defer s.Close()
	buf := make([]byte, 64<<10)
	for {
		n, err := c.Read(buf)
		if n > 0 {
			cut := p.cutAfter(buf[:n])
			if cut {
				// The client's end first: no answer can reach it after.
				p.cuts.Add(1)
				c.Close()
			}
			if _, werr := s.Write(buf[:n]); werr != nil || cut {
				c.Close()
				return
			}
		}
		if err != nil {
			return
		}
	}
}

func (p *Proxy) close() {
	p.ln.Close()
	p.mu.Lock()
	defer p.mu.Unlock()
	for _, c := range p.conns {
		c.Close()
	}
}

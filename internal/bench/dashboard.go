package bench

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"os"
	"os/exec"
	"strings"
	"sync"
	"time"

	"github.com/gorilla/websocket"
)

// DashboardResult holds the figures of pm dashboard.
type DashboardResult struct {
	// One is from a pm say process's exit to one websocket client's frame
	// of its message.posted event (0 when the frame came first).
	One Durations
	// OneFromWrite is from the event's own timestamp (taken as it is
	// appended) to the same client's frame: the server's wake-up path alone.
	OneFromWrite Durations
	// Slowest is, with Clients clients connected, the latencies of the
	// client whose p99 was the worst; Missing counts events some client
	// did not receive (a correctness check: it must be 0).
	Slowest Durations
	Clients int
	Missing int
	// IdleCPU is the server's CPU (percent of one CPU) over IdleWindow
	// with Clients clients connected and nothing happening.
	IdleCPU    float64
	IdleWindow time.Duration
	// State and StateAll are GET /api/state on a generated state of
	// StateTasks tasks: the default view (live tasks) and ?all=1&limit=10000.
	State, StateAll Durations
	StateTasks      int
}

// dashboardServer is a running `pm dashboard` process.
type dashboardServer struct {
	cmd   *exec.Cmd
	base  string // http://host:port
	token string
	done  chan error
}

// startDashboard runs `pm dashboard --addr 127.0.0.1:0` and reads its URL.
func startDashboard(ctx context.Context, p *PM) (*dashboardServer, error) {
	cmd := p.Command(ctx, "", "dashboard", "--addr", "127.0.0.1:0")
	out, err := cmd.StdoutPipe()
	if err != nil {
		return nil, err
	}
	var stderr strings.Builder
	cmd.Stderr = &stderr
	if err := cmd.Start(); err != nil {
		return nil, err
	}
	d := &dashboardServer{cmd: cmd, done: make(chan error, 1)}
	lines := bufio.NewReader(out)
	line, err := lines.ReadString('\n')
	go func() { _, _ = io.Copy(io.Discard, lines); d.done <- cmd.Wait() }()
	if err != nil {
		d.stop()
		return nil, fmt.Errorf("pm dashboard printed no URL: %v (stderr: %s)", err, strings.TrimSpace(stderr.String()))
	}
	u, err := url.Parse(strings.TrimSpace(strings.TrimPrefix(line, "pm dashboard: ")))
	if err != nil || u.Query().Get("token") == "" {
		d.stop()
		return nil, fmt.Errorf("pm dashboard: unexpected first line %q", line)
	}
	d.base, d.token = "http://"+u.Host, u.Query().Get("token")
	return d, nil
}

// stop interrupts the server and waits for it.
func (d *dashboardServer) stop() {
	_ = d.cmd.Process.Signal(os.Interrupt)
	select {
	case <-d.done:
	case <-time.After(10 * time.Second):
		_ = d.cmd.Process.Kill()
		<-d.done
	}
}

// get times one authenticated GET of path and checks its status.
func (d *dashboardServer) get(ctx context.Context, path string) (time.Duration, []byte, error) {
	req, err := http.NewRequestWithContext(ctx, "GET", d.base+path, nil)
	if err != nil {
		return 0, nil, err
	}
	req.Header.Set("Authorization", "Bearer "+d.token)
	start := time.Now()
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return 0, nil, err
	}
	body, err := io.ReadAll(resp.Body)
	resp.Body.Close()
	took := time.Since(start)
	if err == nil && resp.StatusCode != 200 {
		err = fmt.Errorf("GET %s: %d %s", path, resp.StatusCode, body)
	}
	return took, body, err
}

// cursor is the bus cursor of a fresh snapshot.
func (d *dashboardServer) cursor(ctx context.Context) (string, error) {
	_, body, err := d.get(ctx, "/api/state?log=0")
	if err != nil {
		return "", err
	}
	var s struct{ Cursor string }
	return s.Cursor, json.Unmarshal(body, &s)
}

// wsClient follows /api/events and reports when each message arrives.
type wsClient struct {
	conn     *websocket.Conn
	mu       sync.Mutex
	arrived  map[string]time.Time // msg_id → when its frame was read
	written  map[string]time.Time // msg_id → the event's timestamp
	notify   chan struct{}
	readErr  error
	finished chan struct{}
}

func (d *dashboardServer) dial(cursor string) (*wsClient, error) {
	u := strings.Replace(d.base, "http://", "ws://", 1) + "/api/events?cursor=" + url.QueryEscape(cursor)
	conn, _, err := websocket.DefaultDialer.Dial(u, http.Header{"Authorization": {"Bearer " + d.token}})
	if err != nil {
		return nil, err
	}
	c := &wsClient{conn: conn, arrived: map[string]time.Time{}, written: map[string]time.Time{}, notify: make(chan struct{}, 1), finished: make(chan struct{})}
	go c.read()
	return c, nil
}

func (c *wsClient) read() {
	defer close(c.finished)
	for {
		_, b, err := c.conn.ReadMessage()
		at := time.Now()
		if err != nil {
			c.mu.Lock()
			c.readErr = err
			c.mu.Unlock()
			return
		}
		var m struct {
			Event struct {
				Time  time.Time `json:"ts"`
				Kind  string    `json:"kind"`
				MsgID string    `json:"msg_id"`
			} `json:"event"`
		}
		if json.Unmarshal(b, &m) != nil || m.Event.Kind != "message.posted" {
			continue
		}
		c.mu.Lock()
		c.arrived[m.Event.MsgID] = at
		c.written[m.Event.MsgID] = m.Event.Time
		c.mu.Unlock()
		select {
		case c.notify <- struct{}{}:
		default:
		}
	}
}

// await waits until id arrived (bounded: a lost event fails, it is no
// timing assertion).
func (c *wsClient) await(id string) (time.Time, bool) {
	timer := time.NewTimer(10 * time.Second)
	defer timer.Stop()
	for {
		c.mu.Lock()
		at, ok := c.arrived[id]
		c.mu.Unlock()
		if ok {
			return at, true
		}
		select {
		case <-c.notify:
		case <-c.finished:
			return time.Time{}, false
		case <-timer.C:
			return time.Time{}, false
		}
	}
}

func (c *wsClient) close() { _ = c.conn.Close(); <-c.finished }

// Dashboard measures pm dashboard as a separate process: n pm say processes
// one after another with one websocket client, then n more with clients
// connected (each say waits until every client has its event, so each
// figure is one wake-up, not a queue), the server's idle CPU with those
// clients, and GET /api/state on a generated state of spec.Tasks tasks.
func Dashboard(ctx context.Context, bin, dir string, n, clients, runs int, window time.Duration, spec StateSpec) (*DashboardResult, error) {
	res := &DashboardResult{Clients: clients, IdleWindow: window, StateTasks: spec.Tasks}
	for _, sub := range []string{"/live", "/big"} {
		if err := os.MkdirAll(dir+sub, 0o755); err != nil {
			return nil, err
		}
	}
	p, err := NewProject(ctx, bin, dir+"/live", 2*n+10)
	if err != nil {
		return nil, err
	}
	t, err := p.Task(ctx, "dashboard latency")
	if err != nil {
		return nil, err
	}
	if _, err := p.Phase(ctx, t, 2*n+5); err != nil {
		return nil, err
	}
	srv, err := startDashboard(ctx, &p.PM)
	if err != nil {
		return nil, err
	}
	defer srv.stop()
	cur, err := srv.cursor(ctx)
	if err != nil {
		return nil, err
	}
	var conns []*wsClient
	defer func() {
		for _, c := range conns {
			c.close()
		}
	}()
	connect := func(k int) error {
		for range k {
			c, err := srv.dial(cur)
			if err != nil {
				return err
			}
			conns = append(conns, c)
		}
		return nil
	}
	if err := connect(1); err != nil {
		return nil, err
	}
	one, _, err := sayAndAwait(ctx, p, t.Owner, n, conns)
	if err != nil {
		return nil, err
	}
	res.One = one[0]
	c := conns[0]
	c.mu.Lock()
	for id, at := range c.arrived {
		res.OneFromWrite = append(res.OneFromWrite, at.Sub(c.written[id]))
	}
	c.mu.Unlock()
	if err := connect(clients - 1); err != nil {
		return nil, err
	}
	all, missing, err := sayAndAwait(ctx, p, t.Owner, n, conns)
	if err != nil {
		return nil, err
	}
	res.Missing = missing
	for _, ds := range all {
		if res.Slowest == nil || ds.Percentile(99) > res.Slowest.Percentile(99) {
			res.Slowest = ds
		}
	}
	before, err := cpuTicks([]int{srv.cmd.Process.Pid})
	if err != nil {
		return nil, err
	}
	select {
	case <-time.After(window):
	case <-ctx.Done():
		return nil, ctx.Err()
	}
	after, err := cpuTicks([]int{srv.cmd.Process.Pid})
	if err != nil {
		return nil, err
	}
	res.IdleCPU = float64(after-before) / 100 / window.Seconds() * 100 // USER_HZ is 100 on Linux
	res.State, res.StateAll, err = stateTimes(ctx, bin, dir+"/big", spec, runs)
	return res, err
}

// sayAndAwait runs n pm say processes as agent, each after every client has
// the previous one, and returns each client's latencies and how many
// (client, message) pairs never arrived. The first say is a warm-up.
func sayAndAwait(ctx context.Context, p *Project, agent string, n int, conns []*wsClient) ([]Durations, int, error) {
	lat := make([]Durations, len(conns))
	missing := 0
	for i := 0; i <= n; i++ {
		out, _, err := p.Run(ctx, agent, "say", fmt.Sprintf("message %d: the hero section should lead with the benefit", i))
		exited := time.Now()
		if err != nil {
			return nil, 0, err
		}
		id := strings.Fields(out + " x")[0]
		for k, c := range conns {
			at, ok := c.await(id)
			if !ok {
				missing++
				continue
			}
			if i > 0 {
				lat[k] = append(lat[k], max(at.Sub(exited), 0))
			}
		}
		if missing > 0 {
			return lat, missing, nil // a client lost an event: stop, it is a failure
		}
	}
	return lat, 0, nil
}

// stateTimes generates spec's state and times GET /api/state on it.
func stateTimes(ctx context.Context, bin, dir string, spec StateSpec, runs int) (Durations, Durations, error) {
	st, err := Generate(dir, spec)
	if err != nil {
		return nil, nil, err
	}
	srv, err := startDashboard(ctx, &PM{Bin: bin, Dir: dir, Env: Env(dir), Home: st.Root})
	if err != nil {
		return nil, nil, err
	}
	defer srv.stop()
	var live, all Durations
	for _, c := range []struct {
		path string
		into *Durations
		min  int // tasks the answer must hold
	}{{"/api/state", &live, 1}, {"/api/state?all=1&limit=10000", &all, min(spec.Tasks, 10000)}} {
		for i := 0; i <= runs; i++ {
			d, body, err := srv.get(ctx, c.path)
			if err != nil {
				return nil, nil, err
			}
			var s struct{ Tasks []json.RawMessage }
			if err := json.Unmarshal(body, &s); err != nil || len(s.Tasks) < c.min {
				return nil, nil, fmt.Errorf("GET %s: %d tasks, want %d (%v)", c.path, len(s.Tasks), c.min, err)
			}
			if i > 0 { // the first read warms the page cache
				*c.into = append(*c.into, d)
			}
		}
	}
	return live, all, nil
}

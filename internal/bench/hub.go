package bench

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"

	"github.com/plasmodium/pm/internal/hub"
	"github.com/plasmodium/pm/internal/natsx"
)

// Hub is a hub of one or three nodes run by the harness itself, on
// loopback, its stores under a directory of the run: pm's processes and
// the floor's client reach the same servers.
type Hub struct {
	Nodes []*hub.Hub
}

// StartHub starts n nodes (1, or 3 routed to one another, R3).
func StartHub(dir string, n int) (*Hub, error) {
	var routes []string
	if n > 1 {
		var lns []net.Listener
		for range n {
			ln, err := net.Listen("tcp", "127.0.0.1:0")
			if err != nil {
				return nil, err
			}
			lns = append(lns, ln)
			routes = append(routes, ln.Addr().String())
		}
		for _, ln := range lns {
			ln.Close()
		}
	}
	h := &Hub{}
	for i := range n {
		c := hub.Config{Name: fmt.Sprintf("n%d", i+1), StoreDir: filepath.Join(dir, fmt.Sprintf("hub-n%d", i+1)), Listen: "127.0.0.1:0"}
		if n > 1 {
			c.Cluster, c.Routes = routes[i], routes
		}
		node, err := hub.Start(c)
		if err != nil {
			h.Close()
			return nil, err
		}
		h.Nodes = append(h.Nodes, node)
	}
	return h, nil
}

// Close stops every node.
func (h *Hub) Close() {
	for _, n := range h.Nodes {
		n.Close()
	}
}

// URLs lists every node's URL, node first first: a machine's processes
// connect to the first (natsx.Connect keeps the order).
func (h *Hub) URLs(first int) string {
	us := []string{h.Nodes[first].ClientURL()}
	for i, n := range h.Nodes {
		if i != first {
			us = append(us, n.ClientURL())
		}
	}
	return strings.Join(us, ",")
}

// Connect is a client of node i, as the floor's.
func (h *Hub) Connect(ctx context.Context, i int) (*natsx.Conn, error) {
	return natsx.Connect(ctx, h.Nodes[i].ClientURL(), nats.DontRandomize())
}

// HubMachines makes a project on h from machine 0 and joins it from the
// others, each machine a project directory under dir whose processes
// connect to its own node first. messages raises machine 0's limit of
// messages per room (it opens the rooms).
func HubMachines(ctx context.Context, bin, dir string, h *Hub, n, messages int) ([]*PM, error) {
	var ms []*PM
	project := ""
	for i := range n {
		d := filepath.Join(dir, fmt.Sprintf("machine-%d", i))
		if err := mkdir(d); err != nil {
			return nil, err
		}
		p := &PM{Bin: bin, Dir: d, Env: Env(d), Home: filepath.Join(d, ".plasmodium")}
		args := []string{"init", "--store", h.URLs(i % len(h.Nodes))}
		if i > 0 {
			args = append(args, "--project", project)
		}
		if _, _, err := p.Run(ctx, "", args...); err != nil {
			return nil, err
		}
		if i == 0 {
			out, _, err := p.Run(ctx, "", "config", "get", "store.project")
			if err != nil {
				return nil, err
			}
			project = strings.TrimSpace(out)
			if _, _, err := p.Run(ctx, "", "config", "set", "limits.messages_per_phase", strconv.Itoa(max(messages, 50))); err != nil {
				return nil, err
			}
		}
		ms = append(ms, p)
	}
	return ms, nil
}

// hubRoom makes a task (runtime none) and a room of limit in it from p,
// with one role agent; it returns the room's phase id, the task's owner
// and the role agent.
func hubRoom(ctx context.Context, p *PM, title string, limit int) (phaseID, owner, role string, err error) {
	out, _, err := p.Run(ctx, "", "task", title, "--runtime", "none", "--json")
	if err != nil {
		return "", "", "", err
	}
	var t struct{ ID, Owner string }
	if err := json.Unmarshal([]byte(out), &t); err != nil || t.Owner == "" {
		return "", "", "", fmt.Errorf("pm task --json: unexpected output %q", strings.TrimSpace(out))
	}
	out, _, err = p.Run(ctx, t.Owner, "phase", title, "--limit", strconv.Itoa(limit), "--roles", "designer", "--json")
	if err != nil {
		return "", "", "", err
	}
	var ph struct {
		ID     string
		Agents []string
	}
	if err := json.Unmarshal([]byte(out), &ph); err != nil || ph.ID == "" || len(ph.Agents) != 1 {
		return "", "", "", fmt.Errorf("pm phase --json: unexpected output %q", strings.TrimSpace(out))
	}
	return ph.ID, t.Owner, ph.Agents[0], nil
}

// HubDeliveryResult is say on one machine -> follower on another, against
// the engine's floor on the same cluster.
type HubDeliveryResult struct {
	// FromAppend is from the message's timestamp (taken by pm say just
	// before its append) to the line of pm chat --follow on the other
	// machine reaching the harness.
	FromAppend Durations
	// Say is the wall time of each pm say process.
	Say Durations
	// Floor is one raw JetStream publish (a client of the says' node) to
	// its receipt by an ordered consumer (a client of the follower's
	// node), on a stream of the same cluster, one after each say.
	Floor Durations
}

// HubDelivery runs n says from machine a (connected to node 1) while pm
// chat --follow runs on machine b (connected to node 2), on a three-node
// hub, each say waiting for its delivery; one floor step follows each.
func HubDelivery(ctx context.Context, bin, dir string, n int) (*HubDeliveryResult, error) {
	h, err := StartHub(dir, 3)
	if err != nil {
		return nil, err
	}
	defer h.Close()
	ms, err := HubMachines(ctx, bin, dir, h, 2, n+1)
	if err != nil {
		return nil, err
	}
	phaseID, owner, role, err := hubRoom(ctx, ms[0], "hub delivery", n+1)
	if err != nil {
		return nil, err
	}
	floor, err := newHubFloor(ctx, h)
	if err != nil {
		return nil, err
	}
	defer floor.close()
	fctx, cancel := context.WithTimeout(ctx, CmdTimeout+time.Duration(n)*time.Second)
	defer cancel()
	follower := ms[1].Command(fctx, role, "chat", "--phase", phaseID, "--follow", "--json")
	stdout, err := follower.StdoutPipe()
	if err != nil {
		return nil, err
	}
	var stderr strings.Builder
	follower.Stderr = &stderr
	if err := follower.Start(); err != nil {
		return nil, err
	}
	defer func() { cancel(); _ = follower.Wait() }()
	arrivals := readArrivals(stdout, n+10)
	res := &HubDeliveryResult{}
	for i := 0; i <= n; i++ {
		start := time.Now()
		out, _, err := ms[0].Run(ctx, owner, "say", fmt.Sprintf("message %d: the hero section should lead with the benefit", i))
		exited := time.Now()
		if err != nil {
			return nil, err
		}
		a, err := awaitArrival(arrivals, strings.Fields(out + " x")[0])
		if err != nil {
			return nil, fmt.Errorf("%w (follower stderr: %s)", err, strings.TrimSpace(stderr.String()))
		}
		f, err := floor.step(ctx)
		if err != nil {
			return nil, err
		}
		if i == 0 {
			continue // warm-up: the follower is now surely following
		}
		res.Say = append(res.Say, exited.Sub(start))
		res.FromAppend = append(res.FromAppend, a.at.Sub(a.written))
		res.Floor = append(res.Floor, f)
	}
	return res, nil
}

// awaitArrival waits for the follower's line of message id.
func awaitArrival(arrivals <-chan arrival, id string) (arrival, error) {
	timer := time.NewTimer(CmdTimeout)
	defer timer.Stop()
	for {
		select {
		case a, ok := <-arrivals:
			if !ok {
				return arrival{}, fmt.Errorf("follower ended before delivering %s", id)
			}
			if a.id == id {
				return a, nil
			}
		case <-timer.C:
			return arrival{}, fmt.Errorf("message %s not delivered within %s", id, CmdTimeout)
		}
	}
}

// hubFloor is the floor of delivery on a hub: a publisher on node 1, an
// ordered consumer on node 2, a stream of the same cluster (R3).
type hubFloor struct {
	pub, sub *natsx.Conn
	got      chan time.Time
	stop     func()
	n        int
}

func newHubFloor(ctx context.Context, h *Hub) (*hubFloor, error) {
	f := &hubFloor{got: make(chan time.Time, 1)}
	var err error
	if f.pub, err = h.Connect(ctx, 0); err != nil {
		return nil, err
	}
	if f.sub, err = h.Connect(ctx, 1); err != nil {
		f.pub.Close()
		return nil, err
	}
	if _, err := f.pub.Stream(ctx, jetstream.StreamConfig{Name: "PMBENCH_FLOOR", Subjects: []string{"pmbench.floor"}}); err != nil {
		f.close()
		return nil, err
	}
	fctx, cancel := context.WithCancel(ctx)
	done := make(chan struct{})
	go func() {
		defer close(done)
		_ = f.sub.Follow(fctx, "PMBENCH_FLOOR", "pmbench.floor", 0, func(jetstream.Msg) error {
			f.got <- time.Now()
			return nil
		})
	}()
	f.stop = func() { cancel(); <-done }
	return f, nil
}

// step publishes one message and returns the time to its receipt.
func (f *hubFloor) step(ctx context.Context) (time.Duration, error) {
	f.n++
	start := time.Now()
	if _, err := f.pub.JS.Publish(ctx, "pmbench.floor", fmt.Appendf(nil, "floor message %d", f.n)); err != nil {
		return 0, err
	}
	select {
	case at := <-f.got:
		return at.Sub(start), nil
	case <-time.After(CmdTimeout):
		return 0, fmt.Errorf("floor message %d not received within %s", f.n, CmdTimeout)
	}
}

func (f *hubFloor) close() {
	if f.stop != nil {
		f.stop()
	}
	f.pub.Close()
	f.sub.Close()
}

// HubSaysResult is says per second on a three-node hub, with the floor.
type HubSaysResult struct {
	Says, Refused, Errors int
	Elapsed               time.Duration
	FirstError            string
	// Rooms held exactly their limit each (read back from the hub).
	Exact bool
	// FloorAppends in FloorElapsed: the same writers as goroutines of
	// the harness, raw JetStream publishes with the same precondition.
	FloorAppends int
	FloorElapsed time.Duration
}

// HubSays runs machines x writers concurrent writers (each a loop of pm
// say processes on its machine, connected to its own node) into rooms of
// limit, one room after another, until rooms rooms are full; then the
// floor: as many writers in this process, on clients of the same nodes,
// filling as many subjects of limit with publishes that carry the
// subject's expected last sequence (read, publish, read again on a
// refusal), as a room's append does.
func HubSays(ctx context.Context, bin, dir string, machines, writers, rooms, limit int) (*HubSaysResult, error) {
	h, err := StartHub(dir, 3)
	if err != nil {
		return nil, err
	}
	defer h.Close()
	ms, err := HubMachines(ctx, bin, dir, h, machines, limit)
	if err != nil {
		return nil, err
	}
	phases := make([]string, rooms)
	for i := range rooms {
		if phases[i], _, _, err = hubRoom(ctx, ms[0], fmt.Sprintf("hub says %d", i), limit); err != nil {
			return nil, err
		}
	}
	res := &HubSaysResult{}
	var mu sync.Mutex
	var current atomic.Int64 // the room being filled
	var wg sync.WaitGroup
	start := time.Now()
	for mi, m := range ms {
		for w := range writers {
			wg.Add(1)
			go func() {
				defer wg.Done()
				// Bounded: each say fills a place or closes a room.
				for n := 0; n < 2*rooms*limit; n++ {
					r := current.Load()
					if r >= int64(rooms) || ctx.Err() != nil {
						return
					}
					_, _, err := m.Run(ctx, "", "say", fmt.Sprintf("machine %d writer %d say %d", mi, w, n), "--phase", phases[r])
					mu.Lock()
					var ee *exec.ExitError
					switch {
					case err == nil:
						res.Says++
					case errors.As(err, &ee) && ee.ExitCode() == 5:
						res.Refused++
						current.CompareAndSwap(r, r+1) // full: on to the next room
					default:
						res.Errors++
						if res.FirstError == "" {
							res.FirstError = err.Error()
						}
					}
					mu.Unlock()
				}
			}()
		}
	}
	wg.Wait()
	res.Elapsed = time.Since(start)
	res.Exact = res.Says == rooms*limit
	if res.FloorAppends, res.FloorElapsed, err = hubSaysFloor(ctx, h, machines, writers, rooms, limit); err != nil {
		return res, err
	}
	return res, nil
}

// hubSaysFloor is HubSays' floor: machines x writers goroutines, each
// machine's on one client of its node, filling rooms subjects of limit
// messages with publishes carrying the subject's expected last sequence.
func hubSaysFloor(ctx context.Context, h *Hub, machines, writers, rooms, limit int) (int, time.Duration, error) {
	var conns []*natsx.Conn
	defer func() {
		for _, c := range conns {
			c.Close()
		}
	}()
	for i := range machines {
		c, err := h.Connect(ctx, i%len(h.Nodes))
		if err != nil {
			return 0, 0, err
		}
		conns = append(conns, c)
	}
	s, err := conns[0].Stream(ctx, jetstream.StreamConfig{Name: "PMBENCH_ROOMS", Subjects: []string{"pmbench.room.>"}})
	if err != nil {
		return 0, 0, err
	}
	var appended atomic.Int64
	var current atomic.Int64
	var firstErr atomic.Value
	var wg sync.WaitGroup
	start := time.Now()
	for _, c := range conns {
		for range writers {
			wg.Add(1)
			go func() {
				defer wg.Done()
				for n := 0; n < 4*rooms*limit && ctx.Err() == nil; n++ {
					r := current.Load()
					if r >= int64(rooms) {
						return
					}
					subj := fmt.Sprintf("pmbench.room.%d", r)
					count, last := 0, uint64(0)
					if m, err := s.GetLastMsgForSubject(ctx, subj); err == nil {
						count, _ = strconv.Atoi(m.Header.Get("Pm-Index"))
						last = m.Sequence
					} else if !errors.Is(err, jetstream.ErrMsgNotFound) {
						firstErr.CompareAndSwap(nil, err.Error())
						return
					}
					if count >= limit {
						current.CompareAndSwap(r, r+1)
						continue
					}
					msg := &nats.Msg{Subject: subj, Data: []byte("floor"), Header: nats.Header{}}
					msg.Header.Set("Pm-Index", strconv.Itoa(count+1))
					_, err := c.JS.PublishMsg(ctx, msg, jetstream.WithExpectLastSequencePerSubject(last))
					switch {
					case err == nil:
						appended.Add(1)
					case natsx.WrongLast(err):
						// another writer took the place: read again
					default:
						firstErr.CompareAndSwap(nil, err.Error())
						return
					}
				}
			}()
		}
	}
	wg.Wait()
	if e := firstErr.Load(); e != nil {
		return 0, 0, fmt.Errorf("floor: %s", e)
	}
	return int(appended.Load()), time.Since(start), nil
}

func mkdir(d string) error { return os.MkdirAll(d, 0o755) }

package bench

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"strings"
	"time"
)

type arrival struct {
	id      string
	written time.Time // the message's own timestamp, taken by pm say just before its append
	at      time.Time
}

// DeliveryResult holds the delivery figures.
type DeliveryResult struct {
	// Latency is from the say process's exit to the follower's line; a line
	// that arrived before say had exited counts as 0 (Early counts those).
	Latency Durations
	Early   int
	// FromAppend is from the message's timestamp (taken by pm say just
	// before it appends) to the follower's line: the wake-up path alone.
	FromAppend Durations
	// FromStart is from the say process's start to the follower's line.
	FromStart Durations
	// FloorFromStart and FloorFromExit are the floor pair's (floorappend ->
	// floorwatch), one step after each say, so both see the same load.
	FloorFromStart, FloorFromExit Durations
	// Say is the wall time of each say process.
	Say Durations
}

// Delivery measures cross-process delivery: one `pm chat --follow --json`
// process (a role agent of the phase) follows while n `pm say` processes run
// one after another. Latency is from the moment a say process has exited (as
// seen by the harness) to the moment the follower's stdout line for that
// message reaches the harness; a line that arrives before say has exited
// counts as 0. Each say waits for the previous message's delivery, so the
// follower's wake-up is measured alone, not a queue. After each say the
// floor pair makes one step, interleaved so that both see the same load. It
// also returns the wall time of every say process.
func Delivery(ctx context.Context, bin string, fl *Floor, dir string, n int) (*DeliveryResult, error) {
	p, err := NewProject(ctx, bin, dir, n+10)
	if err != nil {
		return nil, err
	}
	t, err := p.Task(ctx, "delivery latency")
	if err != nil {
		return nil, err
	}
	ph, err := p.Phase(ctx, t, n+1) // +1: the warm-up message
	if err != nil {
		return nil, err
	}
	floor, err := startFloorPair(ctx, fl, dir, n+1)
	if err != nil {
		return nil, err
	}
	defer floor.stop()
	fctx, cancel := context.WithTimeout(ctx, CmdTimeout+time.Duration(n)*100*time.Millisecond)
	defer cancel()
	follower := p.Command(fctx, ph.Agents[0], "chat", "--follow", "--json")
	stdout, err := follower.StdoutPipe()
	if err != nil {
		return nil, err
	}
	var stderr strings.Builder
	follower.Stderr = &stderr
	if err := follower.Start(); err != nil {
		return nil, err
	}
	arrivals := readArrivals(stdout, n+10)
	fail := func(err error) (*DeliveryResult, error) {
		cancel()
		_ = follower.Wait()
		return nil, fmt.Errorf("%w (follower stderr: %s)", err, strings.TrimSpace(stderr.String()))
	}
	awaitID := func(id string) (arrival, error) {
		timer := time.NewTimer(10 * time.Second)
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
				return arrival{}, fmt.Errorf("message %s not delivered within 10s", id)
			}
		}
	}
	res := &DeliveryResult{}
	for i := 0; i <= n; i++ {
		start := time.Now()
		out, _, err := p.Run(ctx, t.Owner, "say", fmt.Sprintf("message %d: the hero section should lead with the benefit", i))
		exited := time.Now()
		if err != nil {
			return fail(err)
		}
		id := strings.Fields(out + " x")[0]
		a, err := awaitID(id)
		if err != nil {
			return fail(err)
		}
		fs, fe, err := floor.step(ctx)
		if err != nil {
			return fail(err)
		}
		if i == 0 {
			continue // warm-up: the follower is now surely watching
		}
		res.FloorFromStart = append(res.FloorFromStart, fs)
		res.FloorFromExit = append(res.FloorFromExit, fe)
		res.Say = append(res.Say, exited.Sub(start))
		res.FromAppend = append(res.FromAppend, a.at.Sub(a.written))
		res.FromStart = append(res.FromStart, a.at.Sub(start))
		d := a.at.Sub(exited)
		if d < 0 {
			res.Early++
			d = 0
		}
		res.Latency = append(res.Latency, d)
	}
	// The phase reached its limit and closed: the follower exits by itself.
	done := make(chan error, 1)
	go func() { done <- follower.Wait() }()
	select {
	case err := <-done:
		if err != nil {
			return nil, fmt.Errorf("follower: %v (stderr: %s)", err, strings.TrimSpace(stderr.String()))
		}
	case <-time.After(10 * time.Second):
		cancel()
		<-done
		return nil, fmt.Errorf("follower did not exit after the phase closed")
	}
	return res, nil
}

// readArrivals reads a follower's --json lines from stdout, each message's
// id and timestamp with the time its line arrived; the channel closes when
// the follower's output ends.
func readArrivals(stdout io.Reader, buffer int) <-chan arrival {
	arrivals := make(chan arrival, buffer)
	go func() {
		defer close(arrivals)
		sc := bufio.NewScanner(stdout)
		sc.Buffer(make([]byte, 64<<10), 1<<20)
		for sc.Scan() {
			at := time.Now()
			var m struct {
				ID        string
				Timestamp time.Time
			}
			if json.Unmarshal(sc.Bytes(), &m) == nil {
				arrivals <- arrival{m.ID, m.Timestamp, at}
			}
		}
	}()
	return arrivals
}

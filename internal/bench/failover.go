package bench

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"time"
)

// FailoverResult is the time from a worker's death to its agent running
// on another worker, against its floor.
type FailoverResult struct {
	// Failover is, per trial, from the SIGKILL of the worker that runs
	// the agent to the agent's marker written on the other worker.
	Failover Durations
	// TTL is the lease TTL the run configured (store.lease_seconds): the
	// dead worker's registration and its agent's lease outlive it by up
	// to a TTL (they were last renewed at most a third of it before the
	// kill), and the other worker may take the agent only once both are
	// gone, so no failover beats it by more than that third.
	TTL time.Duration
}

// failoverWorker is one pm worker process of the run.
type failoverWorker struct {
	name string
	pm   *PM
	cmd  *exec.Cmd
	done chan struct{} // closed once the process is reaped
}

// Failover runs a one-node hub, a directory that gives commands (d) and
// two workers (w1, w2), each in a directory of its own joined to the
// project, every lease lasting ttl. Each of trials places a fresh exec
// agent on the worker whose turn it is, waits for its marker there, kills
// that worker -9 and times the marker on the other; then kills the task,
// restarts the dead worker and swaps their parts. The agent (agent.sh,
// unsandboxed) writes its marker to a FIFO the harness reads: no polling.
func Failover(ctx context.Context, bin, dir string, trials int, ttl time.Duration) (*FailoverResult, error) {
	secs := int(ttl / time.Second)
	if secs < 1 {
		return nil, fmt.Errorf("failover: lease TTL %s under a second", ttl)
	}
	h, err := StartHub(dir, 1)
	if err != nil {
		return nil, err
	}
	defer h.Close()
	ctx, cancel := context.WithCancel(ctx)
	defer cancel() // ends every worker left (CommandContext kills it)

	fifo := filepath.Join(dir, "ran.fifo")
	if err := syscall.Mkfifo(fifo, 0o600); err != nil {
		return nil, fmt.Errorf("mkfifo: %w", err)
	}
	// Read and write: the pipe never reaches end of file between agents.
	rf, err := os.OpenFile(fifo, os.O_RDWR, 0)
	if err != nil {
		return nil, err
	}
	defer rf.Close()
	marks, err := readMarkers(ctx, rf, 16) // ends with ctx (cancelled on return)
	if err != nil {
		return nil, err
	}
	agentSh := filepath.Join(dir, "agent.sh")
	script := "# pmbench failover agent: notes where it runs, then waits to be stopped\n" +
		"echo \"$PM_AGENT $(basename \"$PWD\")\" >" + shQuote(fifo) + "\nexec sleep 600\n"
	if err := os.WriteFile(agentSh, []byte(script), 0o755); err != nil {
		return nil, err
	}
	ms, err := HubMachines(ctx, bin, dir, h, 1, 0)
	if err != nil {
		return nil, err
	}
	d := ms[0]
	cmdJSON, _ := json.Marshal([]string{"sh", agentSh})
	setup := [][]string{{"store.lease_seconds", strconv.Itoa(secs)}, {"runtime.exec.command", string(cmdJSON)}, {"runtime.exec.sandbox", "false"}}
	if err := configSet(ctx, d, setup); err != nil {
		return nil, err
	}
	project, _, err := d.Run(ctx, "", "config", "get", "store.project")
	if err != nil {
		return nil, err
	}
	var ws [2]*failoverWorker
	for i := range ws {
		name := fmt.Sprintf("w%d", i+1)
		wd := filepath.Join(dir, name)
		if err := mkdir(wd); err != nil {
			return nil, err
		}
		p := &PM{Bin: bin, Dir: wd, Env: Env(wd), Home: filepath.Join(wd, ".plasmodium")}
		if _, _, err := p.Run(ctx, "", "init", "--store", h.URLs(0), "--project", strings.TrimSpace(project)); err != nil {
			return nil, err
		}
		if err := configSet(ctx, p, setup); err != nil {
			return nil, err
		}
		if ws[i], err = startWorker(ctx, p, name); err != nil {
			return nil, err
		}
	}
	defer func() {
		for _, w := range ws {
			w.stop()
		}
	}()
	res := &FailoverResult{TTL: time.Duration(secs) * time.Second}
	for trial := range trials {
		victim, survivor := ws[trial%2], ws[1-trial%2]
		out, _, err := d.Run(ctx, "", "task", fmt.Sprintf("failover trial %d", trial), "--runtime", "exec", "--on", victim.name, "--json")
		if err != nil {
			return nil, err
		}
		var t struct{ ID, Owner string }
		if err := json.Unmarshal([]byte(out), &t); err != nil || t.Owner == "" {
			return nil, fmt.Errorf("pm task --json: unexpected output %q", strings.TrimSpace(out))
		}
		if _, err := awaitMarker(marks, t.Owner, victim.name); err != nil {
			return nil, err
		}
		killed := time.Now()
		if err := victim.cmd.Process.Kill(); err != nil {
			return nil, err
		}
		<-victim.done
		m, err := awaitMarker(marks, t.Owner, survivor.name)
		if err != nil {
			return nil, fmt.Errorf("trial %d: %w", trial, err)
		}
		res.Failover = append(res.Failover, m.at.Sub(killed))
		if _, _, err := d.Run(ctx, "", "kill", t.ID); err != nil {
			return nil, err
		}
		if ws[trial%2], err = startWorker(ctx, victim.pm, victim.name); err != nil {
			return nil, err
		}
	}
	return res, nil
}

// configSet sets each key of kv in p's config.json.
func configSet(ctx context.Context, p *PM, kv [][]string) error {
	for _, x := range kv {
		if _, _, err := p.Run(ctx, "", "config", "set", x[0], x[1]); err != nil {
			return err
		}
	}
	return nil
}

// startWorker starts pm worker NAME in p's directory and returns once it
// logged that it started (registered, following the bus and the workers).
func startWorker(ctx context.Context, p *PM, name string) (*failoverWorker, error) {
	cmd := p.Command(ctx, "", "worker", "--name", name, "--capacity", "4")
	// A pipe of the harness's own: the worker's hosts may hold its write
	// end after the worker is killed, and its reaping must not wait for them.
	pr, pw, err := os.Pipe()
	if err != nil {
		return nil, err
	}
	cmd.Stderr = pw
	err = cmd.Start()
	pw.Close()
	if err != nil {
		pr.Close()
		return nil, err
	}
	w := &failoverWorker{name: name, pm: p, cmd: cmd, done: make(chan struct{})}
	go func() { _ = cmd.Wait(); close(w.done) }()
	started := make(chan error, 1)
	go func() {
		defer pr.Close()
		sc := bufio.NewScanner(pr)
		var said strings.Builder // what it said before it started, for an error
		for sc.Scan() {
			if strings.Contains(sc.Text(), "worker started") {
				started <- nil
				_, _ = io.Copy(io.Discard, pr)
				return
			}
			said.WriteString(sc.Text() + "\n")
		}
		started <- fmt.Errorf("pm worker %s ended before it started: %s", name, strings.TrimSpace(said.String()))
	}()
	select {
	case err := <-started:
		if err == nil {
			return w, nil
		}
		w.stop()
		return nil, err
	case <-time.After(CmdTimeout):
		w.stop()
		return nil, fmt.Errorf("pm worker %s did not start within %s", name, CmdTimeout)
	}
}

// stop ends the worker as a person would (SIGINT), bounded.
func (w *failoverWorker) stop() {
	if w == nil {
		return
	}
	select {
	case <-w.done:
		return
	default:
	}
	_ = w.cmd.Process.Signal(os.Interrupt)
	select {
	case <-w.done:
	case <-time.After(CmdTimeout):
		_ = w.cmd.Process.Kill()
		<-w.done
	}
}

// marker is one line an agent wrote: it runs, on worker where.
type marker struct {
	agent, where string
	at           time.Time
}

// markers is the agents' pipe being read: C carries each line agents
// write as a marker until the reading ends, then is closed; err says why
// it ended (set before C is closed, so read it once C is).
type markers struct {
	C   chan marker
	err error
}

// readMarkers reads f's lines as markers on a channel of size lines until
// ctx ends (or the pipe does). It never blocks past ctx: a read waiting on
// the pipe is ended by a deadline set when ctx ends, and a send nobody
// takes is given up. A file that cannot take a deadline (not a pipe the
// runtime polls) is refused at once, before anything is read.
func readMarkers(ctx context.Context, f *os.File, size int) (*markers, error) {
	if err := f.SetReadDeadline(time.Time{}); err != nil {
		return nil, fmt.Errorf("failover: the agents' pipe %s cannot be bounded: %w", f.Name(), err)
	}
	m := &markers{C: make(chan marker, size)}
	go func() {
		defer close(m.C)
		m.err = m.read(ctx, f)
	}()
	return m, nil
}

// read is readMarkers' loop: why it stopped.
func (m *markers) read(ctx context.Context, f *os.File) error {
	stop := context.AfterFunc(ctx, func() { _ = f.SetReadDeadline(time.Now()) })
	defer stop()
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		agent, where, _ := strings.Cut(sc.Text(), " ")
		select {
		case m.C <- marker{agent: agent, where: where, at: time.Now()}:
		case <-ctx.Done():
			return fmt.Errorf("failover: run over with markers unread: %w", ctx.Err())
		}
	}
	if ctx.Err() != nil {
		return fmt.Errorf("failover: run over: %w", ctx.Err())
	}
	if sc.Err() != nil {
		return fmt.Errorf("failover: the agents' pipe: %w", sc.Err())
	}
	return errors.New("failover: the agents' pipe ended (every writer closed it)")
}

// awaitMarker waits for agent's marker from worker where (others are
// passed over), bounded by CmdTimeout.
func awaitMarker(marks *markers, agent, where string) (marker, error) {
	timer := time.NewTimer(CmdTimeout)
	defer timer.Stop()
	for {
		select {
		case m, ok := <-marks.C:
			if !ok {
				return marker{}, fmt.Errorf("no marker of %s on %s: %w", agent, where, marks.err)
			}
			if m.agent == agent && m.where == where {
				return m, nil
			}
		case <-timer.C:
			return marker{}, fmt.Errorf("agent %s did not run on %s within %s", agent, where, CmdTimeout)
		}
	}
}

// shQuote quotes s for sh.
func shQuote(s string) string { return "'" + strings.ReplaceAll(s, "'", `'\''`) + "'" }

package bench

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/plasmodium/pm/internal/agent"
	"github.com/plasmodium/pm/internal/inbox"
	"github.com/plasmodium/pm/internal/lockedfile"
	"github.com/plasmodium/pm/internal/openaitest"
	"github.com/plasmodium/pm/internal/store"
	"github.com/plasmodium/pm/internal/supervisor"
	"github.com/plasmodium/pm/internal/watch"
)

// Residents is a state directory whose prompt objects run as resident
// `pm agent-run` processes against an in-process fake model that answers
// "hi" at once, so only pm's own cost is measured. Agents are started the way
// the CLI starts them, supervisor included. Close ends every process.
type Residents struct {
	Store    *store.Store
	Launcher *agent.Launcher
	srv      *openaitest.Server
}

// NewResidents runs `pm init` in dir, raises the agent budget to turns
// model turns and starts the fake model server.
func NewResidents(ctx context.Context, bin, dir string, turns int) (*Residents, error) {
	p, err := NewProject(ctx, bin, dir, turns) // rooms as long as the run: the MCP figure opens one of n+1
	if err != nil {
		return nil, err
	}
	cfg := p.Store.Config() // this process's copy, written back below
	cfg.Budgets.Agent.MaxTurns = max(cfg.Budgets.Agent.MaxTurns, turns)
	cfg.Budgets.Agent.MaxTokens = max(cfg.Budgets.Agent.MaxTokens, 1000*turns)
	path := p.Store.ConfigPath()
	if err := lockedfile.With(path, func() error { return lockedfile.WriteJSON(path, cfg) }); err != nil {
		return nil, err
	}
	srv := openaitest.New()
	srv.Handle(func(openaitest.Request) openaitest.Reply { return openaitest.Reply{Content: "hi"} })
	env := append(Env(dir), "OPENAI_BASE_URL="+srv.BaseURL(), "PM_MODEL=bench", "PM_HOME="+p.Home)
	l := &agent.Launcher{Store: p.Store, State: p.State, Exe: bin, Env: env}
	l.AfterStart = func() { _ = supervisor.Ensure(l) }
	return &Residents{Store: p.Store, Launcher: l, srv: srv}, nil
}

// Objects writes n bench prompt objects named prefix01.. and returns their names.
func (r *Residents) Objects(prefix string, n int) ([]string, error) {
	var names []string
	for i := 1; i <= n; i++ {
		name := fmt.Sprintf("%s%02d", prefix, i)
		text := fmt.Sprintf("---\nname: %s\ndescription: bench\ncapabilities: [think]\n---\n# %s\nYou are a bench object.\n",
			name, strings.ToUpper(name[:1])+name[1:])
		if err := os.WriteFile(filepath.Join(r.Store.Root, "prompts", name+".md"), []byte(text), 0o644); err != nil {
			return nil, err
		}
		names = append(names, name)
	}
	return names, nil
}

// Call sends "hello" from the human to prompt object `to`, waits for the
// reply and returns the round trip.
func (r *Residents) Call(ctx context.Context, to string) (time.Duration, error) {
	ctx, cancel := context.WithTimeout(ctx, 10*time.Second)
	defer cancel()
	start := time.Now()
	reply, err := inbox.Call(ctx, r.Store, r.Launcher, "human", to, "hello", nil)
	d := time.Since(start)
	if err != nil {
		return d, fmt.Errorf("call @%s: %w", to, err)
	}
	if reply != "hi" {
		return d, fmt.Errorf("call @%s: reply %q, want \"hi\"", to, reply)
	}
	return d, nil
}

// Close kills every agent, waits for the supervisor to leave (it exits once
// nothing is live), reaps the harness's own children and stops the server.
func (r *Residents) Close() error {
	defer r.srv.Close()
	var errs []error
	agents, err := r.Store.Agents()
	errs = append(errs, err)
	for _, a := range agents {
		errs = append(errs, r.Launcher.Kill(store.Actor{Name: "pmbench"}, a.Name))
	}
	for i := 0; i < 100 && supervisor.Running(r.Store); i++ {
		time.Sleep(50 * time.Millisecond)
	}
	if supervisor.Running(r.Store) {
		errs = append(errs, errors.New("the supervisor did not exit within 5s"))
	}
	for range 1000 { // hosts the harness started and were killed are its zombies
		if pid, err := syscall.Wait4(-1, nil, syscall.WNOHANG, nil); pid <= 0 || err != nil {
			break
		}
	}
	return errors.Join(errs...)
}

// RoundTrip calls the greeter n+1 times: the first call starts its process
// (cold), the others find it idle on its inbox.
func RoundTrip(ctx context.Context, bin, dir string, n int) (cold time.Duration, warm Durations, err error) {
	r, err := NewResidents(ctx, bin, dir, n+10)
	if err != nil {
		return 0, nil, err
	}
	defer func() { err = errors.Join(err, r.Close()) }()
	if cold, err = r.Call(ctx, "greeter"); err != nil {
		return 0, nil, err
	}
	for range n {
		d, err := r.Call(ctx, "greeter")
		if err != nil {
			return cold, warm, err
		}
		warm = append(warm, d)
	}
	return cold, warm, nil
}

// IdleResult holds the idle figures.
type IdleResult struct {
	CPU    float64 // all hosts together, percent of one CPU over the window
	RSSKiB []int   // VmRSS of each host
}

// Idle starts n resident objects (one call each), lets them idle and samples
// their CPU time over window and their resident memory.
func Idle(ctx context.Context, bin, dir string, n int, window time.Duration) (res *IdleResult, err error) {
	r, err := NewResidents(ctx, bin, dir, 0)
	if err != nil {
		return nil, err
	}
	defer func() { err = errors.Join(err, r.Close()) }()
	names, err := r.Objects("po", n)
	if err != nil {
		return nil, err
	}
	var pids []int
	for _, name := range names {
		if _, err := r.Call(ctx, name); err != nil {
			return nil, err
		}
		a, err := r.Store.Agent(name)
		if err != nil {
			return nil, err
		}
		pids = append(pids, a.Pid)
	}
	time.Sleep(500 * time.Millisecond) // let the last replies settle
	before, err := cpuTicks(pids)
	if err != nil {
		return nil, err
	}
	select {
	case <-ctx.Done():
		return nil, ctx.Err()
	case <-time.After(window):
	}
	after, err := cpuTicks(pids)
	if err != nil {
		return nil, err
	}
	res = &IdleResult{CPU: float64(after-before) / 100 / window.Seconds() * 100} // USER_HZ is 100 on Linux
	for _, pid := range pids {
		kib, err := rssKiB(pid)
		if err != nil {
			return nil, err
		}
		res.RSSKiB = append(res.RSSKiB, kib)
	}
	return res, nil
}

// cpuTicks sums utime+stime (fields 14 and 15 of /proc/PID/stat) of pids.
func cpuTicks(pids []int) (int, error) {
	total := 0
	for _, pid := range pids {
		data, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/stat")
		if err != nil {
			return 0, fmt.Errorf("agent process %d is gone: %w", pid, err)
		}
		i := strings.LastIndexByte(string(data), ')')
		f := strings.Fields(string(data[i+1:])) // f[0] is field 3
		if i < 0 || len(f) < 13 {
			return 0, fmt.Errorf("/proc/%d/stat: unexpected format", pid)
		}
		u, err1 := strconv.Atoi(f[11])
		s, err2 := strconv.Atoi(f[12])
		if err := errors.Join(err1, err2); err != nil {
			return 0, err
		}
		total += u + s
	}
	return total, nil
}

// rssKiB returns VmRSS of pid in KiB.
func rssKiB(pid int) (int, error) {
	data, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/status")
	if err != nil {
		return 0, err
	}
	for _, line := range strings.Split(string(data), "\n") {
		if v, ok := strings.CutPrefix(line, "VmRSS:"); ok {
			return strconv.Atoi(strings.TrimSuffix(strings.TrimSpace(v), " kB"))
		}
	}
	return 0, fmt.Errorf("/proc/%d/status: no VmRSS", pid)
}

// Respawn starts n resident objects and kills each host once with SIGKILL,
// timing until its agent.json names a new live process (the supervisor's
// restart). Fresh agents keep every kill a first crash (200 ms backoff).
func Respawn(ctx context.Context, bin, dir string, n int) (ds Durations, err error) {
	r, err := NewResidents(ctx, bin, dir, 0)
	if err != nil {
		return nil, err
	}
	defer func() { err = errors.Join(err, r.Close()) }()
	names, err := r.Objects("rs", n)
	if err != nil {
		return nil, err
	}
	for _, name := range names {
		if _, err := r.Call(ctx, name); err != nil {
			return nil, err
		}
	}
	for i := 0; i < 100 && !supervisor.Running(r.Store); i++ {
		time.Sleep(50 * time.Millisecond)
	}
	if !supervisor.Running(r.Store) {
		return nil, errors.New("no supervisor running after 5s")
	}
	time.Sleep(200 * time.Millisecond) // let the supervisor watch every host
	for _, name := range names {
		d, err := r.killAndWait(ctx, name)
		if err != nil {
			return ds, err
		}
		ds = append(ds, d)
	}
	return ds, nil
}

func (r *Residents) killAndWait(ctx context.Context, name string) (time.Duration, error) {
	old, err := r.Store.Agent(name)
	if err != nil {
		return 0, err
	}
	if !agent.Running(old) {
		return 0, fmt.Errorf("@%s is not running before the kill", name)
	}
	ctx, cancel := context.WithTimeout(ctx, 10*time.Second)
	defer cancel()
	start := time.Now()
	if err := agent.DefaultDriver(r.Store).Signal(old.Handle, syscall.SIGKILL); err != nil {
		return 0, err
	}
	err = watch.Until(ctx, func() []string { return []string{r.Store.AgentDir(name)} }, func() (bool, error) {
		a, err := r.Store.Agent(name)
		return err == nil && a.Pid != old.Pid && agent.Running(a), nil
	})
	d := time.Since(start)
	_, _ = syscall.Wait4(old.Pid, nil, 0, nil) // the first host was the harness's child
	if err != nil {
		return d, fmt.Errorf("@%s not respawned: %w", name, err)
	}
	return d, nil
}

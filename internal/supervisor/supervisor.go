package supervisor

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"os/exec"
	"reflect"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/plasmodium/pm/internal/agent"
	"github.com/plasmodium/pm/internal/broker"
	"github.com/plasmodium/pm/internal/bus"
	"github.com/plasmodium/pm/internal/config"
	"github.com/plasmodium/pm/internal/crashpoint"
	"github.com/plasmodium/pm/internal/driver"
	"github.com/plasmodium/pm/internal/phase"
	"github.com/plasmodium/pm/internal/state"
	"github.com/plasmodium/pm/internal/store"
	"github.com/plasmodium/pm/internal/task"
	"github.com/plasmodium/pm/internal/watch"
)

// Policy is how the supervisor retries.
type Policy struct {
	CrashLimit  int           // crashes within CrashWindow that stop retrying
	CrashWindow time.Duration //
	BaseBackoff time.Duration // first retry delay, doubled per recent crash
	MaxBackoff  time.Duration
}

// DefaultPolicy: 5 crashes in 10 minutes stops retrying.
var DefaultPolicy = Policy{CrashLimit: 5, CrashWindow: 10 * time.Minute, BaseBackoff: 200 * time.Millisecond, MaxBackoff: 30 * time.Second}

// DefaultPollEvery: a supervisor that cannot watch the bus reads it once a
// second (a bounded fallback; respawns then wait up to that long).
const DefaultPollEvery = time.Second

// Supervisor keeps wanted agents running: one per state directory.
type Supervisor struct {
	Store *store.Store
	// State is the store's records (internal/state/stateopen opened them
	// with it, as the launcher's): every agent, task and phase record the
	// supervisor reads or writes goes through it.
	State    state.State
	Launcher *agent.Launcher
	Log      *slog.Logger
	Policy   Policy
	// RaiseHuman files a request for the human when an agent is given up on.
	RaiseHuman func(agentName, text string) error
	// Driver watches and stops the hosts; nil means the Launcher's (the
	// process driver unless the Launcher names another).
	Driver driver.Driver
	// Watch is how it waits for file events (nil: watch.Until); tests
	// inject the kernel's refusal when inotify is used up.
	Watch watch.UntilFunc
	// WatchRecords is how it watches the agent records (nil:
	// Store.WatchAgentRecords); tests inject a failure.
	WatchRecords func(ctx context.Context, changed func(name string)) error
	// PollEvery is how often it reads the bus when it cannot watch it
	// (inotify used up); 0 means DefaultPollEvery.
	PollEvery time.Duration
	// Worker, on a hub project, makes it the supervisor of worker Worker
	// (pm worker): it keeps only the agents placed there, starts them
	// when they are placed there, and stays while the worker runs
	// (worker.go). "" keeps the agents placed on no worker.
	Worker string

	drv      driver.Driver
	ctx      context.Context // Run's: ends the exit watchers with it
	mu       sync.Mutex
	pending  map[string]*time.Timer   // respawns scheduled
	watching map[string]driver.Handle // agent name -> run whose exit we wait for
	stopping map[string]driver.Handle // unwanted runs being stopped
	stopAt   map[string]time.Time     // when an unwanted run is due to be stopped
	swept    map[driver.Handle]bool   // dead runs whose leftovers were ended
	known    map[string]bool          // agents live at the last reconcile (scope.go)
	dirty    map[string]bool          // agents named by events since
	rescan   bool                     // read every record next time
	wake     chan struct{}
	info     *store.SupervisorInfo // what supervisor.json says (report)
	polling  string                // why it polls the bus ("" while it watches)
	blind    string                // what it cannot watch, and why ("" : nothing)
	settled  bool                  // startUnstarted ran Settle before this way out
	spare    spareMaker            // the spare checkout ahead of the next worktree (spare.go)
	claiming map[string]bool       // a worker's places held by starts ("start NAME") and claims ("NAME") in flight (worker.go)
	claims   map[string]bool       // a worker's claims in flight, a place held or not (worker.go)
	capacity int                   // a worker's places (0: no bound, a plain supervisor)
	waiting  map[string]bool       // placed on this worker, waiting for a free place
	// claimsRun counts the claim goroutines, starting the startPlaced
	// calls; a claim adds to starting, so the way out (wayOut) waits for
	// claimsRun before starting: an Add never races that Wait.
	claimsRun sync.WaitGroup
	starting  sync.WaitGroup
	cancel    context.CancelFunc // ends ctx (wayOut)

	// beforeRespawn, when set (tests), runs between respawn's look at the
	// dead host and its locked re-check, to force a racing start there.
	beforeRespawn func(name string)
}

// records are the project's records (State).
func (sv *Supervisor) records() state.State { return sv.State }

// Running reports whether a live supervisor holds the lock of s (a lock
// still held by a supervisor being killed is not one: store.SupervisorLive).
func Running(s *store.Store) bool { return s.SupervisorLive() }

// lockPatience bounds how long a starting supervisor waits for the lock of
// one that is dying (kill -9 releases it only once every thread is gone).
const lockPatience = 5 * time.Second

// Ensure starts `pm supervise` in the background unless one is running.
// Two commands racing may both start one; the loser exits at once because
// only one can hold the lock. It first marks a supervisor wanted, so one
// that dies before it is done is revived (Revive).
func Ensure(l *agent.Launcher) error {
	if err := l.Store.MarkSupervisorWanted(); err != nil {
		return err
	}
	if Running(l.Store) {
		return nil
	}
	return start(l)
}

// Revive starts a supervisor when one is wanted (agents were started and no
// supervisor has yet found nothing live) but none holds the lock: it died
// (kill -9, OOM) while agents it should keep alive may be dead. Every pm
// command calls it; it costs a stat, and a lock probe only while the marker
// is there.
func Revive(l *agent.Launcher) error {
	if !l.Store.SupervisorDown() {
		return nil
	}
	return start(l)
}

// start runs `pm supervise` detached, its output to logs/supervisor.log.
func start(l *agent.Launcher) error {
	logf, err := l.Store.OpenLog("supervisor")
	if err != nil {
		return err
	}
	defer logf.Close()
	driver.NoInherit() // the caller's descriptors stay with the caller
	cmd := exec.Command(l.Exe, "supervise")
	cmd.Dir = l.Store.ProjectDir()
	cmd.Env = append(filterEnv(l.Env), "PM_HOME="+l.Store.Root)
	cmd.Stdout, cmd.Stderr = logf, logf
	cmd.SysProcAttr = &syscall.SysProcAttr{Setsid: true}
	if err := cmd.Start(); err != nil {
		return fmt.Errorf("start supervisor: %w", err)
	}
	go func() { _ = cmd.Wait() }() // reaped if this process lives long enough to see it exit
	return nil
}

func filterEnv(env []string) []string {
	out := env[:0:0]
	for _, kv := range env {
		if len(kv) >= 8 && (kv[:8] == "PM_HOME=" || kv[:8] == "PM_AGENT" || kv[:8] == "PM_TASK=" || kv[:8] == "PM_ROLE=" || kv[:8] == "PM_PHASE" || strings.HasPrefix(kv, driver.RunEnv+"=") || strings.HasPrefix(kv, driver.NprocEnv+"=") || strings.HasPrefix(kv, driver.CommandEnv+"=")) {
			continue
		}
		out = append(out, kv)
	}
	return out
}

// Run holds the supervisor lock and reconciles until nothing is live or ctx
// ends. If another live supervisor holds the lock it returns at once; a lock
// held by one that is dying is waited for (LockSupervisor).
func (sv *Supervisor) Run(ctx context.Context) error {
	unlock, ok, err := sv.Store.LockSupervisor(lockPatience)
	if err != nil {
		return err
	}
	if !ok {
		sv.Log.Info("another supervisor is running; exiting")
		return nil
	}
	defer func() { _ = unlock() }()
	if err := sv.Store.MarkSupervisorWanted(); err != nil {
		return err
	}
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	sv.init(ctx)
	defer sv.starting.Wait() // its starts are added by the loop alone (reconcile)
	// Every agent record written from now on names its agent for the next
	// reconcile: a start killed between its record and its event is read
	// at once, busy or not (the first reconcile reads every record).
	watchRecords := sv.WatchRecords
	if watchRecords == nil {
		watchRecords = sv.Store.WatchAgentRecords
	}
	if err := watchRecords(ctx, sv.recordChanged); err != nil {
		sv.Log.Warn("cannot watch agent records: a start killed before its event is found only when nothing else is live", "err", err)
		sv.mu.Lock()
		sv.blind = fmt.Sprintf("not watching the agent records (%v): an agent start killed before its event is found only when nothing else is live", err)
		if errors.Is(err, watch.ErrLimit) {
			sv.blind += "; " + watch.LimitTry
		}
		sv.mu.Unlock()
		sv.report(func(*store.SupervisorInfo) {})
	}
	if sv.Launcher != nil {
		// Finish what a command killed between its steps left undone
		// (docs/design.md, "Crash safety").
		if _, err := task.Settle(sv.Store, sv.Launcher, store.Actor{Name: "supervisor"}); err != nil {
			sv.Log.Error("settle", "err", err)
		}
	}
	sv.prepareSpare()
	defer sv.spare.wg.Wait() // a spare half-made is swept, but not wasted
	// Subscribe from the bus's end before the first reconcile, so a change
	// between that reconcile and the wait is still announced.
	_, end, err := sv.Store.Bus().Tail(0)
	if err != nil {
		return err
	}
	subCtx, stop := context.WithCancel(ctx)
	// The follower asks for spares (on agent.started): it ends before the
	// deferred Wait for them above, or its Add races that Wait.
	followed := make(chan struct{})
	defer func() { stop(); <-followed }()
	subErr := make(chan error, 1)
	go func() { defer close(followed); subErr <- sv.follow(subCtx, end) }()
	sv.Log.Info("supervisor started", "pid", os.Getpid())
	for {
		live, err := sv.reconcile()
		if err != nil {
			sv.Log.Error("reconcile", "err", err)
		}
		if !live {
			if sv.startUnstarted() {
				continue // it started what a killed command left unstarted
			}
			sv.tidyWorktrees()
			left, err := sv.leave(unlock)
			if left || err != nil {
				return err
			}
			// Something is live that the reconcile did not read (a start
			// killed before its event): read every record next time.
			sv.mu.Lock()
			sv.rescan, sv.info = true, nil // the lock rewrote supervisor.json: report afresh
			sv.mu.Unlock()
			var ok bool
			if unlock, ok, err = sv.Store.LockSupervisor(lockPatience); err != nil || !ok {
				return err // another supervisor took over (the marker stays for it)
			}
			continue
		}
		select {
		case <-ctx.Done():
			return nil
		case <-sv.wake:
		case err := <-subErr:
			if err == nil {
				return nil // ctx ended the subscription first
			}
			// The bus cannot be followed (inotify used up is not this:
			// that falls back to polling, waitOrPoll): exit rather than
			// run deaf, loudly; the marker stays, so the next pm command
			// or waiter starts a supervisor again.
			sv.Log.Error("cannot follow the bus; exiting", "err", err)
			return fmt.Errorf("follow the bus: %w", err)
		}
	}
}

// report updates what supervisor.json says about this supervisor (written
// only when it changes).
func (sv *Supervisor) report(change func(in *store.SupervisorInfo)) {
	sv.mu.Lock()
	defer sv.mu.Unlock()
	if sv.info == nil {
		if sv.info = sv.Store.SupervisorInfo(); sv.info == nil || sv.info.Pid != os.Getpid() {
			sv.info = nil
			return // not ours (a test's reconcile without Run)
		}
	}
	next := *sv.info
	change(&next)
	next.Polling, next.Blind = sv.polling, sv.blind
	if reflect.DeepEqual(&next, sv.info) {
		return
	}
	if err := sv.Store.SetSupervisorInfo(&next); err != nil {
		sv.Log.Error("write supervisor.json", "err", err)
		return
	}
	*sv.info = next
}

// init readies the maps, the wake-up channel and the driver.
func (sv *Supervisor) init(ctx context.Context) {
	sv.mu.Lock() // what is read under mu is made under it
	defer sv.mu.Unlock()
	sv.pending, sv.watching = map[string]*time.Timer{}, map[string]driver.Handle{}
	sv.stopping, sv.stopAt = map[string]driver.Handle{}, map[string]time.Time{}
	sv.swept = map[driver.Handle]bool{}
	sv.claiming, sv.waiting, sv.claims = map[string]bool{}, map[string]bool{}, map[string]bool{}
	sv.known, sv.dirty, sv.rescan = map[string]bool{}, map[string]bool{}, true
	sv.wake = make(chan struct{}, 1)
	sv.info, sv.polling, sv.blind = nil, "", ""
	sv.ctx, sv.cancel = context.WithCancel(ctx)
	sv.drv = sv.Driver
	if sv.drv == nil && sv.Launcher != nil {
		sv.drv = sv.Launcher.Driver
	}
	if sv.drv == nil {
		sv.drv = agent.DefaultDriver(sv.Store)
	}
}

// follow pokes the loop on every bus event that can change which agents are
// wanted or running. It returns when ctx ends (nil) or the bus fails.
func (sv *Supervisor) follow(ctx context.Context, from bus.Cursor) error {
	b := sv.Store.Bus()
	if f, ok := b.(*bus.File); ok {
		f.Wait = sv.waitOrPoll
	}
	for d, err := range b.Subscribe(ctx, from) {
		if err != nil {
			if ctx.Err() != nil {
				return nil
			}
			return err
		}
		if wakes[d.Event.Kind] {
			sv.note(d.Event)
			sv.poke()
		}
		if d.Event.Kind == bus.EvAgentStarted {
			// Its task's worktree is made (task.created comes before it):
			// it may have taken the spare.
			sv.prepareSpare()
		}
	}
	return nil
}

// waitOrPoll waits for file events, or, when the inotify limits are used
// up, reads every PollEvery instead of leaving (a supervisor that left would
// strand every agent until the next command): loudly, in its log and in
// supervisor.json, which pm status shows.
func (sv *Supervisor) waitOrPoll(ctx context.Context, dirs func() []string, check func() (bool, error)) error {
	every := sv.PollEvery
	if every <= 0 {
		every = DefaultPollEvery
	}
	return watch.UntilOrPollWith(ctx, sv.Watch, dirs, check, every, func(err error) {
		why := ""
		if err != nil {
			why = fmt.Sprintf("polling the bus every %s: %v; %s", every, err, watch.LimitTry)
		}
		sv.mu.Lock()
		was := sv.polling
		sv.polling = why
		sv.mu.Unlock()
		switch {
		case err != nil:
			sv.Log.Warn("cannot watch the bus; polling", "every", every, "err", err)
		case was != "":
			sv.Log.Info("watching the bus again")
		}
		sv.report(func(*store.SupervisorInfo) {})
	})
}

// wakes are the events after which the wanted agents, or the running ones,
// may differ: agents started, left or were ended; tasks and phases opened or
// ended; the state directory was reset. (A host killed -9 announces nothing:
// its pidfd wakes the loop, see watchExit.)
var wakes = map[bus.Kind]bool{
	bus.EvReset:          true,
	bus.EvTaskCreated:    true,
	bus.EvTaskUnblocked:  true,
	bus.EvTaskDone:       true,
	bus.EvTaskKilled:     true,
	bus.EvTaskRestarted:  true,
	bus.EvTaskRejected:   true, // its owner, started again where it is kept (agent.RejectionUnseen)
	bus.EvPhaseOpened:    true,
	bus.EvPhaseClosed:    true,
	bus.EvAgentCreated:   true,
	bus.EvAgentStarted:   true,
	bus.EvAgentExited:    true,
	bus.EvAgentKilled:    true,
	bus.EvAgentRespawned: true,
	bus.EvAgentFailed:    true,
}

// recordChanged notes that name's record was written ("" : records may
// have been missed, read them all) and wakes the loop.
func (sv *Supervisor) recordChanged(name string) {
	sv.mu.Lock()
	if name == "" {
		sv.rescan = true
	} else {
		sv.dirty[name] = true
	}
	sv.mu.Unlock()
	sv.poke()
}

func (sv *Supervisor) poke() {
	select {
	case sv.wake <- struct{}{}:
	default:
	}
}

// reconcile compares wanted agents with running ones and acts on the
// difference both ways: it respawns what is wanted and crashed, and stops
// what runs and is not wanted (stop.go). It reports whether anything is
// still live.
func (sv *Supervisor) reconcile() (bool, error) {
	agents, bad, err := sv.read(sv.toRead())
	if err != nil {
		return true, err
	}
	// A record it cannot read may be a live agent's: stay on for it, look
	// at it again next time, and say so (pm status, pm doctor).
	live := len(bad) > 0
	for _, name := range bad {
		sv.keep(name, true)
	}
	sv.report(func(in *store.SupervisorInfo) { in.Unreadable = bad })
	// Every host probed first, outside sv.mu, and the dead ones forgotten
	// before any place is reserved below: an exit this reconcile sees frees
	// its place for the agents it starts, whatever order it reads them in.
	alive := make([]bool, len(agents))
	for i, a := range agents {
		if alive[i] = sv.drv.Alive(a.Handle); !alive[i] {
			sv.unwatch(a.Name, a.Handle)
		}
	}
	for i, a := range agents {
		alive := alive[i]
		t := sv.task(a) // once: what decides on a below all reads this
		want := sv.wantedIn(a, t)
		if want || alive {
			live = true
		}
		sv.keep(a.Name, want || alive)
		if alive && a.Status == store.AgentRunning {
			sv.watchExit(a.Name, a.Handle)
		}
		toStart := !alive && (sv.placedToStart(a, t) || sv.rejectedToStart(a, t))
		if !toStart {
			sv.unwait(a.Name)
		}
		switch {
		case toStart:
			live = true
			sv.keep(a.Name, true)
			sv.startWhenRoom(a.Name) // placed here by another machine, or rejected since it ran
		case alive && !want:
			sv.stopUnwanted(a)
		case want && sv.crashed(a, alive):
			sv.scheduleRespawn(a)
		case !alive && a.Status == store.AgentRunning:
			// A host that died (kill -9) while nobody watched it: what it
			// started may run on. Not wanted again, its record says it ended.
			go sv.sweep(a.Name, a.Handle)
			if !want && a.Runtime != config.RuntimeNone {
				sv.recordGone(a)
			}
		}
	}
	sv.mu.Lock()
	if len(sv.pending) > 0 || len(sv.stopping) > 0 {
		live = true
	}
	sv.mu.Unlock()
	return live, nil
}

// recordGone records the end of a run that died while its agent was not
// wanted (an owner killed -9 after pm done, a role agent after its room
// closed): nothing respawns it, and a record left "running" would say it
// still works. Only the run it saw is touched.
func (sv *Supervisor) recordGone(a *store.Agent) {
	now := sv.Store.Now().UTC()
	_, err := sv.records().UpdateAgent(a.Name, func(r *store.Agent) error {
		if r.Handle != a.Handle || r.Status != store.AgentRunning {
			return store.ErrUnchanged
		}
		r.Status, r.EndedAt, r.Reason = store.AgentExited, &now, "its host ended after it was no longer wanted (no exit status recorded)"
		return nil
	})
	if err != nil {
		sv.Log.Error("record a gone host", "agent", a.Name, "err", err)
	}
}

// leave is the way out once a reconcile found nothing live. An agent
// started after that reconcile saw the lock held and so started no
// supervisor: the lock is let go first, then, once every start in flight
// has recorded what it started (the marker's lock), one last look at every
// record decides. Nothing live: the marker goes and the supervisor leaves
// (a start after that marks again and, finding the lock free, starts one).
// Something live: the marker stays and the caller takes the lock again.
// Killed anywhere here, the marker is there whenever something is live.
func (sv *Supervisor) leave(unlock func() error) (left bool, err error) {
	_ = unlock()
	crashpoint.Hit("supervisor.released")
	left, err = sv.Store.ClearSupervisorWantedIf(func() bool { return !sv.anyLive(!sv.settled) })
	if err != nil {
		sv.Log.Error("clear the supervisor marker", "err", err)
		return false, err
	}
	if left {
		sv.Log.Info("nothing live; supervisor exiting")
	}
	return left, nil
}

// tidyWorktrees removes, on the way out, the worktrees no task wants (a
// pm done killed after its mark, before it removed its task's worktree):
// in a supervised project no later command may come to do it.
func (sv *Supervisor) tidyWorktrees() {
	if sv.Launcher == nil {
		return
	}
	if err := task.RepairWorktrees(sv.Store, sv.records()); err != nil {
		sv.Log.Error("worktrees", "err", err)
	}
}

// startUnstarted runs Settle when an owner of an active task was never
// started (a pm task killed between its record and the start, or still
// on its way there): the supervisor leaves no such work behind. It reports
// whether Settle started any; one that could not (the error is logged by
// Settle's starts) is not counted as live work by the last look, so a start
// that fails for good does not keep the supervisor spinning.
func (sv *Supervisor) startUnstarted() bool {
	sv.settled = false
	if sv.Launcher == nil {
		return false
	}
	before := sv.unstarted()
	if len(before) == 0 {
		return false
	}
	if _, err := task.Settle(sv.Store, sv.Launcher, store.Actor{Name: "supervisor"}); err != nil {
		sv.Log.Error("settle", "err", err)
	}
	sv.settled = true
	started := false
	for _, name := range before {
		if a, err := sv.records().Agent(name); err == nil && a.Status != store.AgentPending {
			started = true
		}
	}
	if started {
		sv.mu.Lock()
		sv.rescan = true
		sv.mu.Unlock()
	}
	return started
}

// unstarted lists the owners of active tasks never started
// (agent.Unstarted).
func (sv *Supervisor) unstarted() []string {
	agents, _, err := sv.records().AgentsChecked()
	if err != nil {
		return nil
	}
	var out []string
	for _, a := range sv.mine(agents) {
		if a.Status != store.AgentPending || a.Role != "" || a.TaskID == "" {
			continue
		}
		if t, err := sv.records().Task(a.TaskID); err == nil && agent.Unstarted(a, t) {
			out = append(out, a.Name)
		}
	}
	return out
}

// anyLive reports, without acting, whether any agent runs or is wanted, or
// (with unstarted) is an owner of an active task never started.
func (sv *Supervisor) anyLive(unstarted bool) bool {
	agents, bad, err := sv.records().AgentsChecked()
	if err != nil || len(bad) > 0 {
		return true
	}
	for _, a := range sv.mine(agents) {
		t := sv.task(a)
		if sv.wantedIn(a, t) || sv.drv.Alive(a.Handle) || sv.rejectedToStart(a, t) {
			return true
		}
		if unstarted && a.Status == store.AgentPending && a.Role == "" && t != nil && agent.Unstarted(a, t) {
			return true
		}
	}
	return false
}

// task is a's task as read now (nil: a has none, or it cannot be read).
// A look at an agent reads it once and passes it to each question it asks
// of it (wantedIn, placedToStart, rejectedToStart): on a hub each read is
// a request.
func (sv *Supervisor) task(a *store.Agent) *store.Task {
	if a.TaskID == "" {
		return nil
	}
	t, err := sv.records().Task(a.TaskID)
	if err != nil {
		return nil
	}
	return t
}

// wanted: the agent's task (and, for a role agent, its phase) is still live
// and nobody ended it on purpose.
func (sv *Supervisor) wanted(a *store.Agent) bool { return sv.wantedIn(a, sv.task(a)) }

// wantedIn is wanted with a's task as read (sv.task).
func (sv *Supervisor) wantedIn(a *store.Agent, t *store.Task) bool {
	return agent.Wanted(a, t, func() (*store.Phase, error) { return sv.records().Phase(a.TaskID, a.PhaseID) })
}

// rejectedToStart: a is an owner kept here whose task (t, as read:
// sv.task) was rejected since it last started, and which ended by itself
// (agent.RejectionUnseen): a pm reject that came while it was finishing,
// or from another machine.
func (sv *Supervisor) rejectedToStart(a *store.Agent, t *store.Task) bool {
	if !sv.here(a) || a.Role != "" || a.TaskID == "" || a.Status != store.AgentExited {
		return false
	}
	return agent.RejectionUnseen(a, t)
}

// crashed: the process is gone and did not leave on its own. A host killed
// with -9 leaves its record "running"; a non-zero exit is a crash; exit 0 is
// an agent that left by itself and is not restarted.
func (sv *Supervisor) crashed(a *store.Agent, alive bool) bool {
	if alive {
		return false
	}
	switch a.Status {
	case store.AgentRunning:
		return true
	case store.AgentExited:
		return a.ExitCode != nil && *a.ExitCode != 0
	}
	return false
}

func (sv *Supervisor) scheduleRespawn(a *store.Agent) {
	sv.mu.Lock()
	if _, ok := sv.pending[a.Name]; ok {
		sv.mu.Unlock()
		return
	}
	sv.pending[a.Name] = nil // taken: a reconcile meanwhile does not count it again
	sv.mu.Unlock()
	n, err := sv.countCrash(a)
	sv.mu.Lock()
	defer sv.mu.Unlock()
	if err != nil {
		delete(sv.pending, a.Name)
		if !errors.Is(err, errNotWanted) { // errNotWanted: it runs again already
			sv.Log.Error("count the crash", "agent", a.Name, "err", err)
		}
		return
	}
	if n >= sv.Policy.CrashLimit {
		// Pending until it is marked failed, so a reconcile in between
		// does not give up twice.
		name := a.Name
		go func() {
			sv.giveUp(name, n)
			sv.mu.Lock()
			delete(sv.pending, name)
			sv.mu.Unlock()
			sv.poke()
		}()
		return
	}
	delay := sv.Policy.BaseBackoff << (n - 1)
	if delay > sv.Policy.MaxBackoff || delay <= 0 {
		delay = sv.Policy.MaxBackoff
	}
	sv.Log.Info("agent down; respawning", "agent", a.Name, "in", delay, "crashes", n)
	name := a.Name
	sv.pending[name] = time.AfterFunc(delay, func() {
		sv.respawn(name)
		sv.mu.Lock()
		delete(sv.pending, name)
		sv.mu.Unlock()
		sv.poke()
	})
}

// countCrash records a's dead run as a crash in its record (once per run:
// a supervisor killed after counting it and before the respawn does not make
// the next one count it again) and returns the crashes within the window.
// On record, not in memory, so that killing the supervisor between crashes
// does not reset the count (the give-up would never come).
func (sv *Supervisor) countCrash(a *store.Agent) (int, error) {
	now := sv.Store.Now().UTC()
	n := 0
	_, err := sv.records().UpdateAgent(a.Name, func(r *store.Agent) error {
		if r.Handle != a.Handle {
			return errNotWanted // another run since: not the crash we saw
		}
		var had []store.Crash
		if r.Crashes != nil {
			had = r.Crashes.Runs
		}
		recent := make([]store.Crash, 0, len(had)+1)
		for _, c := range had {
			if now.Sub(c.At) < sv.Policy.CrashWindow {
				recent = append(recent, c)
			}
		}
		seen := len(recent) > 0 && recent[len(recent)-1].Run == a.Handle
		if !seen {
			recent = append(recent, store.Crash{At: now, Run: a.Handle})
		}
		n = len(recent)
		if seen && len(recent) == len(had) {
			return store.ErrUnchanged
		}
		r.Crashes = &store.CrashLog{Runs: recent}
		return nil
	})
	return n, err
}

var errNotWanted = errors.New("agent no longer wanted")

func (sv *Supervisor) respawn(name string) {
	s := sv.Store
	a, err := sv.records().Agent(name)
	if err != nil || !sv.wanted(a) || sv.drv.Alive(a.Handle) {
		return
	}
	// The host died; whatever it started may linger (its group, its
	// cgroup). Its leader is gone, so the driver forces the rest at once.
	sv.sweep(name, a.Handle)
	// On a hub the dead host's lease outlives it (killed -9, it released
	// nothing) until it expires: a host started before that would be
	// refused and counted as another crash. Wait for it, woken by the
	// lease's expiry.
	if leases, ok := state.AgentLeasesOf(sv.State); ok {
		if err := leases.WaitAgentFree(sv.ctx, name); err != nil {
			return
		}
	}
	if sv.beforeRespawn != nil {
		sv.beforeRespawn(name)
	}
	// Restart re-checks under the agent's lock, where starters serialise:
	// a live host recorded meanwhile (pm send started it) or an end on
	// purpose (pm kill) means nothing is spawned.
	r, err := sv.Launcher.Restart(name, func(r *store.Agent) error {
		if !sv.wanted(r) {
			return errNotWanted
		}
		return nil
	})
	switch {
	case errors.Is(err, errNotWanted) || errors.Is(err, agent.ErrAlreadyRunning):
		return
	case err != nil:
		sv.Log.Error("respawn", "agent", name, "err", err)
		return
	}
	// Watched before its respawn's place (pending) is let go: it is never
	// counted free in between.
	if sv.here(r) && r.Status == store.AgentRunning {
		sv.watchExit(name, r.Handle)
	}
	s.Notify(bus.Event{Kind: bus.EvAgentRespawned, Actor: "supervisor", Agent: name, TaskID: r.TaskID, PhaseID: r.PhaseID,
		Data: bus.AgentRespawned{Restarts: r.Restarts}})
}

func (sv *Supervisor) giveUp(name string, crashes int) {
	s := sv.Store
	reason := fmt.Sprintf("crashed %d times within %s; not restarting", crashes, sv.Policy.CrashWindow)
	now := s.Now().UTC()
	a, err := sv.records().UpdateAgent(name, func(r *store.Agent) error {
		r.Status, r.Reason, r.EndedAt = store.AgentFailed, reason, &now
		return nil
	})
	if err != nil {
		sv.Log.Error("give up", "agent", name, "err", err)
		return
	}
	sv.Log.Warn("giving up on agent", "agent", name, "reason", reason)
	// Its last host is dead; what that host started may not be: end it
	// before the human is told.
	sv.sweep(name, a.Handle)
	s.Notify(bus.Event{Kind: bus.EvAgentFailed, Actor: "supervisor", Agent: name, TaskID: a.TaskID, PhaseID: a.PhaseID, Text: reason})
	if a.IsOwner() && a.TaskID != "" {
		// No role talks on in a room whose owner is gone for good.
		if err := phase.CloseActive(s, sv.records(), store.Actor{Name: "supervisor"}, a.TaskID, store.CloseOwnerFailed); err != nil {
			sv.Log.Error("close the given-up owner's room", "agent", name, "err", err)
		}
	}
	if sv.RaiseHuman != nil {
		text := fmt.Sprintf("Agent @%s (%s, task %s) %s. See pm logs %s; restart with pm kill %s --restart.", name, roleOf(a), a.TaskID, reason, name, a.TaskID)
		if a.IsOwner() {
			text = fmt.Sprintf("Agent @%s (owner, task %s) %s. See pm logs %s. Answer to resume it with your words (\"no\" leaves it stopped), or restart it with pm kill %s --restart.", name, a.TaskID, reason, name, a.TaskID)
		}
		if a.TaskID == "" {
			text = fmt.Sprintf("Prompt object @%s %s. See pm logs %s; sending it a message (pm send %s ...) starts it again.", name, reason, name, name)
		}
		if err := sv.RaiseHuman(name, text); err != nil {
			sv.Log.Error("raise human request", "err", err)
		}
	}
	sv.poke()
}

func roleOf(a *store.Agent) string {
	if a.Role == "" {
		return "owner"
	}
	return a.Role
}

// watchExit waits for the run to exit in the background (the driver's Wait:
// a pidfd for the process driver) and pokes the loop when it does, so a
// kill -9 is noticed at once without polling. One watcher per run; it ends
// with Run.
func (sv *Supervisor) watchExit(name string, h driver.Handle) {
	sv.mu.Lock()
	if sv.watching[name] == h {
		sv.mu.Unlock()
		return
	}
	sv.watching[name] = h
	sv.mu.Unlock()
	go func() {
		_, err := sv.drv.Wait(sv.ctx, h)
		if sv.ctx.Err() != nil {
			return
		}
		if err != nil && sv.drv.Alive(h) {
			// The watch failed, not the run (out of descriptors, say): it
			// keeps its place and its entry, so no reconcile watches it
			// again in a loop; the next probe of a reconcile sees its end.
			sv.Log.Warn("cannot watch an agent's exit; it still runs", "agent", name, "err", err)
			return
		}
		sv.unwatch(name, h)
		sv.sweep(name, h)
		sv.poke()
	}()
}

// unwatch forgets run h of name once its exit is seen: a worker counts
// its places from what it watches (placesLocked).
func (sv *Supervisor) unwatch(name string, h driver.Handle) {
	sv.mu.Lock()
	if sv.watching[name] == h {
		delete(sv.watching, name)
	}
	sv.mu.Unlock()
}

// sweepSockets removes the broker socket directories of hosts that are
// gone (broker.Sweep: each named by its host's pid and start time), which a
// host killed -9 leaves behind: here, where its death is seen, and not only
// at the next host's start (a given-up agent's never comes). Every time it
// is called, not once per run: it is a directory listing, and the once of
// sweep may be taken by a watcher still at work when a respawn asks.
func sweepSockets() {
	if dir, err := broker.RunDir(); err == nil {
		broker.Sweep(dir)
	}
}

// sweep ends, once per run, what a host that is gone left running: its
// cgroup and its marked processes (the driver's Stop of a dead host forces
// them at once). A host killed -9 ends nothing itself; this is where its
// death is noticed, whether it is respawned, given up on or not wanted.
func (sv *Supervisor) sweep(name string, h driver.Handle) {
	sweepSockets()
	sv.mu.Lock()
	done := sv.swept[h]
	sv.swept[h] = true
	sv.mu.Unlock()
	if done {
		return
	}
	if left, err := sv.drv.Stop(sv.ctx, h); err != nil {
		sv.Log.Error("end what a dead host left", "agent", name, "err", err)
	} else if left {
		sv.Log.Info("ended what a dead host left running", "agent", name, "pid", h.Pid)
	}
}

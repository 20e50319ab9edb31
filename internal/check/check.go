package check

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"sort"
	"strconv"
	"strings"

	"github.com/plasmodium/pm/internal/agent"
	"github.com/plasmodium/pm/internal/config"
	"github.com/plasmodium/pm/internal/driver"
	"github.com/plasmodium/pm/internal/state"
	"github.com/plasmodium/pm/internal/store"
	"github.com/plasmodium/pm/internal/task"
)

// Kind is what sort of wrong a finding is.
type Kind string

// The kinds of finding, in the order Run looks.
const (
	Unreadable    Kind = "unreadable"      // a record that cannot be read
	RoomAtLimit   Kind = "room-at-limit"   // an active room whose log holds its limit
	PendingRole   Kind = "pending-role"    // a role never started in an open room
	BlockedByDone Kind = "blocked-by-done" // a blocked task whose blockers are all done
	DeadRunning   Kind = "dead-running"    // recorded running, its host gone, nobody to notice
	NoSupervisor  Kind = "no-supervisor"   // live work (or the marker) and no live supervisor
	GitLock       Kind = "git-lock"        // .git/index.lock with no process holding it
	Orphan        Kind = "orphan"          // a process of a run whose agent is not running it
	Count         Kind = "count"           // a room's count mark disagrees with its log
	Index         Kind = "index"           // the task or phase index disagrees with the records
	Worktree      Kind = "worktree"        // a worktree no task wants, or a live task's missing
)

// Kinds lists every kind, for reports.
var Kinds = []Kind{Unreadable, RoomAtLimit, PendingRole, BlockedByDone, DeadRunning, NoSupervisor, GitLock, Orphan, Count, Index, Worktree}

// Finding is one thing wrong.
type Finding struct {
	Kind    Kind   `json:"kind"`
	Subject string `json:"subject"` // the task, phase, agent, pid or path
	Text    string `json:"text"`
	// Worker is, on a hub, the worker the agent of a dead-running or
	// no-supervisor finding is placed on: the one that would repair it
	// (pm doctor --fix starts this machine's supervisor only for the
	// others).
	Worker string `json:"worker,omitempty"`
}

func (f Finding) String() string { return fmt.Sprintf("%s %s: %s", f.Kind, f.Subject, f.Text) }

// Run checks the whole state of s and returns what is wrong, sorted by kind
// then subject; none is a clean state. On a hub it checks the records and
// this machine's checkout and processes, not what NotChecked lists.
func Run(s *store.Store, st state.State) ([]Finding, error) {
	c := &checker{s: s, st: st, drv: agent.DefaultDriver(s)}
	agents, bad, err := st.AgentsChecked()
	if err != nil {
		return nil, err
	}
	for _, name := range bad {
		c.add(Unreadable, name, "agents/%s/agent.json cannot be read: fix it by hand or remove the agent's directory", name)
	}
	tasks, err := st.Tasks()
	if err != nil {
		return nil, err
	}
	byID := map[string]*store.Task{}
	for _, t := range tasks {
		byID[t.ID] = t
	}
	if err := c.rooms(tasks, agents); err != nil {
		return nil, err
	}
	c.blockers(tasks, byID)
	hub := s.OnHub()
	if hub {
		if err := c.hubAgents(agents, byID); err != nil {
			return nil, err
		}
	} else {
		c.agents(agents, byID)
	}
	c.gitLock()
	if !hub {
		c.worktrees(tasks)
	}
	c.orphans(agents)
	if err := c.caches(); err != nil {
		return nil, err
	}
	sort.SliceStable(c.out, func(i, j int) bool {
		a, b := c.out[i], c.out[j]
		if a.Kind != b.Kind {
			return slices.Index(Kinds, a.Kind) < slices.Index(Kinds, b.Kind)
		}
		return a.Subject < b.Subject
	})
	return c.out, nil
}

// NotChecked says, one line each, what Run does not check for s's project
// and why: on a hub, what needs the machine an agent or a task lives on (a
// host's process, a task's worktree: records name them, but they may be
// on another machine, which this one cannot see), and the files' own caches
// (a hub's records have none). Nothing for a project of files.
func NotChecked(s *store.Store) []string {
	if !s.OnHub() {
		return nil
	}
	return []string{
		"the state directory's caches (rooms' count marks, the task and phase indexes): a hub's records have none",
		"supervisors of other machines: an agent placed on no worker is kept by the supervisor of any machine, and this one sees its own only",
		"task worktrees: a task's worktree is on the machine that made it",
	}
}

type checker struct {
	s   *store.Store
	st  state.State // s's records
	drv driver.Driver
	out []Finding
}

func (c *checker) add(k Kind, subject, format string, args ...any) {
	c.out = append(c.out, Finding{Kind: k, Subject: subject, Text: fmt.Sprintf(format, args...)})
}

// addPlaced is add about agent a, naming the worker it is placed on.
func (c *checker) addPlaced(a *store.Agent, k Kind, format string, args ...any) {
	c.add(k, a.Name, format, args...)
	c.out[len(c.out)-1].Worker = a.Worker
}

// rooms: every room of a live task is open only below its limit and has
// its roles started (a count mark that disagrees is the backend's to
// report: caches).
func (c *checker) rooms(tasks []*store.Task, agents []*store.Agent) error {
	for _, t := range tasks {
		phases, err := c.st.Phases(t.ID)
		if err != nil {
			return err
		}
		for _, ph := range phases {
			whole, err := c.st.MessageCount(t.ID, ph.ID)
			if err != nil {
				c.add(Count, ph.ID, "cannot count its log: %v", err)
				continue
			}
			if ph.Status != store.PhaseActive {
				continue
			}
			if t.Status != store.TaskActive {
				c.add(RoomAtLimit, ph.ID, "still active while its task %s is %s", t.ID, t.Status)
				continue
			}
			if whole >= ph.MessageLimit {
				c.add(RoomAtLimit, ph.ID, "holds %d of %d messages and is still active", whole, ph.MessageLimit)
			}
			for _, a := range agents {
				if a.TaskID == t.ID && a.PhaseID == ph.ID && a.Role != "" && a.Status == store.AgentPending && a.Runtime != config.RuntimeNone {
					c.add(PendingRole, a.Name, "role %s of open room %s was never started", a.Role, ph.ID)
				}
			}
		}
	}
	return nil
}

// blockers: a blocked task has a blocker that is not done.
func (c *checker) blockers(tasks []*store.Task, byID map[string]*store.Task) {
	for _, t := range tasks {
		if t.Status != store.TaskBlocked || len(t.BlockedBy) == 0 {
			continue
		}
		open := false
		for _, id := range t.BlockedBy {
			if b := byID[id]; b == nil || b.Status != store.TaskDone {
				open = true
			}
		}
		if !open {
			c.add(BlockedByDone, t.ID, "blocked, but every blocker (%s) is done", strings.Join(t.BlockedBy, ", "))
		}
	}
}

// agents: a run recorded running whose host is gone is stranded unless a
// live supervisor is there to respawn it (its agent wanted) — and live work
// needs a live supervisor.
func (c *checker) agents(agents []*store.Agent, byID map[string]*store.Task) {
	live := c.s.SupervisorLive()
	work := ""
	for _, a := range agents {
		if a.Runtime == config.RuntimeNone {
			continue
		}
		alive := c.drv.Alive(a.Handle)
		wanted := c.wanted(a, byID)
		if (wanted || c.unstarted(a, byID)) && work == "" {
			work = a.Name
		}
		if a.Status == store.AgentRunning && !alive && !(wanted && live) {
			why := "its agent is not wanted any more, yet the record says running"
			if wanted {
				why = "no live supervisor will respawn it"
			}
			c.add(DeadRunning, a.Name, "recorded running as pid %d, which is gone: %s", a.Pid, why)
		}
	}
	// The marker alone, with no live work, strands nothing: the next
	// command's supervisor finds nothing live and removes it.
	if !live && work != "" {
		c.add(NoSupervisor, c.s.Root, "agent %s has live work and no supervisor runs", work)
	}
}

// hubAgents is agents on a hub, where a host may run on any machine: what
// says whether one runs is the agent's lease, which every host holds for
// its whole life, not a pid here. A run recorded running whose lease
// nobody holds is dead-running when nothing will start it again: when it
// is not wanted any more (the record is wrong whatever runs), and, for a
// wanted one placed on a worker, when no worker is live (its own, or any
// one taking a gone one's over). A wanted one placed on no worker is any
// machine's supervisor's to respawn (the launcher's, a plain pm
// supervisor's): another machine's is not seen from here (NotChecked),
// so it is no finding. Live work placed on a worker is stranded when no
// worker at all is live to run it.
func (c *checker) hubAgents(agents []*store.Agent, byID map[string]*store.Task) error {
	leases, lok := state.AgentLeaseReaderOf(c.st)
	ws, wok := state.WorkersOf(c.st)
	if !lok || !wok {
		return nil // not a hub's records: nothing says where a host runs
	}
	live, err := ws.Workers()
	if err != nil {
		return err
	}
	for _, a := range agents {
		if a.Runtime == config.RuntimeNone {
			continue
		}
		wanted := c.wanted(a, byID)
		if a.Worker != "" && len(live) == 0 && (wanted || c.unstarted(a, byID)) {
			c.addPlaced(a, NoSupervisor, "has live work, placed on worker %s, which is gone, and no worker is live to run it or take it over", a.Worker)
		}
		if a.Status != store.AgentRunning {
			continue
		}
		holder, err := leases.AgentHolder(context.Background(), a.Name)
		if err != nil {
			return err
		}
		if holder != "" {
			continue // a host holds it, wherever it runs
		}
		if wanted && (a.Worker == "" || len(live) > 0) {
			continue // a supervisor (of any machine), or a live worker, starts it again
		}
		why := "its agent is not wanted any more, yet the record says running"
		if wanted {
			why = fmt.Sprintf("placed on worker %s, which is gone, and no worker is live to take it over", a.Worker)
		}
		c.addPlaced(a, DeadRunning, "recorded running, and no host holds its lease: %s", why)
	}
	return nil
}

// unstarted: the owner of an active task that was never started (a pm task
// killed before the start): a supervisor's Settle starts it.
func (c *checker) unstarted(a *store.Agent, byID map[string]*store.Task) bool {
	return agent.Unstarted(a, byID[a.TaskID])
}

// wanted: agent.Wanted, from the records already read.
func (c *checker) wanted(a *store.Agent, byID map[string]*store.Task) bool {
	return agent.Wanted(a, byID[a.TaskID], func() (*store.Phase, error) { return c.st.Phase(a.TaskID, a.PhaseID) })
}

// gitLock: the repository's index lock with no process holding it open.
func (c *checker) gitLock() {
	p := filepath.Join(c.s.ProjectDir(), ".git", "index.lock")
	if _, err := os.Lstat(p); err != nil {
		return
	}
	if holders(p) == 0 {
		c.add(GitLock, p, "no process holds it: a git command was killed with it (remove it once no git runs)")
	}
}

// holders counts the processes with path open (those whose descriptors
// this user can read).
func holders(path string) int {
	n := 0
	procs, _ := os.ReadDir("/proc")
	for _, p := range procs {
		if _, err := strconv.Atoi(p.Name()); err != nil {
			continue
		}
		fds, _ := os.ReadDir("/proc/" + p.Name() + "/fd")
		for _, fd := range fds {
			if l, err := os.Readlink("/proc/" + p.Name() + "/fd/" + fd.Name()); err == nil && l == path {
				n++
			}
		}
	}
	return n
}

// orphans: every process of a run of this state directory belongs to a run
// an agent is recorded running with a live host.
func (c *checker) orphans(agents []*store.Agent) {
	runs := map[string]bool{}
	for _, a := range agents {
		if a.Run != "" && a.Status == store.AgentRunning && c.drv.Alive(a.Handle) {
			runs[a.Run] = true
		}
	}
	for pid, run := range driver.Marked(c.s.Root) {
		if !runs[run] {
			c.add(Orphan, strconv.Itoa(pid), "process of run %s, which no running agent has (%s)", run, comm(pid))
		}
	}
}

func comm(pid int) string {
	b, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/comm")
	if err != nil {
		return "gone"
	}
	return strings.TrimSpace(string(b))
}

// caches: the backend's caches agree with its records (its own check,
// state.CacheChecker: fsstate's count marks and indexes); a backend
// without caches has none to disagree.
func (c *checker) caches() error {
	cc, ok := c.st.(state.CacheChecker)
	if !ok {
		return nil
	}
	found, err := cc.CheckCaches()
	if err != nil {
		return err
	}
	kinds := map[state.CacheKind]Kind{state.CacheCount: Count, state.CacheIndex: Index}
	for _, f := range found {
		c.add(kinds[f.Kind], f.Subject, "%s", f.Text)
	}
	return nil
}

// worktrees: a task worktree no task wants (a command killed before it
// removed it), or one a live task wants that is missing or half-made.
func (c *checker) worktrees(tasks []*store.Task) {
	var live []*store.Task
	for _, t := range tasks {
		if t.Live() {
			live = append(live, t)
		}
	}
	stray, missing := task.WorktreeFindings(c.s, c.st, live)
	for _, p := range stray {
		c.add(Worktree, p, "no task wants this worktree: the next pm task, done or kill (or a starting supervisor) removes it")
	}
	for _, p := range missing {
		c.add(Worktree, p, "its live task's worktree is missing or half-made: the next pm task, done or kill (or a starting supervisor) makes it")
	}
}

package task_test

import (
	"bytes"
	"context"
	"fmt"
	"math"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/plasmodium/pm/internal/agent"
	"github.com/plasmodium/pm/internal/driver"
	"github.com/plasmodium/pm/internal/errs"
	"github.com/plasmodium/pm/internal/inbox"
	"github.com/plasmodium/pm/internal/jsonl"
	"github.com/plasmodium/pm/internal/phase"
	"github.com/plasmodium/pm/internal/state/fsstate"
	"github.com/plasmodium/pm/internal/store"
	"github.com/plasmodium/pm/internal/task"
	"github.com/plasmodium/pm/internal/watch"
)

// env is a state directory in a fresh project with a launcher whose "pm"
// binary is a harmless script (only exec-runtime agents ever start it).
type env struct {
	s       *store.Store
	l       *agent.Launcher
	project string
	warn    *bytes.Buffer
	bin     string // where the fake agent host reports its child
}

// procs is the process driver the tests look at real agents through.
var procs = driver.NewProcess(0)

func newEnv(t *testing.T) *env {
	t.Helper()
	project := t.TempDir()
	root, _, err := store.Init(project, time.Now)
	if err != nil {
		t.Fatal(err)
	}
	s, err := store.Open(root)
	if err != nil {
		t.Fatal(err)
	}
	warn := &bytes.Buffer{}
	s.Warn = warn
	s.Config().Runtime.Default = "none"
	bin := t.TempDir()
	exe := filepath.Join(bin, "fake-pm")
	// An "agent host" (run as: fake-pm agent-run NAME) that idles with a
	// child in its process group and reports the child's pid in NAME.child.
	script := "#!/bin/sh\nsleep 300 &\necho $! > \"$FAKE_PM_DIR/$2.tmp\" && mv \"$FAKE_PM_DIR/$2.tmp\" \"$FAKE_PM_DIR/$2.child\"\nwait\n"
	if err := os.WriteFile(exe, []byte(script), 0o755); err != nil {
		t.Fatal(err)
	}
	l := &agent.Launcher{Store: s, State: fsstate.New(s), Exe: exe, Env: append(os.Environ(), "FAKE_PM_DIR="+bin)}
	return &env{s: s, l: l, project: project, warn: warn, bin: bin}
}

func (e *env) create(t *testing.T, sp task.Spec) *store.Task {
	t.Helper()
	tk, err := task.Create(e.s, e.l, store.Human, sp)
	if err != nil {
		t.Fatalf("Create(%+v): %v", sp, err)
	}
	return tk
}

func (e *env) task(t *testing.T, id string) *store.Task {
	t.Helper()
	tk, err := e.s.Task(id)
	if err != nil {
		t.Fatal(err)
	}
	return tk
}

func (e *env) countTasks(t *testing.T) int {
	t.Helper()
	ids, err := e.s.TaskIDs()
	if err != nil {
		t.Fatal(err)
	}
	return len(ids)
}

func (e *env) countAgents(t *testing.T) int {
	t.Helper()
	as, err := e.s.Agents()
	if err != nil {
		t.Fatal(err)
	}
	return len(as)
}

func TestCreate(t *testing.T) {
	e := newEnv(t)
	a := e.create(t, task.Spec{Description: "  Build a landing page  "})
	if a.Status != store.TaskActive || a.Description != "Build a landing page" || a.Depth != 0 || a.Runtime != "none" {
		t.Fatalf("task = %+v", a)
	}
	if a.BlockedBy == nil || len(a.BlockedBy) != 0 {
		t.Fatalf("blocked_by = %#v, want an empty list", a.BlockedBy)
	}
	owner, err := e.s.Agent(a.Owner)
	if err != nil {
		t.Fatal(err)
	}
	if owner.TaskID != a.ID || owner.Prompt != "owner" || owner.Status != store.AgentPending || !owner.IsOwner() || owner.Pid != 0 {
		t.Fatalf("owner = %+v; a runtime-none owner is recorded, never started", owner)
	}
	if got := e.task(t, a.ID); got.Owner != a.Owner || got.Status != store.TaskActive {
		t.Fatalf("recorded task = %+v", got)
	}

	// Blocked by an active task: starts blocked, and the blocker knows.
	b := e.create(t, task.Spec{Description: "after a", BlockedBy: []string{a.ID}})
	if b.Status != store.TaskBlocked || fmt.Sprint(b.BlockedBy) != "["+a.ID+"]" {
		t.Fatalf("blocked task = %+v", b)
	}
	if got := e.task(t, a.ID); !slices.Contains(got.Blocks, b.ID) {
		t.Fatalf("blocker %s does not list %s in blocks: %v", a.ID, b.ID, got.Blocks)
	}

	// Blockers given comma-separated and repeated are deduplicated.
	c := e.create(t, task.Spec{Description: "after a and b", BlockedBy: []string{a.ID + ", " + b.ID, a.ID}})
	if c.Status != store.TaskBlocked || len(c.BlockedBy) != 2 {
		t.Fatalf("task with two blockers = %+v", c)
	}

	// Context for a subtask is written next to it.
	d := e.create(t, task.Spec{Description: "child", ParentID: a.ID, Context: []byte("hand-off notes")})
	if d.Depth != 1 || d.ParentID != a.ID {
		t.Fatalf("subtask = %+v", d)
	}
	if got, _ := os.ReadFile(e.s.ContextPath(d.ID)); string(got) != "hand-off notes" {
		t.Fatalf("context.md = %q", got)
	}
	if got := e.task(t, a.ID); fmt.Sprint(got.Children) != "["+d.ID+"]" {
		t.Fatalf("parent children = %v", got.Children)
	}
}

func TestCreateBlockedByDoneTaskIsActive(t *testing.T) {
	e := newEnv(t)
	a := e.create(t, task.Spec{Description: "a"})
	if _, err := task.Done(e.s, e.l, store.Human, a.ID); err != nil {
		t.Fatal(err)
	}
	b := e.create(t, task.Spec{Description: "b", BlockedBy: []string{a.ID}})
	if b.Status != store.TaskActive || len(b.BlockedBy) != 0 {
		t.Fatalf("task blocked only by a done task = %+v, want active", b)
	}
}

func TestCreateRefusals(t *testing.T) {
	tests := []struct {
		name  string
		setup func(t *testing.T, e *env) task.Spec
		code  errs.Code
	}{
		{name: "empty description", setup: func(*testing.T, *env) task.Spec { return task.Spec{Description: " \n "} }, code: errs.Usage},
		{name: "description too long", setup: func(*testing.T, *env) task.Spec {
			return task.Spec{Description: strings.Repeat("x", task.MaxDescription+1)}
		}, code: errs.Usage},
		{name: "unknown runtime", setup: func(*testing.T, *env) task.Spec { return task.Spec{Description: "x", Runtime: "docker"} }, code: errs.Usage},
		{name: "exec with no command", setup: func(_ *testing.T, e *env) task.Spec {
			e.s.Config().Runtime.Exec.Command = nil
			return task.Spec{Description: "x", Runtime: "exec"}
		}, code: errs.Failure},
		{name: "unknown blocker", setup: func(*testing.T, *env) task.Spec {
			return task.Spec{Description: "x", BlockedBy: []string{"tk-999999"}}
		}, code: errs.NotFound},
		{name: "malformed blocker", setup: func(*testing.T, *env) task.Spec {
			return task.Spec{Description: "x", BlockedBy: []string{"tk-../../etc"}}
		}, code: errs.Usage},
		{name: "unknown parent", setup: func(*testing.T, *env) task.Spec {
			return task.Spec{Description: "x", ParentID: "tk-999999"}
		}, code: errs.NotFound},
		{name: "active_tasks reached", setup: func(t *testing.T, e *env) task.Spec {
			e.s.Config().Limits.ActiveTasks = 2
			a := e.create(t, task.Spec{Description: "a"})
			e.create(t, task.Spec{Description: "b", BlockedBy: []string{a.ID}}) // blocked counts too
			return task.Spec{Description: "c"}
		}, code: errs.Limit},
		{name: "subtask depth reached", setup: func(t *testing.T, e *env) task.Spec {
			e.s.Config().Limits.SubtaskDepth = 2
			a := e.create(t, task.Spec{Description: "depth 0"})
			b := e.create(t, task.Spec{Description: "depth 1", ParentID: a.ID})
			c := e.create(t, task.Spec{Description: "depth 2", ParentID: b.ID})
			return task.Spec{Description: "depth 3", ParentID: c.ID}
		}, code: errs.Limit},
		{name: "hand-edited parent depth max int does not wrap", setup: func(t *testing.T, e *env) task.Spec {
			a := e.create(t, task.Spec{Description: "a"})
			if _, err := e.s.UpdateTask(a.ID, func(x *store.Task) error { x.Depth = math.MaxInt; return nil }); err != nil {
				t.Fatal(err)
			}
			return task.Spec{Description: "child", ParentID: a.ID}
		}, code: errs.Limit},
		{name: "hand-edited negative parent depth", setup: func(t *testing.T, e *env) task.Spec {
			a := e.create(t, task.Spec{Description: "a"})
			if _, err := e.s.UpdateTask(a.ID, func(x *store.Task) error { x.Depth = math.MinInt; return nil }); err != nil {
				t.Fatal(err)
			}
			return task.Spec{Description: "child", ParentID: a.ID}
		}, code: errs.Failure},
		{name: "parent not active", setup: func(t *testing.T, e *env) task.Spec {
			a := e.create(t, task.Spec{Description: "a"})
			b := e.create(t, task.Spec{Description: "b", BlockedBy: []string{a.ID}})
			return task.Spec{Description: "child of blocked", ParentID: b.ID}
		}, code: errs.State},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			e := newEnv(t)
			sp := tt.setup(t, e)
			tasks, agents := e.countTasks(t), e.countAgents(t)
			events, _ := jsonl.Count(e.s.EventsPath())
			got, err := task.Create(e.s, e.l, store.Human, sp)
			if errs.CodeOf(err) != tt.code {
				t.Fatalf("Create = %+v, %v; want exit %d", got, err, tt.code)
			}
			if errs.TryOf(err) == "" {
				t.Errorf("error %q has no Try hint", err)
			}
			if n := e.countTasks(t); n != tasks {
				t.Errorf("refused Create left %d tasks, had %d", n, tasks)
			}
			if n := e.countAgents(t); n != agents {
				t.Errorf("refused Create left %d agents, had %d", n, agents)
			}
			if n, _ := jsonl.Count(e.s.EventsPath()); n != events {
				t.Errorf("refused Create emitted %d events", n-events)
			}
		})
	}
}

// Racing creators cannot push past active_tasks.
func TestCreateRaceRespectsActiveTasks(t *testing.T) {
	e := newEnv(t)
	e.s.Config().Limits.ActiveTasks = 3
	var wg sync.WaitGroup
	var mu sync.Mutex
	codes := map[errs.Code]int{}
	for i := range 10 {
		wg.Go(func() {
			_, err := task.Create(e.s, e.l, store.Human, task.Spec{Description: fmt.Sprint("t", i)})
			mu.Lock()
			codes[errs.CodeOf(err)]++
			mu.Unlock()
		})
	}
	wg.Wait()
	if codes[errs.OK] != 3 || codes[errs.Limit] != 7 {
		t.Fatalf("outcomes %v, want 3 ok and 7 exit 3", codes)
	}
	if n := e.countTasks(t); n != 3 {
		t.Fatalf("%d tasks recorded, want 3", n)
	}
}

func gitRun(t *testing.T, dir string, args ...string) string {
	t.Helper()
	cmd := exec.Command("git", args...)
	cmd.Dir = dir
	cmd.Env = append(os.Environ(), "GIT_CONFIG_NOSYSTEM=1", "HOME="+dir, "GIT_AUTHOR_NAME=t", "GIT_AUTHOR_EMAIL=t@example.com",
		"GIT_COMMITTER_NAME=t", "GIT_COMMITTER_EMAIL=t@example.com")
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("git %v: %v\n%s", args, err, out)
	}
	return strings.TrimSpace(string(out))
}

func TestDoneCommits(t *testing.T) {
	if _, err := exec.LookPath("git"); err != nil {
		t.Skip("git not installed")
	}
	e := newEnv(t)
	gitRun(t, e.project, "init", "-q")
	a := e.create(t, task.Spec{Description: "Write the readme"})
	ph, err := phase.Create(e.s, fsstate.New(e.s), store.Human, phase.Spec{TaskID: a.ID, Name: "Plan", Limit: 5})
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(e.project, "README.md"), []byte("# hi\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	res, err := task.Done(e.s, e.l, store.Human, a.ID)
	if err != nil {
		t.Fatal(err)
	}
	if res.Commit.Hash == "" || res.Commit.NoRepo || res.Commit.NoChanges {
		t.Fatalf("commit result %+v, want a commit", res.Commit)
	}
	if got := gitRun(t, e.project, "log", "-1", "--format=%H %s"); got != res.Commit.Hash+" [plasmodium] "+a.ID+": Write the readme" {
		t.Fatalf("git log = %q", got)
	}
	if files := gitRun(t, e.project, "ls-files"); files != "README.md" {
		t.Fatalf("committed files %q; .plasmodium must stay out", files)
	}
	done := e.task(t, a.ID)
	if done.Status != store.TaskDone || done.Commit != res.Commit.Hash || done.EndedAt == nil {
		t.Fatalf("task after done = %+v", done)
	}
	if got, _ := e.s.Phase(a.ID, ph.ID); got.Status != store.PhaseClosed || got.CloseReason != store.CloseTask {
		t.Fatalf("active phase after done = %+v, want closed (%s)", got, store.CloseTask)
	}
	if _, err := task.Done(e.s, e.l, store.Human, a.ID); !errs.Is(err, errs.State) {
		t.Fatalf("second Done = %v, want exit 5", err)
	}

	// Nothing changed since: done without a commit.
	b := e.create(t, task.Spec{Description: "Nothing to do"})
	res, err = task.Done(e.s, e.l, store.Human, b.ID)
	if err != nil {
		t.Fatal(err)
	}
	if res.Commit.Hash != "" || !res.Commit.NoChanges {
		t.Fatalf("clean tree: commit result %+v, want no_changes", res.Commit)
	}
	if n := gitRun(t, e.project, "rev-list", "--count", "HEAD"); n != "1" {
		t.Fatalf("%s commits, want 1", n)
	}
}

func TestDoneWithoutRepository(t *testing.T) {
	e := newEnv(t)
	a := e.create(t, task.Spec{Description: "a"})
	if err := os.WriteFile(filepath.Join(e.project, "f.txt"), []byte("x"), 0o644); err != nil {
		t.Fatal(err)
	}
	res, err := task.Done(e.s, e.l, store.Human, a.ID)
	if err != nil {
		t.Fatal(err)
	}
	if !res.Commit.NoRepo || res.Commit.Hash != "" || res.Task.Status != store.TaskDone {
		t.Fatalf("Done without a repo = %+v", res)
	}
}

func TestDoneRefusals(t *testing.T) {
	e := newEnv(t)
	if _, err := task.Done(e.s, e.l, store.Human, "tk-999999"); !errs.Is(err, errs.NotFound) {
		t.Fatalf("Done(unknown) = %v, want exit 4", err)
	}
	if _, err := task.Done(e.s, e.l, store.Human, "nope"); !errs.Is(err, errs.Usage) {
		t.Fatalf("Done(bad id) = %v, want exit 2", err)
	}
	a := e.create(t, task.Spec{Description: "a"})
	b := e.create(t, task.Spec{Description: "b", BlockedBy: []string{a.ID}})
	if _, err := task.Done(e.s, e.l, store.Human, b.ID); !errs.Is(err, errs.State) {
		t.Fatalf("Done(blocked) = %v, want exit 5", err)
	}
}

func TestDoneUnblocksDependants(t *testing.T) {
	e := newEnv(t)
	a := e.create(t, task.Spec{Description: "a"})
	c := e.create(t, task.Spec{Description: "c"})
	b := e.create(t, task.Spec{Description: "b needs a", BlockedBy: []string{a.ID}})
	d := e.create(t, task.Spec{Description: "d needs a and c", BlockedBy: []string{a.ID, c.ID}})

	res, err := task.Done(e.s, e.l, store.Human, a.ID)
	if err != nil {
		t.Fatal(err)
	}
	if fmt.Sprint(res.Unblocked) != "["+b.ID+"]" {
		t.Fatalf("unblocked %v, want only %s", res.Unblocked, b.ID)
	}
	if got := e.task(t, b.ID); got.Status != store.TaskActive || len(got.BlockedBy) != 0 {
		t.Fatalf("b = %+v, want active", got)
	}
	if got := e.task(t, d.ID); got.Status != store.TaskBlocked || fmt.Sprint(got.BlockedBy) != "["+c.ID+"]" {
		t.Fatalf("d = %+v, want still blocked by %s", got, c.ID)
	}
	res, err = task.Done(e.s, e.l, store.Human, c.ID)
	if err != nil {
		t.Fatal(err)
	}
	if fmt.Sprint(res.Unblocked) != "["+d.ID+"]" || e.task(t, d.ID).Status != store.TaskActive {
		t.Fatalf("after c: unblocked %v, d %s", res.Unblocked, e.task(t, d.ID).Status)
	}
}

func TestDoneChildrenAndParentInbox(t *testing.T) {
	e := newEnv(t)
	p := e.create(t, task.Spec{Description: "parent"})
	c1 := e.create(t, task.Spec{Description: "child one", ParentID: p.ID})
	c2 := e.create(t, task.Spec{Description: "child two", ParentID: p.ID})

	if _, err := task.Done(e.s, e.l, store.Human, p.ID); !errs.Is(err, errs.State) || !strings.Contains(err.Error(), c1.ID) {
		t.Fatalf("Done(parent with open children) = %v, want exit 5 naming %s", err, c1.ID)
	}
	child := store.Actor{Name: c1.Owner}
	if _, err := task.Done(e.s, e.l, child, c1.ID); err != nil {
		t.Fatal(err)
	}
	notes, err := jsonl.ReadAll[inbox.Message](e.s.InboxPath(p.Owner), nil)
	if err != nil {
		t.Fatal(err)
	}
	if len(notes) != 1 || notes[0].Kind != inbox.KindNotice || notes[0].TaskID != c1.ID || notes[0].From != c1.Owner || !strings.Contains(notes[0].Text, "child one") {
		t.Fatalf("parent inbox = %+v", notes)
	}
	if _, err := task.Done(e.s, e.l, store.Human, p.ID); !errs.Is(err, errs.State) {
		t.Fatalf("Done(parent, one child open) = %v, want exit 5", err)
	}
	// A killed child counts as finished.
	if _, err := task.Kill(e.s, e.l, store.Human, c2.ID, false); err != nil {
		t.Fatal(err)
	}
	if _, err := task.Done(e.s, e.l, store.Human, p.ID); err != nil {
		t.Fatalf("Done(parent, children finished) = %v", err)
	}
}

// waitCtx tells the test when the waiter has checked once and is about to
// block: watch.Until asks for Done only right before it waits for an event.
type waitCtx struct {
	context.Context
	once    sync.Once
	waiting chan struct{}
}

func (c *waitCtx) Done() <-chan struct{} {
	c.once.Do(func() { close(c.waiting) })
	return c.Context.Done()
}

func TestWaitChildrenWakesOnLastChild(t *testing.T) {
	e := newEnv(t)
	p := e.create(t, task.Spec{Description: "parent"})
	c1 := e.create(t, task.Spec{Description: "one", ParentID: p.ID})
	c2 := e.create(t, task.Spec{Description: "two", ParentID: p.ID})
	if _, err := task.Done(e.s, e.l, store.Human, c1.ID); err != nil {
		t.Fatal(err)
	}
	guard, cancel := context.WithTimeout(context.Background(), 2*time.Minute) // hang guard only
	defer cancel()
	ctx := &waitCtx{Context: guard, waiting: make(chan struct{})}
	type result struct {
		children []*store.Task
		err      error
	}
	got := make(chan result, 1)
	go func() {
		ch, err := task.WaitChildren(ctx, fsstate.New(e.s), p.ID, 0)
		got <- result{ch, err}
	}()
	select {
	case <-ctx.waiting:
	case r := <-got:
		t.Fatalf("WaitChildren returned %v before the last child finished", r.err)
	}
	finished := make(chan error, 1)
	go func() { _, err := task.Done(e.s, e.l, store.Human, c2.ID); finished <- err }()
	r := <-got
	if err := <-finished; err != nil {
		t.Fatal(err)
	}
	if r.err != nil {
		t.Fatalf("WaitChildren: %v", r.err)
	}
	if len(r.children) != 2 {
		t.Fatalf("children = %d, want 2", len(r.children))
	}
	for _, c := range r.children {
		if c.Status != store.TaskDone {
			t.Fatalf("child %s is %s when the wait ended", c.ID, c.Status)
		}
	}
}

func TestWaitChildren(t *testing.T) {
	e := newEnv(t)
	lonely := e.create(t, task.Spec{Description: "no children"})
	ch, err := task.WaitChildren(context.Background(), fsstate.New(e.s), lonely.ID, 0)
	if err != nil || len(ch) != 0 {
		t.Fatalf("no children: %v, %v", ch, err)
	}
	if _, err := task.WaitChildren(context.Background(), fsstate.New(e.s), "tk-999999", 0); !errs.Is(err, errs.NotFound) {
		t.Fatalf("unknown task: %v, want exit 4", err)
	}

	p := e.create(t, task.Spec{Description: "parent"})
	c := e.create(t, task.Spec{Description: "child", ParentID: p.ID})
	ch, err = task.WaitChildren(context.Background(), fsstate.New(e.s), p.ID, 50*time.Millisecond)
	if !errs.Is(err, errs.Timeout) {
		t.Fatalf("open child: %v, want exit 124", err)
	}
	if len(ch) != 1 || ch[0].ID != c.ID || !strings.Contains(err.Error(), "1 of 1") {
		t.Fatalf("timeout result %v, %v", ch, err)
	}
	// A cancelled context is not a timeout.
	cctx, cancel := context.WithCancel(context.Background())
	cancel()
	if _, err := task.WaitChildren(cctx, fsstate.New(e.s), p.ID, 0); errs.Is(err, errs.Timeout) || err == nil {
		t.Fatalf("cancelled: %v", err)
	}
}

func TestKillAndRestart(t *testing.T) {
	e := newEnv(t)
	root := e.create(t, task.Spec{Description: "root"})
	child := e.create(t, task.Spec{Description: "child", ParentID: root.ID})
	doneChild := e.create(t, task.Spec{Description: "finished child", ParentID: root.ID})
	if _, err := task.Done(e.s, e.l, store.Human, doneChild.ID); err != nil {
		t.Fatal(err)
	}
	grandchild := e.create(t, task.Spec{Description: "grandchild", ParentID: child.ID})
	other := e.create(t, task.Spec{Description: "unrelated"})
	ph, err := phase.Create(e.s, fsstate.New(e.s), store.Human, phase.Spec{TaskID: child.ID, Name: "P", Limit: 4})
	if err != nil {
		t.Fatal(err)
	}

	res, err := task.Kill(e.s, e.l, store.Human, root.ID, false)
	if err != nil {
		t.Fatal(err)
	}
	want := []string{root.ID, child.ID, grandchild.ID}
	if got := slices.Sorted(slices.Values(res.Tasks)); fmt.Sprint(got) != fmt.Sprint(slices.Sorted(slices.Values(want))) {
		t.Fatalf("killed tasks %v, want %v", res.Tasks, want)
	}
	for _, id := range want {
		if tk := e.task(t, id); tk.Status != store.TaskKilled || tk.EndedAt == nil {
			t.Fatalf("%s = %+v, want killed", id, tk)
		}
		a, _ := e.s.Agent(e.task(t, id).Owner)
		if a.Status != store.AgentKilled {
			t.Fatalf("owner of %s is %s, want killed", id, a.Status)
		}
	}
	if e.task(t, doneChild.ID).Status != store.TaskDone {
		t.Fatal("kill changed a done child")
	}
	if tk := e.task(t, other.ID); tk.Status != store.TaskActive {
		t.Fatal("kill touched an unrelated task")
	}
	if a, _ := e.s.Agent(other.Owner); a.Status != store.AgentPending {
		t.Fatal("kill touched an unrelated agent")
	}
	if got, _ := e.s.Phase(child.ID, ph.ID); got.Status != store.PhaseClosed || got.CloseReason != store.CloseKilled {
		t.Fatalf("phase of a killed task = %+v", got)
	}

	// Restart only the root: a fresh owner, same description.
	tk, owner, err := task.Restart(e.s, e.l, store.Human, root.ID)
	if err != nil {
		t.Fatal(err)
	}
	if tk.Status != store.TaskActive || owner == root.Owner || tk.Owner != owner || tk.Description != "root" || tk.EndedAt != nil {
		t.Fatalf("restarted = %+v (owner %s, old %s)", tk, owner, root.Owner)
	}
	if a, err := e.s.Agent(owner); err != nil || a.Status != store.AgentPending || a.TaskID != root.ID {
		t.Fatalf("new owner = %+v, %v", a, err)
	}
	if _, _, err := task.Restart(e.s, e.l, store.Human, root.ID); !errs.Is(err, errs.State) {
		t.Fatalf("Restart of an active task = %v, want exit 5", err)
	}
	if _, err := task.Kill(e.s, e.l, store.Human, "tk-999999", false); !errs.Is(err, errs.NotFound) {
		t.Fatalf("Kill(unknown) = %v, want exit 4", err)
	}
}

func TestKillRestartFlag(t *testing.T) {
	e := newEnv(t)
	a := e.create(t, task.Spec{Description: "again"})
	res, err := task.Kill(e.s, e.l, store.Human, a.ID, true)
	if err != nil {
		t.Fatal(err)
	}
	if res.Restarted == nil || res.Restarted.Status != store.TaskActive || res.NewOwner == a.Owner || res.Restarted.Owner != res.NewOwner {
		t.Fatalf("kill --restart = %+v", res)
	}
	if old, _ := e.s.Agent(a.Owner); old.Status != store.AgentKilled {
		t.Fatalf("old owner = %s, want killed", old.Status)
	}
}

// A blocked task restarts blocked: its owner must not start before its blockers finish.
func TestRestartBlockedStaysBlocked(t *testing.T) {
	e := newEnv(t)
	a := e.create(t, task.Spec{Description: "a"})
	b := e.create(t, task.Spec{Description: "b", BlockedBy: []string{a.ID}})
	if _, err := task.Kill(e.s, e.l, store.Human, b.ID, false); err != nil {
		t.Fatal(err)
	}
	tk, _, err := task.Restart(e.s, e.l, store.Human, b.ID)
	if err != nil {
		t.Fatal(err)
	}
	if tk.Status != store.TaskBlocked {
		t.Fatalf("restarted blocked task is %s", tk.Status)
	}
}

// With the exec runtime the owner is a real process group; Kill ends it.
func TestKillEndsAgentProcessGroup(t *testing.T) {
	e := newEnv(t)
	a := e.create(t, task.Spec{Description: "runs", Runtime: "exec"})
	owner, err := e.s.Agent(a.Owner)
	if err != nil {
		t.Fatal(err)
	}
	if owner.Status != store.AgentRunning || owner.Pid <= 0 || !procs.Alive(owner.Handle) {
		t.Fatalf("exec owner = %+v, want a running process", owner)
	}
	t.Cleanup(func() { _, _ = procs.Stop(context.Background(), owner.Handle) })
	// Wait (on file events) for the host to report its child.
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute) // hang guard
	defer cancel()
	childFile := filepath.Join(e.bin, a.Owner+".child")
	if err := watch.Until(ctx, func() []string { return []string{e.bin} }, func() (bool, error) {
		_, err := os.Stat(childFile)
		return err == nil, nil
	}); err != nil {
		t.Fatal(err)
	}
	data, err := os.ReadFile(childFile)
	if err != nil {
		t.Fatal(err)
	}
	childPid, err := strconv.Atoi(strings.TrimSpace(string(data)))
	if err != nil {
		t.Fatal(err)
	}
	child, err := driver.Find(childPid)
	if err != nil {
		t.Fatalf("child of the agent host: %v", err)
	}
	t.Cleanup(func() { _, _ = procs.Stop(context.Background(), child) })

	if _, err := task.Kill(e.s, e.l, store.Human, a.ID, false); err != nil {
		t.Fatal(err)
	}
	// Both the leader and the member of its group end (Wait waits on a
	// pidfd; the timeout is only a hang guard).
	for _, h := range []driver.Handle{owner.Handle, child} {
		hang, cancel := context.WithTimeout(context.Background(), time.Minute)
		_, err := procs.Wait(hang, h)
		cancel()
		if err != nil || procs.Alive(h) {
			t.Fatalf("pid %d still alive after kill", h.Pid)
		}
	}
	if got, _ := e.s.Agent(a.Owner); got.Status != store.AgentKilled {
		t.Fatalf("agent = %s, want killed", got.Status)
	}
}

package task

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/plasmodium/pm/internal/agent"
	"github.com/plasmodium/pm/internal/config"
	"github.com/plasmodium/pm/internal/driver/drivertest"
	"github.com/plasmodium/pm/internal/gitx"
	"github.com/plasmodium/pm/internal/state"
	"github.com/plasmodium/pm/internal/state/fsstate"
	"github.com/plasmodium/pm/internal/store"
)

// Review findings of the git remote (issue 24, "git3"): each test failed
// on the code before its fix.

// remoteProject is a project in a clone of a bare remote (with the
// user's own uncommitted work in the clone, which must survive), its
// config.json given cfg's keys; it returns the store (warnings in warn),
// its records, the clone's pin, the remote and main's first commit.
type remoteProject struct {
	s    *store.Store
	st   state.State
	p    gitx.Pin
	bare string
	base string
	warn *bytes.Buffer
}

func newRemoteProject(t *testing.T, cfg map[string]any) *remoteProject {
	t.Helper()
	if _, err := exec.LookPath("git"); err != nil {
		t.Skip("no git binary")
	}
	t.Setenv("GIT_CONFIG_NOSYSTEM", "1")
	t.Setenv("HOME", t.TempDir())
	root := t.TempDir()
	bare := filepath.Join(root, "remote.git")
	git(t, root, "init", "-q", "--bare", "-b", "main", bare)
	git(t, root, "clone", "-q", bare, "clone")
	clone := filepath.Join(root, "clone")
	os.WriteFile(filepath.Join(clone, "README"), []byte("one\n"), 0o644)
	git(t, clone, "add", "-A")
	git(t, clone, "commit", "-qm", "initial")
	git(t, clone, "push", "-q", "origin", "HEAD:refs/heads/main")
	base := git(t, clone, "rev-parse", "HEAD")
	os.WriteFile(filepath.Join(clone, "README"), []byte("the user's own, not committed\n"), 0o644)
	sroot, _, err := store.Init(clone, time.Now)
	if err != nil {
		t.Fatal(err)
	}
	if len(cfg) > 0 {
		path := filepath.Join(sroot, "config.json")
		var body map[string]any
		data, err := os.ReadFile(path)
		if err != nil || json.Unmarshal(data, &body) != nil {
			t.Fatalf("config.json: %v %s", err, data)
		}
		for k, v := range cfg {
			body[k] = v
		}
		data, _ = json.Marshal(body)
		if err := os.WriteFile(path, data, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	s, err := store.Open(sroot)
	if err != nil {
		t.Fatal(err)
	}
	warn := &bytes.Buffer{}
	s.Warn = warn
	p, err := gitx.Locate(clone)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if b, err := os.ReadFile(filepath.Join(clone, "README")); err != nil || string(b) != "the user's own, not committed\n" {
			t.Errorf("the user's uncommitted work: %q, %v", b, err)
		}
	})
	return &remoteProject{s: s, st: fsstate.New(s), p: p, bare: bare, base: base, warn: warn}
}

// task records a task whose code goes through origin (its worktree
// another machine's unless made here), under parent when not "".
func (rp *remoteProject) task(t *testing.T, status store.TaskStatus, parent string) *store.Task {
	t.Helper()
	var made *store.Task
	err := rp.st.WithTasks(func() error {
		var err error
		made, err = rp.st.CreateTask(func(id string) (*store.Task, []byte, error) {
			tk := &store.Task{ID: id, Description: "elsewhere", Status: status, Runtime: config.RuntimeLLM, CreatedAt: time.Now(),
				Repo: &rp.p, BlockedBy: []string{}, ParentID: parent}
			tk.Worktree = &gitx.Worktree{Path: "/another/machine/.pm-worktrees/" + id, Branch: gitx.BranchPrefix + id, Base: rp.base,
				Into: "refs/heads/main", Remote: "origin"}
			if status == store.TaskKilled {
				now := time.Now()
				tk.EndedAt = &now
			}
			return tk, nil, nil
		})
		return err // the parent's Children gets it (CreateTask)
	})
	if err != nil {
		t.Fatal(err)
	}
	return made
}

// gitRuns puts a git on PATH that notes each of its runs; runs reads and
// empties the notes.
func gitRuns(t *testing.T) func() []string {
	t.Helper()
	real, err := exec.LookPath("git")
	if err != nil {
		t.Fatal(err)
	}
	bin := t.TempDir()
	log := filepath.Join(bin, "git.log")
	script := "#!/bin/sh\necho \"$*\" >>" + log + "\nexec " + real + " \"$@\"\n"
	if err := os.WriteFile(filepath.Join(bin, "git"), []byte(script), 0o755); err != nil {
		t.Fatal(err)
	}
	t.Setenv("PATH", bin+string(os.PathListSeparator)+os.Getenv("PATH"))
	return func() []string {
		data, err := os.ReadFile(log)
		if errors.Is(err, os.ErrNotExist) {
			return nil
		}
		os.Remove(log)
		return strings.Split(strings.TrimSpace(string(data)), "\n")
	}
}

// count is how many of the noted git runs are a fetch or a push.
func count(runs []string, what string) int {
	n := 0
	for _, r := range runs {
		if strings.Contains(r, " "+what+" ") {
			n++
		}
	}
	return n
}

// Fifty killed tasks' branches left on the remote (their kills could not
// reach it) are deleted by the next command that fetches, in one push, not
// one push each: a project with many leftovers does not make every pm
// task slow.
func TestLeftoverBranchesGoInOnePush(t *testing.T) {
	rp := newRemoteProject(t, nil)
	var refs []string
	for range 50 {
		k := rp.task(t, store.TaskKilled, "")
		refs = append(refs, rp.base+":"+k.Worktree.Branch)
	}
	git(t, rp.p.WorkTree, append([]string{"push", "-q", "origin"}, refs...)...)
	runs := gitRuns(t)
	m := here(rp.s)
	r, err := gitx.RemoteOf(rp.p, "origin", mirrorDir(rp.s, "origin"))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := m.fetched(r, "try again"); err != nil {
		t.Fatal(err)
	}
	repairRemoteBranches(m, rp.st)
	got := runs()
	if count(got, "fetch") != 1 || count(got, "push") != 1 {
		t.Fatalf("the repair ran %d fetches and %d pushes for 50 leftovers, want 1 and 1", count(got, "fetch"), count(got, "push"))
	}
	if left := git(t, rp.bare, "for-each-ref", "--format=%(refname)", "refs/heads/pm"); left != "" {
		t.Fatalf("left on the remote: %s", left)
	}
	if w := rp.warn.String(); w != "" {
		t.Fatalf("warnings: %s", w)
	}
}

// stalledRemote is a git:// URL of a listener that takes connections,
// reads and never answers.
func stalledRemote(t *testing.T) string {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	var mu sync.Mutex
	var conns []net.Conn
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			mu.Lock()
			conns = append(conns, c) // held open, never answered
			mu.Unlock()
			go io.Copy(io.Discard, c)
		}
	}()
	t.Cleanup(func() {
		ln.Close()
		mu.Lock()
		defer mu.Unlock()
		for _, c := range conns {
			c.Close()
		}
	})
	return "git://" + ln.Addr().String() + "/remote.git"
}

// pm kill with a remote that takes the connection and never answers goes
// on after git.remote_timeout (here 1s), not git's 2 minutes per try: the
// tree is killed, the remote tried once for the whole tree (not once per
// task), and the warning says what to do.
func TestKillGoesOnWhenTheRemoteDoesNotAnswer(t *testing.T) {
	rp := newRemoteProject(t, map[string]any{"git": map[string]any{"remote_timeout": "1s"}})
	root := rp.task(t, store.TaskActive, "")
	rp.task(t, store.TaskActive, root.ID)
	rp.task(t, store.TaskActive, root.ID)
	git(t, rp.p.WorkTree, "remote", "set-url", "origin", stalledRemote(t))
	runs := gitRuns(t)
	l := &agent.Launcher{Store: rp.s, State: rp.st}
	res, err := Kill(rp.s, l, store.Human, root.ID, false)
	if err != nil {
		t.Fatal(err)
	}
	if len(res.Tasks) != 3 {
		t.Fatalf("killed %v, want the tree of 3", res.Tasks)
	}
	for _, id := range res.Tasks {
		if tk, err := rp.st.Task(id); err != nil || tk.Status != store.TaskKilled {
			t.Fatalf("%s after the kill: %+v, %v", id, tk, err)
		}
	}
	if n := count(runs(), "fetch"); n != 1 {
		t.Fatalf("the kill tried the remote %d times, want once", n)
	}
	w := rp.warn.String()
	t.Logf("%s", w)
	if !strings.Contains(w, "no answer") || !strings.Contains(w, "Try: ") || !strings.Contains(w, "git.remote_timeout") {
		t.Fatalf("warning: %q; want the remote's silence, git.remote_timeout and a Try line", w)
	}
}

// pm kill --restart of a task whose tree has a killed subtask fetches the
// remote once: the revived task's worktree, half-made here (its
// directory left by a pm task killed part-way, its branch not made), is
// made from what the kill fetched, not from a second fetch.
func TestKillRestartFetchesOnce(t *testing.T) {
	rp := newRemoteProject(t, nil)
	root := rp.task(t, store.TaskActive, "")
	child := rp.task(t, store.TaskActive, root.ID)
	git(t, rp.p.WorkTree, "push", "-q", "origin", rp.base+":"+child.Worktree.Branch)
	if err := os.MkdirAll(root.WorktreePath(rp.s.ProjectDir()), 0o755); err != nil {
		t.Fatal(err)
	}
	runs := gitRuns(t)
	fake := drivertest.New()
	l := &agent.Launcher{Store: rp.s, State: rp.st, Exe: "pm", Driver: fake}
	res, err := Kill(rp.s, l, store.Human, root.ID, true)
	if err != nil {
		t.Fatal(err)
	}
	if res.Restarted == nil || res.Restarted.ID != root.ID || len(res.Tasks) != 2 {
		t.Fatalf("kill --restart = %+v", res)
	}
	if n := count(runs(), "fetch"); n != 1 {
		t.Fatalf("pm kill --restart fetched %d times, want once", n)
	}
	if _, err := os.Lstat(filepath.Join(root.WorktreePath(rp.s.ProjectDir()), ".git")); err != nil {
		t.Fatalf("the revived task's worktree was not made: %v", err)
	}
	if left := git(t, rp.bare, "for-each-ref", "--format=%(refname)", "refs/heads/pm"); left != "" {
		t.Fatalf("the killed subtask's branch is left on the remote: %s", left)
	}
}

// remoteCopy, the one helper pm diff reads the remote's branches through
// (it was two, fetchInto and fetchBranch): pm's ref of the branch at the
// remote's tip, else at orElse, else none.
func TestRemoteCopy(t *testing.T) {
	rp := newRemoteProject(t, nil)
	tk := rp.task(t, store.TaskActive, "")
	git(t, rp.p.WorkTree, "push", "-q", "origin", rp.base+":"+tk.Worktree.Branch)
	m := here(rp.s)
	lt, err := m.local(tk)
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		branch, orElse, want, at string
	}{
		{tk.Worktree.Branch, "", tracking("origin", tk.Worktree.Branch), rp.base},                    // on the remote
		{"refs/heads/pm/tk-000000", rp.base, tracking("origin", "refs/heads/pm/tk-000000"), rp.base}, // not there: orElse
		{"refs/heads/pm/tk-111111", "", "", ""},                                                      // neither
	} {
		ref, err := remoteCopy(m, lt, c.branch, c.orElse)
		if err != nil || ref != c.want {
			t.Errorf("remoteCopy(%s, %q) = %q, %v; want %q", c.branch, c.orElse, ref, err, c.want)
			continue
		}
		if ref != "" {
			if got := git(t, rp.p.WorkTree, "rev-parse", ref); got != c.at {
				t.Errorf("%s at %s, want %s", ref, got, c.at)
			}
		}
	}
}

// pm kill --restart whose kill could not reach the remote (its fetch,
// bounded by git.remote_timeout, got no answer) still makes the revived
// task's worktree: the restart moves work, so it fetches again with git's
// own bound instead of failing with the kill's error after the record
// was revived. The git here sends the first fetch to a listener that
// never answers, the next ones to the remote.
func TestKillRestartFetchesAgainAfterATidyFetchFailed(t *testing.T) {
	rp := newRemoteProject(t, map[string]any{"git": map[string]any{"remote_timeout": "1s"}})
	root := rp.task(t, store.TaskActive, "")
	rp.task(t, store.TaskActive, root.ID)
	if err := os.MkdirAll(root.WorktreePath(rp.s.ProjectDir()), 0o755); err != nil { // begun here
		t.Fatal(err)
	}
	real, err := exec.LookPath("git")
	if err != nil {
		t.Fatal(err)
	}
	bin := t.TempDir()
	mark := filepath.Join(bin, "stalled-once")
	script := "#!/bin/sh\nstall=\ncase \" $* \" in *\" fetch \"*) if [ ! -e " + mark + " ]; then : >" + mark + "; stall=1; fi;; esac\n" +
		"for a in \"$@\"; do shift; if [ -n \"$stall\" ] && [ \"$a\" = '" + rp.bare + "' ]; then a='" + stalledRemote(t) + "'; fi; set -- \"$@\" \"$a\"; done\n" +
		"exec " + real + " \"$@\"\n"
	if err := os.WriteFile(filepath.Join(bin, "git"), []byte(script), 0o755); err != nil {
		t.Fatal(err)
	}
	t.Setenv("PATH", bin+string(os.PathListSeparator)+os.Getenv("PATH"))
	fake := drivertest.New()
	l := &agent.Launcher{Store: rp.s, State: rp.st, Exe: "pm", Driver: fake}
	res, err := Kill(rp.s, l, store.Human, root.ID, true)
	if err != nil {
		t.Fatalf("kill --restart after a fetch with no answer: %v", err)
	}
	if res.Restarted == nil || res.Restarted.ID != root.ID {
		t.Fatalf("kill --restart = %+v", res)
	}
	if _, err := os.Stat(mark); err != nil {
		t.Fatal("the kill's fetch did not go to the silent listener")
	}
	if _, err := os.Lstat(filepath.Join(root.WorktreePath(rp.s.ProjectDir()), ".git")); err != nil {
		t.Fatalf("the revived task's worktree was not made: %v", err)
	}
	if w := rp.warn.String(); !strings.Contains(w, "no answer") {
		t.Fatalf("warning: %q, want the kill's fetch's", w)
	}
}

// Deletions past a command's cap are not dropped without a word: the
// warning says how many are left for the next command, and the next
// command deletes them.
func TestDropsPastTheCapAreSaid(t *testing.T) {
	old := maxDrops
	maxDrops = 2
	t.Cleanup(func() { maxDrops = old })
	rp := newRemoteProject(t, nil)
	var refs []string
	for range 5 {
		k := rp.task(t, store.TaskKilled, "")
		refs = append(refs, rp.base+":"+k.Worktree.Branch)
	}
	git(t, rp.p.WorkTree, append([]string{"push", "-q", "origin"}, refs...)...)
	left := func() int {
		out := git(t, rp.bare, "for-each-ref", "--format=%(refname)", "refs/heads/pm")
		if out == "" {
			return 0
		}
		return len(strings.Split(out, "\n"))
	}
	for i, want := range []int{3, 1, 0} {
		rp.warn.Reset()
		m := here(rp.s)
		r, err := gitx.RemoteOf(rp.p, "origin", mirrorDir(rp.s, "origin"))
		if err != nil {
			t.Fatal(err)
		}
		if _, err := m.fetched(r, "try again"); err != nil {
			t.Fatal(err)
		}
		repairRemoteBranches(m, rp.st)
		if n := left(); n != want {
			t.Fatalf("command %d left %d branches, want %d", i+1, n, want)
		}
		w := rp.warn.String()
		switch {
		case want > 0 && !strings.Contains(w, fmt.Sprintf("%d left for the next command", want)):
			t.Fatalf("command %d, %d left: warning %q", i+1, want, w)
		case want == 0 && w != "":
			t.Fatalf("command %d, none left: warning %q", i+1, w)
		}
	}
}

// tidyWarning's Try line follows gitx's kind of the error (errors.Is, not
// its wording), on any command's machine: a remote silent past the bound,
// or a mirror another pm process held all along, may be given longer
// (git.remote_timeout, read once) even from a pm task, whose deletions
// are bounded by it too.
func TestTidyWarningFollowsTheKind(t *testing.T) {
	rp := newRemoteProject(t, map[string]any{"git": map[string]any{"remote_timeout": "3s"}})
	r := gitx.Remote{Name: "origin"}
	for _, c := range []struct {
		err        error
		try, wrong string
	}{
		{fmt.Errorf("git push: silent: %w", gitx.ErrNoAnswer), "Try: check that this machine reaches the remote (git fetch origin), or give it longer (pm config set git.remote_timeout 1m; now 3s)", ""},
		{fmt.Errorf("mirror: %w", gitx.ErrBusy), "Try: let the other pm command using origin finish, or give it longer (pm config set git.remote_timeout 1m; now 3s)", "this machine reaches"},
		{fmt.Errorf("refused: %w", gitx.ErrDenied), "Try: check this machine's credentials for origin", "longer"},
		{fmt.Errorf("no answer from nowhere: %w", gitx.ErrUnreachable), "Try: check that this machine reaches the remote (git fetch origin)", "longer"},
	} {
		rp.warn.Reset()
		here(rp.s).tidyWarning(r, "refs/heads/pm/tk-1", c.err)
		w := rp.warn.String()
		if !strings.Contains(w, c.try) || c.wrong != "" && strings.Contains(w, c.wrong) {
			t.Errorf("%v: warning %q, want %q", c.err, w, c.try)
		}
	}
}

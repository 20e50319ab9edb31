package main_test

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"
)

// TestStrandedUnderKill9 is the kill -9 stress run: seeded random kill -9
// over every process of a project (the pm commands, the agent hosts and the
// pm commands their agents run, the supervisor), with a supervisor (exec
// script agents play the landing-page flow) and without one (the test plays
// the owner and the roles on the none runtime, each command possibly killed
// and run again, as a person would). Each trial ends, once nothing is killed
// any more and the task has settled, with pm doctor --check; the findings
// are counted by kind.
//
// PM_STRESS_TRIALS (default 4: the seeded short version of make test),
// PM_STRESS_SEED (default 1) and PM_STRESS_TIME (default 3m: no new trial
// starts after it) bound it. The test fails on findings of the kinds this
// run is to keep at zero (a dead run nobody respawns, live work with no
// supervisor, an unreadable record, a wait that never ends while the
// supervisor is gone); with PM_STRESS_STRICT=1 on any finding. make stress
// runs 1,000 trials.
func TestStrandedUnderKill9(t *testing.T) {
	trials := envInt("PM_STRESS_TRIALS", 4)
	seed := uint64(envInt("PM_STRESS_SEED", 1))
	budget, err := time.ParseDuration(envOr("PM_STRESS_TIME", "3m"))
	if err != nil {
		t.Fatal(err)
	}
	agentScript, err := filepath.Abs("../../examples/agents/script-agent.sh")
	if err != nil {
		t.Fatal(err)
	}
	rng := rand.New(rand.NewPCG(seed, 21))
	byKind := map[string]int{}
	stranded, ran, kills := 0, 0, 0
	deadline := time.Now().Add(budget)
	for i := range trials {
		if time.Now().After(deadline) {
			break
		}
		withSupervisor := i%2 == 0
		tr := newTrial(t, filepath.Join(t.TempDir(), "p"), withSupervisor, agentScript)
		var found []string
		if withSupervisor {
			found = tr.supervised(rng)
		} else {
			found = tr.unsupervised(rng)
		}
		ran++
		kills += tr.kills
		if len(found) > 0 {
			stranded++
		}
		for _, f := range found {
			kind, _, _ := strings.Cut(f, " ")
			byKind[kind]++
			t.Logf("trial %d (supervisor %v): %s", i, withSupervisor, f)
			if os.Getenv("PM_STRESS_DEBUG") == "1" {
				tr.explain(f)
			}
		}
		tr.cleanup()
	}
	kinds := make([]string, 0, len(byKind))
	for k := range byKind {
		kinds = append(kinds, k)
	}
	sort.Strings(kinds)
	var parts []string
	for _, k := range kinds {
		parts = append(parts, fmt.Sprintf("%s %d", k, byKind[k]))
	}
	t.Logf("%d trials (seed %d), %d kill -9s: %d stranded; by kind: %s", ran, seed, kills, stranded, strings.Join(parts, ", "))
	strict := os.Getenv("PM_STRESS_STRICT") == "1"
	for _, k := range kinds {
		if strict || mustBeZero[k] {
			t.Errorf("%d findings of kind %s", byKind[k], k)
		}
	}
}

// mustBeZero are the kinds this run keeps at zero; the others (rooms at
// their limit, pending roles, blockers, git locks, orphans) are counted and
// reported for the work on those parts.
var mustBeZero = map[string]bool{"dead-running": true, "no-supervisor": true, "unreadable": true, "wait-stuck": true}

type trial struct {
	t     *testing.T
	dir   string
	home  string
	env   []string
	sup   bool
	kills int
}

func newTrial(t *testing.T, dir string, withSupervisor bool, agentScript string) *trial {
	t.Helper()
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	tr := &trial{t: t, dir: dir, home: filepath.Join(dir, ".plasmodium"), sup: withSupervisor}
	tr.env = append(os.Environ(), "PM_HOME="+tr.home, "PM_AGENT=", "GORACE=atexit_sleep_ms=0", "DEMO_LIMIT=4",
		"PATH="+filepath.Dir(pmBin)+string(os.PathListSeparator)+os.Getenv("PATH"),
		"GIT_AUTHOR_NAME=pm", "GIT_AUTHOR_EMAIL=pm@localhost", "GIT_COMMITTER_NAME=pm", "GIT_COMMITTER_EMAIL=pm@localhost")
	if !withSupervisor {
		tr.env = append(tr.env, "PM_NO_SUPERVISOR=1")
	}
	if out, err := exec.Command("git", "init", "-q", dir).CombinedOutput(); err != nil {
		t.Fatalf("git init: %v: %s", err, out)
	}
	tr.must("init")
	cfg := map[string]any{"runtime": map[string]any{"default": "exec", "exec": map[string]any{"command": []string{agentScript}}}}
	data, _ := json.Marshal(cfg)
	if err := os.WriteFile(filepath.Join(tr.home, "config.json"), data, 0o644); err != nil {
		t.Fatal(err)
	}
	return tr
}

// pm runs pm in the trial's project; code is -9 when it was killed.
func (tr *trial) pm(extra []string, args ...string) (string, string, int) {
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute) // hang guard only
	defer cancel()
	cmd := exec.CommandContext(ctx, pmBin, args...)
	cmd.Dir, cmd.Env = tr.dir, append(append([]string{}, tr.env...), extra...)
	var out, errb bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errb
	err := cmd.Run()
	code := 0
	if ee, ok := err.(*exec.ExitError); ok {
		code = ee.ExitCode()
		if ws, ok := ee.Sys().(syscall.WaitStatus); ok && ws.Signaled() {
			code = -9
		}
	} else if err != nil {
		tr.t.Fatalf("pm %v: %v", args, err)
	}
	return out.String(), errb.String(), code
}

func (tr *trial) must(args ...string) string {
	tr.t.Helper()
	out, errs, code := tr.pm(nil, args...)
	if code != 0 {
		tr.t.Fatalf("pm %v: exit %d: %s", args, code, errs)
	}
	return out
}

// ours lists the processes of this project: PM_HOME names its state (the
// commands, hosts, agents' commands and the supervisor all carry it).
func (tr *trial) ours() []int {
	want := []byte("PM_HOME=" + tr.home + "\x00")
	var out []int
	ents, _ := os.ReadDir("/proc")
	for _, e := range ents {
		pid, err := strconv.Atoi(e.Name())
		if err != nil || pid == os.Getpid() {
			continue
		}
		env, err := os.ReadFile("/proc/" + e.Name() + "/environ")
		if err == nil && bytes.Contains(env, want) {
			out = append(out, pid)
		}
	}
	return out
}

// killSome kills -9 n random processes of the project, one every few
// milliseconds to a second (a random schedule from rng, not a wait for
// anything).
func (tr *trial) killSome(rng *rand.Rand, n int, spread time.Duration) {
	for range n {
		time.Sleep(time.Duration(rng.Int64N(int64(spread))))
		ps := tr.ours()
		if len(ps) == 0 {
			continue
		}
		if syscall.Kill(ps[rng.IntN(len(ps))], syscall.SIGKILL) == nil {
			tr.kills++
		}
	}
}

// supervised: a task on exec script agents; kills while it runs; then the
// human's view: pm wait until it settles (done, stalled or killed), and
// the check once the supervisor has nothing left to do.
func (tr *trial) supervised(rng *rand.Rand) []string {
	done := make(chan struct{})
	go func() {
		defer close(done)
		tr.killSome(rng, 1+rng.IntN(4), 1500*time.Millisecond)
	}()
	_, _, _ = tr.pm(nil, "task", "Build a landing page", "--json")
	<-done
	var found []string
	for _, id := range tr.taskIDs() {
		// The human waits (this command revives a supervisor that died).
		if _, errs, code := tr.pm(nil, "wait", id, "--timeout", "60s"); code == 124 {
			found = append(found, "wait-stuck "+id+": "+strings.TrimSpace(errs))
		}
	}
	tr.quiet()
	return append(found, tr.doctor()...)
}

// unsupervised: no supervisor, the none runtime: the test is the owner and
// the roles. Each command may be killed; a killed one is run again once, as
// a person would.
func (tr *trial) unsupervised(rng *rand.Rand) []string {
	step := func(agent string, args ...string) (string, int) {
		for attempt := 0; ; attempt++ {
			cmd := exec.Command(pmBin, args...)
			cmd.Dir, cmd.Env = tr.dir, append(append([]string{}, tr.env...), "PM_AGENT="+agent)
			var out bytes.Buffer
			cmd.Stdout = &out
			if err := cmd.Start(); err != nil {
				tr.t.Fatal(err)
			}
			if attempt == 0 && rng.IntN(3) == 0 {
				time.Sleep(time.Duration(rng.Int64N(int64(30 * time.Millisecond))))
				if cmd.Process.Signal(syscall.SIGKILL) == nil {
					tr.kills++
				}
			}
			err := cmd.Wait()
			code := 0
			if ee, ok := err.(*exec.ExitError); ok {
				code = ee.ExitCode()
				if ws, ok := ee.Sys().(syscall.WaitStatus); ok && ws.Signaled() {
					code = -9
				}
			}
			if code != -9 || attempt > 0 {
				return out.String(), code
			}
		}
	}
	if _, code := step("", "task", "Build a landing page", "--runtime", "none", "--json"); code != 0 && code != -9 {
		return nil
	}
	ids := tr.taskIDs()
	if len(ids) == 0 {
		return tr.doctor() // the creation died before its record: nothing exists
	}
	id := ids[0]
	owner := tr.owner(id)
	if _, code := step(owner, "phase", "Brainstorm", "--limit", "3", "--roles", "designer,developer"); code == 0 || code == -9 {
		for _, m := range []string{"one", "two", "three"} {
			step(owner, "say", m)
		}
	}
	if err := os.WriteFile(filepath.Join(tr.dir, "index.html"), []byte("<h1>hi</h1>\n"), 0o644); err != nil {
		tr.t.Fatal(err)
	}
	step(owner, "done")
	return tr.doctor()
}

// taskIDs lists the tasks on record.
func (tr *trial) taskIDs() []string {
	var out []string
	ents, _ := os.ReadDir(filepath.Join(tr.home, "tasks"))
	for _, e := range ents {
		if _, err := os.Stat(filepath.Join(tr.home, "tasks", e.Name(), "task.json")); err == nil {
			out = append(out, e.Name())
		}
	}
	return out
}

func (tr *trial) owner(id string) string {
	var tk struct{ Owner string }
	data, _ := os.ReadFile(filepath.Join(tr.home, "tasks", id, "task.json"))
	_ = json.Unmarshal(data, &tk)
	return tk.Owner
}

// quiet waits (bounded) until the supervisor has left: it leaves once
// nothing is live, so the state is at rest for the check. A supervisor
// still there after the bound is left to the check to judge.
func (tr *trial) quiet() {
	deadline := time.Now().Add(30 * time.Second)
	for time.Now().Before(deadline) {
		if _, err := os.Stat(filepath.Join(tr.home, "supervisor.wanted")); err != nil {
			return
		}
		time.Sleep(50 * time.Millisecond)
	}
}

// doctor runs pm doctor --check --json and returns "kind subject: text".
func (tr *trial) doctor() []string {
	out, errs, code := tr.pm(nil, "doctor", "--check", "--json")
	var res struct {
		Findings []struct{ Kind, Subject, Text string }
	}
	if err := json.Unmarshal([]byte(out), &res); err != nil || (code != 0) != (len(res.Findings) > 0) {
		tr.t.Fatalf("pm doctor --check: exit %d, %v: %s%s", code, err, out, errs)
	}
	var found []string
	for _, f := range res.Findings {
		found = append(found, f.Kind+" "+f.Subject+": "+f.Text)
	}
	return found
}

// explain logs what the state says about a finding's subject
// (PM_STRESS_DEBUG=1): its record and its events, and the supervisor's log.
func (tr *trial) explain(finding string) {
	_, rest, _ := strings.Cut(finding, " ")
	subject, _, _ := strings.Cut(rest, ":")
	rec, _ := os.ReadFile(filepath.Join(tr.home, "agents", subject, "agent.json"))
	tr.t.Logf("  record: %s", rec)
	evs, _ := os.ReadFile(filepath.Join(tr.home, "events.jsonl"))
	for _, l := range strings.Split(string(evs), "\n") {
		if strings.Contains(l, subject) || strings.Contains(l, `"task.`) {
			tr.t.Logf("  event: %s", l)
		}
	}
	log, _ := os.ReadFile(filepath.Join(tr.home, "logs", "supervisor.log"))
	tr.t.Logf("  supervisor.log:\n%s", log)
}

// cleanup ends whatever the trial left running.
func (tr *trial) cleanup() {
	for _, pid := range tr.ours() {
		_ = syscall.Kill(pid, syscall.SIGKILL)
	}
}

func envInt(k string, def int) int {
	if n, err := strconv.Atoi(os.Getenv(k)); err == nil && n > 0 {
		return n
	}
	return def
}

func envOr(k, def string) string {
	if v := os.Getenv(k); v != "" {
		return v
	}
	return def
}

package main_test

import (
	"bufio"
	"bytes"
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"
)

// TestAcknowledgedSaysSurviveKill9 races many `pm say` processes against a
// phase while killing a random half of them with SIGKILL at random moments.
// Every say that exited 0 must have its message in messages.jsonl, the log
// must stay readable (at most the killed writers' torn lines, each reported
// and skipped), and the phase must still close at exactly its limit.
func TestAcknowledgedSaysSurviveKill9(t *testing.T) {
	work := t.TempDir()
	env := append(os.Environ(), "PM_HOME="+filepath.Join(work, ".plasmodium"), "PM_AGENT=", "PM_NO_SUPERVISOR=1", "GORACE=atexit_sleep_ms=0")
	pm := func(args ...string) (string, error) {
		cmd := exec.Command(pmBin, args...)
		cmd.Dir, cmd.Env = work, env
		out, err := cmd.Output()
		return string(out), err
	}
	mustRun := func(args ...string) string {
		t.Helper()
		out, err := pm(args...)
		if err != nil {
			t.Fatalf("pm %v: %v", args, err)
		}
		return out
	}
	mustRun("init")
	var task struct{ ID, Owner string }
	if err := json.Unmarshal([]byte(mustRun("task", "kill -9 stress", "--runtime", "none", "--json")), &task); err != nil {
		t.Fatal(err)
	}
	const limit = 40
	mustRun("phase", "Stress", "--limit", "40", "--task", task.ID)
	var ph struct{ Phases []struct{ ID string } }
	if err := json.Unmarshal([]byte(mustRun("status", task.ID, "--json")), &ph); err != nil || len(ph.Phases) != 1 {
		t.Fatalf("status: %v %+v", err, ph)
	}
	phaseID := ph.Phases[0].ID

	var mu sync.Mutex
	acked := map[string]bool{} // msg ids of says that exited 0
	rng := rand.New(rand.NewPCG(1, 2))
	var wg sync.WaitGroup
	for i := range 80 { // twice the limit: the room fills while half are being killed
		delay := time.Duration(rng.IntN(4000)) * time.Microsecond
		kill := i%2 == 0
		wg.Go(func() {
			cmd := exec.Command(pmBin, "say", strings.Repeat("x", 200), "--phase", phaseID)
			cmd.Dir, cmd.Env = work, env
			var out bytes.Buffer
			cmd.Stdout = &out
			if err := cmd.Start(); err != nil {
				t.Error(err)
				return
			}
			if kill {
				time.Sleep(delay)
				_ = cmd.Process.Signal(syscall.SIGKILL)
			}
			if cmd.Wait() == nil {
				id := strings.TrimSpace(strings.SplitN(out.String(), "\n", 2)[0])
				mu.Lock()
				acked[id] = true
				mu.Unlock()
			}
		})
	}
	wg.Wait()

	data, err := os.ReadFile(filepath.Join(work, ".plasmodium", "tasks", task.ID, "phases", phaseID, "messages.jsonl"))
	if err != nil {
		t.Fatal(err)
	}
	have := map[string]bool{}
	valid := 0
	sc := bufio.NewScanner(bytes.NewReader(data))
	for sc.Scan() {
		var m struct{ ID string }
		if json.Unmarshal(sc.Bytes(), &m) == nil && m.ID != "" {
			have[m.ID] = true
			valid++
		}
	}
	for id := range acked {
		if !have[id] {
			t.Errorf("acknowledged message %s is missing", id)
		}
	}
	if valid > limit {
		t.Errorf("%d messages in a phase limited to %d", valid, limit)
	}
	// The room still works and closes at exactly its limit.
	for valid < limit {
		if _, err := pm("say", "filler", "--phase", phaseID); err != nil {
			t.Fatalf("say after the kills: %v", err)
		}
		valid++
	}
	if _, err := pm("say", "one too many", "--phase", phaseID); err == nil {
		t.Fatal("a say past the limit succeeded")
	} else if ee, ok := err.(*exec.ExitError); !ok || ee.ExitCode() != 5 {
		t.Fatalf("say past the limit: %v, want exit 5", err)
	}
	t.Logf("%d says acknowledged, all present; phase filled to %d", len(acked), limit)
}

// TestRoomsSettleAfterKill9 kills the real pm with SIGKILL at a random moment
// (not at a chosen point: wherever the signal lands) in the commands that
// leave a room half-done: the say that fills a limit-3 room, pm kill of a
// task with an open room, pm phase opening a room with two roles (exec
// role agents that sleep), and pm done between its mark and unblocking its
// dependant. After each, one reader runs (pm status of the task, which is
// what a person does) and the records must hold nothing stranded
// (crashHome.stranded: no full or ended room open, no role of an open room
// missing or never started, no dependant blocked by a done task), and a
// pm chat --follow of a full room must end (issue 21 items 1, 2, 4, 8).
// PM_KILL9_TRIALS sets the number of trials (default 24, 8 with -short) and
// PM_KILL9_SECONDS their time bound (default 120 s); make stress runs more.
func TestRoomsSettleAfterKill9(t *testing.T) {
	trials, budget := 24, 120*time.Second
	if testing.Short() {
		trials = 8
	}
	if v, err := strconv.Atoi(os.Getenv("PM_KILL9_TRIALS")); err == nil {
		trials = v
	}
	if v, err := strconv.Atoi(os.Getenv("PM_KILL9_SECONDS")); err == nil {
		budget = time.Duration(v) * time.Second
	}
	type kind struct {
		name  string
		setup func(h *crashHome)
		cmd   func(h *crashHome) []string
		check func(h *crashHome) string // one reader, then a violation or ""
		after func(h *crashHome)
	}
	statusOf := func(name string) func(h *crashHome) string {
		return func(h *crashHome) string {
			if _, errs, code := h.run(nil, "status", h.ids[name], "--json"); code != 0 {
				return fmt.Sprintf("pm status: exit %d: %s", code, errs)
			}
			return ""
		}
	}
	kinds := []kind{{
		name: "say fills the room", setup: roomSetup,
		cmd: func(h *crashHome) []string { return []string{"say", "three", "--phase", h.ids["PH"]} },
		check: func(h *crashHome) string {
			if h.messages(h.ids["T"], h.ids["PH"]) < 3 {
				return statusOf("T")(h)
			}
			if code, hung := h.runBounded("chat", "--follow", "--phase", h.ids["PH"]); hung || code != 0 {
				return fmt.Sprintf("chat --follow of the full room: exit %d, hung %v", code, hung)
			}
			return ""
		},
	}, {
		name: "kill with an open room",
		setup: func(h *crashHome) {
			h.newTask("T", "task", "to kill", "--runtime", "none")
			h.must("phase", "Talk", "--limit", "5", "--task", h.ids["T"])
		},
		cmd:   func(h *crashHome) []string { return []string{"kill", h.ids["T"]} },
		check: statusOf("T"),
	}, {
		name: "phase opens its roles", setup: rolesSetup,
		cmd:   func(h *crashHome) []string { return append(slices.Clone(rolesPhase), "--task", h.ids["T"]) },
		check: statusOf("T"), after: endRoles,
	}, {
		name: "done unblocks its dependant",
		setup: func(h *crashHome) {
			h.newTask("B", "task", "blocker", "--runtime", "none")
			h.newTask("D", "task", "dependant", "--runtime", "none", "--blocked-by", h.ids["B"])
		},
		cmd:   func(h *crashHome) []string { return []string{"done", "--task", h.ids["B"]} },
		check: statusOf("D"),
	}}
	bases := make([]*crashHome, len(kinds))
	spans := make([]time.Duration, len(kinds)) // how long each command runs unkilled
	for i, k := range kinds {
		h := newCrashHome(t, t.TempDir())
		h.must("init")
		k.setup(h)
		bases[i] = h
		c := newCrashHome(t, t.TempDir())
		copyTree(t, h.dir, c.dir)
		c.ids = h.ids
		start := time.Now()
		if _, errs, code := c.run(nil, k.cmd(c)...); code != 0 {
			t.Fatalf("%s: exit %d: %s", k.name, code, errs)
		}
		spans[i] = time.Since(start)
		if k.after != nil {
			k.after(c)
		}
	}
	rng := rand.New(rand.NewPCG(21, 1))
	deadline := time.Now().Add(budget)
	ran, killed, stranded := 0, 0, 0
	for ; ran < trials && time.Now().Before(deadline); ran++ {
		i := ran % len(kinds)
		k, base := kinds[i], bases[i]
		h := newCrashHome(t, t.TempDir())
		copyTree(t, base.dir, h.dir)
		h.ids = base.ids
		cmd := exec.Command(pmBin, k.cmd(h)...)
		cmd.Dir, cmd.Env = h.dir, slices.Clone(h.base)
		if err := cmd.Start(); err != nil {
			t.Fatal(err)
		}
		// The moment of the kill is the trial's random input, not a wait
		// for something to happen: anywhere from before main to a little
		// past the time the command took unkilled.
		time.Sleep(time.Duration(rng.Int64N(int64(spans[i]) * 5 / 4)))
		_ = cmd.Process.Signal(syscall.SIGKILL)
		if err := cmd.Wait(); err != nil {
			killed++
		}
		var bad []string
		if v := k.check(h); v != "" {
			bad = append(bad, v)
		}
		bad = append(bad, h.stranded()...)
		if k.after != nil {
			k.after(h)
		}
		if len(bad) > 0 {
			stranded++
			t.Errorf("%s, trial %d: %s", k.name, ran, strings.Join(bad, "; "))
		}
	}
	t.Logf("%d trials, %d killed before they finished, %d stranded", ran, killed, stranded)
}

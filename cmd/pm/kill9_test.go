package main_test

import (
	"bufio"
	"bytes"
	"encoding/json"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
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

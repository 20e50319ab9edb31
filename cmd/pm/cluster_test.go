package main_test

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/plasmodium/pm/internal/hub/hubtest"
	"github.com/plasmodium/pm/internal/natsx"
	"github.com/plasmodium/pm/internal/natsx/room"
	"github.com/plasmodium/pm/internal/state/natsstate"
	"github.com/plasmodium/pm/internal/store"
)

// sayBound is how long one pm-full process may take before the test
// calls it hung: far past a leader election (seconds), so only a process
// that waits without end reaches it. It is no speed assertion.
const sayBound = 90 * time.Second

// machine is one "machine" of a hub project: its own project directory,
// joined to the project, whose store.url names its own node first.
type machine struct {
	dir, home string
}

// run runs the real pm-full in m's directory, bounded by sayBound. code is
// its exit code (-1: it had to be killed).
func (m machine) run(ctx context.Context, args ...string) (stdout, stderr string, code int) {
	ctx, cancel := context.WithTimeout(ctx, sayBound)
	defer cancel()
	cmd := exec.CommandContext(ctx, filepath.Join(filepath.Dir(pmBin), "pm-full"), args...)
	cmd.Dir = m.dir
	cmd.Env = []string{"PATH=" + filepath.Dir(pmBin) + string(os.PathListSeparator) + os.Getenv("PATH"),
		"HOME=" + m.home, "PM_NO_SUPERVISOR=1", "GORACE=atexit_sleep_ms=0"}
	var out, errb bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errb
	err := cmd.Run()
	var ee *exec.ExitError
	switch {
	case ctx.Err() != nil:
		code = -1
	case errors.As(err, &ee):
		code = ee.ExitCode()
	case err != nil:
		code = -1
		errb.WriteString(err.Error())
	}
	return out.String(), errb.String(), code
}

func (m machine) must(t *testing.T, args ...string) string {
	t.Helper()
	out, errOut, code := m.run(context.Background(), args...)
	if code != 0 {
		t.Fatalf("pm %s (in %s): exit %d\n%s", strings.Join(args, " "), m.dir, code, errOut)
	}
	return out
}

// hubMachines makes a project on the cluster from machine 0 and joins it
// from the others: machine i lists node i first in store.url, so its
// processes connect there (natsx.Connect keeps the order) and move to the
// others only when it is gone.
func hubMachines(t *testing.T, h *hubtest.Hubs) ([]machine, string) {
	t.Helper()
	var ms []machine
	var project string
	for i := range h.Len() {
		urls := []string{h.URL(i)}
		for j := range h.Len() {
			if j != i {
				urls = append(urls, h.URL(j))
			}
		}
		m := machine{dir: t.TempDir(), home: t.TempDir()}
		if i == 0 {
			m.must(t, "init", "--store", strings.Join(urls, ","))
			project = strings.TrimSpace(m.must(t, "config", "get", "store.project"))
		} else {
			m.must(t, "init", "--store", strings.Join(urls, ","), "--project", project)
		}
		ms = append(ms, m)
	}
	return ms, project
}

// openRoom makes a task and a room with limit in it, from m; it returns
// the room's phase id and its subject's name in the rooms' stream.
func openRoom(t *testing.T, m machine, title string, limit int) (phaseID, roomName string) {
	t.Helper()
	var task struct{ ID string }
	if err := json.Unmarshal([]byte(m.must(t, "task", title, "--runtime", "none", "--json")), &task); err != nil {
		t.Fatal(err)
	}
	var ph struct{ ID string }
	if err := json.Unmarshal([]byte(m.must(t, "phase", title, "--task", task.ID, "--limit", fmt.Sprint(limit), "--json")), &ph); err != nil {
		t.Fatal(err)
	}
	return ph.ID, task.ID + "." + ph.ID
}

// streamLeader is the index of the node leading stream, from the stream's
// info as c's node reports it.
func streamLeader(t *testing.T, h *hubtest.Hubs, c *natsx.Conn, stream string) int {
	t.Helper()
	ctx, cancel := natsx.Op(context.Background())
	defer cancel()
	s, err := c.JS.Stream(ctx, stream)
	if err != nil {
		t.Fatal(err)
	}
	info, err := s.Info(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if info.Cluster == nil {
		t.Fatalf("stream %s has no cluster info", stream)
	}
	for i, n := range h.Nodes {
		if n != nil && n.Name() == info.Cluster.Leader {
			return i
		}
	}
	t.Fatalf("stream %s: leader %q is none of the running nodes", stream, info.Cluster.Leader)
	return -1
}

var (
	tryLine      = regexp.MustCompile(`(?m)^Try: \S`)
	transientMsg = regexp.MustCompile(`context deadline exceeded|did not answer within|temporarily unavailable|no responders`)
)

// sayOutcome is one pm say process a writer ran.
type sayOutcome struct {
	text   string
	code   int
	stderr string
}

// TestClusterLeaderKilledMidRoom: three "machines" (project directories
// joined to one hub project, each connected to its own node of a
// three-node cluster) run writers that are real pm-full say processes,
// concurrently, into two rooms with a limit. When the first room is half
// full, the node leading the rooms' stream (read from the stream's info)
// is shut down. Every room ends with exactly its limit; every say
// succeeds (exit 0) until the room is full (exit 5), none fails while the
// cluster elects new leaders; every say that exited 0 is in its room
// exactly once; no message is stored twice; no process hangs. Then a second node
// is stopped (no majority): a say is refused with a clear error and a Try
// line, within its bound. The first node back, the rooms are intact.
func TestClusterLeaderKilledMidRoom(t *testing.T) {
	h := hubtest.Three(t)
	ms, project := hubMachines(t, h)
	names, err := natsx.ProjectNames(project)
	if err != nil {
		t.Fatal(err)
	}
	const limit, writersPerMachine = 24, 3
	type roomT struct{ phase, name string }
	rooms := make([]roomT, 2)
	for i := range rooms {
		rooms[i].phase, rooms[i].name = openRoom(t, ms[i], fmt.Sprintf("Room %d", i), limit)
	}

	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Minute)
	defer cancel()
	leader := streamLeader(t, h, h.Connect(0), names.Rooms)
	// The trigger follows the first room from a node that stays up, and
	// shuts the leader down once half the room is there.
	watcher := h.Connect((leader + 1) % 3)
	wr, err := room.OpenNamed(ctx, watcher, names.Rooms, names.RoomPrefix)
	if err != nil {
		t.Fatal(err)
	}
	stopped := make(chan string, 1)
	go func() {
		err := wr.Follow(ctx, rooms[0].name, limit/2-1, func(room.Message) error {
			h.Stop(leader)
			return natsx.ErrStop
		})
		if err != nil {
			stopped <- err.Error()
			return
		}
		stopped <- fmt.Sprintf("node n%d (the rooms' leader) shut down at index %d of %s", leader+1, limit/2, rooms[0].phase)
	}()

	var mu sync.Mutex
	outcomes := map[string][]sayOutcome{} // by phase
	var wg sync.WaitGroup
	for mi, m := range ms {
		for w := range writersPerMachine {
			r := rooms[(mi*writersPerMachine+w)%len(rooms)]
			wg.Add(1)
			go func() {
				defer wg.Done()
				// Bounded: a writer stops at the room's refusal, or after
				// twice the limit of says.
				for n := range 2 * limit {
					text := fmt.Sprintf("machine %d writer %d say %d", mi, w, n)
					_, errOut, code := m.run(ctx, "say", text, "--phase", r.phase)
					mu.Lock()
					outcomes[r.phase] = append(outcomes[r.phase], sayOutcome{text, code, errOut})
					mu.Unlock()
					if code == 5 || code == -1 {
						return
					}
				}
			}()
		}
	}
	wg.Wait()
	t.Log(<-stopped)

	// Read every room back from a node that stayed up.
	failed := 0
	rs, err := room.OpenNamed(ctx, watcher, names.Rooms, names.RoomPrefix)
	if err != nil {
		t.Fatal(err)
	}
	for _, r := range rooms {
		stored := map[string]int{} // text -> times stored
		ids := map[string]bool{}
		n := 0
		if err := rs.Read(ctx, r.name, func(m room.Message) error {
			var msg store.Message
			if err := json.Unmarshal(m.Data, &msg); err != nil {
				return err
			}
			if ids[m.ID] {
				t.Errorf("%s: message id %s stored twice", r.phase, m.ID)
			}
			ids[m.ID] = true
			stored[msg.Content]++
			n++
			return nil
		}); err != nil {
			t.Fatal(err)
		}
		if n != limit {
			t.Errorf("%s holds %d messages, want exactly %d", r.phase, n, limit)
		}
		acked, refused, failedStored := 0, 0, 0
		ran := map[string]bool{}
		for _, o := range outcomes[r.phase] {
			ran[o.text] = true
			switch o.code {
			case 0:
				acked++
				if stored[o.text] != 1 {
					t.Errorf("%s: acknowledged say %q stored %d times", r.phase, o.text, stored[o.text])
				}
			case 5:
				refused++
			case -1:
				t.Errorf("%s: say %q hung (killed after %s): %s", r.phase, o.text, sayBound, o.stderr)
			case 1:
				// Every request of a say rides out the election (natsx.Do;
				// a write whose answer was lost is recognised as its own):
				// none may fail while a majority is up.
				failed++
				failedStored += stored[o.text]
				t.Errorf("%s: say %q failed during the leader change (stored %d times): %s", r.phase, o.text, stored[o.text], strings.TrimSpace(o.stderr))
			default:
				t.Errorf("%s: say %q: exit %d: %s", r.phase, o.text, o.code, o.stderr)
			}
		}
		for text, k := range stored {
			if k != 1 || !ran[text] {
				t.Errorf("%s: %q stored %d times (a say of this test: %v)", r.phase, text, k, ran[text])
			}
		}
		if acked != limit {
			t.Errorf("%s: %d says acknowledged (and %d failed ones stored), want exactly %d, the room's limit", r.phase, acked, failedStored, limit)
		}
		t.Logf("%s: %d says acknowledged, %d refused at the limit", r.phase, acked, refused)
	}
	t.Logf("%d says failed while the cluster changed leaders", failed)

	// No majority: a second node stops. A say from a machine is refused
	// with a Try line, within its bound.
	survivor := (leader + 1) % 3
	h.Stop((leader + 2) % 3)
	_, errOut, code := ms[survivor].run(ctx, "say", "no majority", "--phase", rooms[1].phase)
	if code != 1 || !tryLine.MatchString(errOut) || !transientMsg.MatchString(errOut) {
		t.Fatalf("say without a majority: exit %d, want a clear error with a Try line:\n%s", code, errOut)
	}
	t.Logf("without a majority: exit %d: %s", code, strings.TrimSpace(errOut))

	// A majority again (the old leader back, with its store): the cluster
	// serves again, and the rooms are as they were, closed at their limits.
	h.Start(leader)
	// The cluster serves again once it has a meta leader and every
	// running node is current: the servers' own state, watched with a
	// bound (like the scripts' waitfor), not a sleep.
	h.WaitCurrent(ctx, append(names.Streams(), natsx.KVStream(natsstate.ProjectsBucket))...)
	for _, r := range rooms {
		_, errOut, code := ms[leader].run(ctx, "say", "after the restart", "--phase", r.phase)
		if code != 5 {
			t.Errorf("say into %s after the restart: exit %d, want 5 (closed at its limit):\n%s", r.phase, code, errOut)
		}
		if n, err := rs.Count(ctx, r.name); err != nil || n != limit {
			t.Errorf("%s after the restart: %d messages (%v), want %d", r.phase, n, err, limit)
		}
	}
}

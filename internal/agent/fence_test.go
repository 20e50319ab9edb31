package agent

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/plasmodium/pm/internal/state"
	"github.com/plasmodium/pm/internal/state/fsstate"
	"github.com/plasmodium/pm/internal/store"
)

// leasedState is the files' state with a hub's leases (fakeLeases): what
// the host sees on a hub, without one.
type leasedState struct {
	state.State
	*fakeLeases
}

// A host whose lease is lost while its exec agent runs stops the agent at
// once (its process is gone, though it would have run a minute), ends
// with the fenced error, and writes no end to the agent's record (another
// host may own it by now).
func TestFencedHostStopsItsAgent(t *testing.T) {
	root, _, err := store.Init(t.TempDir(), time.Now)
	if err != nil {
		t.Fatal(err)
	}
	s, err := store.Open(root)
	if err != nil {
		t.Fatal(err)
	}
	// The agent holds a lock for its life, and says when it holds it.
	dir := t.TempDir()
	lock, held := filepath.Join(dir, "lock"), filepath.Join(dir, "held")
	if _, err := s.UpdateConfig(func(tree map[string]any) error {
		tree["runtime"] = map[string]any{"exec": map[string]any{
			"sandbox": false,
			"command": []any{"sh", "-c", "exec 9>>" + lock + " && flock -n 9 && touch " + held + " && exec sleep 60"},
		}}
		return nil
	}); err != nil {
		t.Fatal(err)
	}
	if s, err = store.Open(root); err != nil {
		t.Fatal(err)
	}
	fs := fsstate.New(s)
	a, err := New(s, fs, store.Agent{Prompt: "greeter", Runtime: "exec"})
	if err != nil {
		t.Fatal(err)
	}
	// Once the agent runs, the hub refuses the next renewal: the lease
	// was taken meanwhile.
	f := &fakeLeases{mu: &sync.Mutex{}, ttl: 3 * time.Second, renewed: make(chan struct{}, 1),
		lostWhen: func() bool { _, err := os.Stat(held); return err == nil }}
	st := leasedState{State: fs, fakeLeases: f}
	var logb bytes.Buffer
	err = Host(context.Background(), s, st, a.Name, os.Environ(), &logb, nil, nil, nil)
	if err == nil || !strings.Contains(err.Error(), "lost its lease") {
		t.Fatalf("Host = %v, want the fenced error; log:\n%s", err, logb.String())
	}
	if _, err := os.Stat(held); err != nil {
		t.Fatalf("the agent never ran: %v; log:\n%s", err, logb.String())
	}
	fd, err := syscall.Open(lock, syscall.O_RDONLY, 0)
	if err != nil {
		t.Fatal(err)
	}
	defer syscall.Close(fd)
	if err := syscall.Flock(fd, syscall.LOCK_EX|syscall.LOCK_NB); err != nil {
		t.Fatalf("the agent still holds its lock after its host was fenced: %v", err)
	}
	r, err := fs.Agent(a.Name)
	if err != nil {
		t.Fatal(err)
	}
	if r.Status != store.AgentRunning || r.EndedAt != nil {
		t.Fatalf("a fenced host recorded an end: status %s", r.Status)
	}
	if !strings.Contains(logb.String(), "fenced") {
		t.Fatalf("the log does not say it was fenced:\n%s", logb.String())
	}
}

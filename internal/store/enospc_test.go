//go:build linux

package store_test

import (
	"errors"
	"os"
	"syscall"
	"testing"

	"github.com/plasmodium/pm/internal/store"
	"github.com/plasmodium/pm/internal/store/storetest"
)

// A full disk while an agent's record is written leaves no agents/NAME/
// directory without a record (issue 21 item 8): agents/ is a tmpfs with
// room for its own inode, the agent's directory and its lock file, so the
// record's temporary file gets a real ENOSPC. Needs root to mount.
func TestAgentRecordOnFullDiskLeavesNoDirectory(t *testing.T) {
	if os.Geteuid() != 0 {
		t.Skip("mounting a tmpfs needs root")
	}
	for _, write := range []struct {
		name string
		fn   func(s *store.Store, a *store.Agent) error
	}{
		{"WriteAgent", func(s *store.Store, a *store.Agent) error { return s.WriteAgent(a) }},
		{"CreateAgent", func(s *store.Store, a *store.Agent) error { _, err := s.CreateAgent(a); return err }},
	} {
		t.Run(write.name, func(t *testing.T) {
			s := storetest.New(t)
			if err := os.MkdirAll(s.AgentsDir(), 0o755); err != nil {
				t.Fatal(err)
			}
			if err := syscall.Mount("tmpfs", s.AgentsDir(), "tmpfs", 0, "nr_inodes=3,size=64k"); err != nil {
				t.Skipf("mount tmpfs: %v", err)
			}
			t.Cleanup(func() { syscall.Unmount(s.AgentsDir(), syscall.MNT_DETACH) })
			err := write.fn(s, &store.Agent{Name: "oak_0001", Prompt: "owner", Status: store.AgentPending})
			if !errors.Is(err, syscall.ENOSPC) {
				t.Fatalf("write on a full disk = %v, want ENOSPC", err)
			}
			if _, err := os.Stat(s.AgentDir("oak_0001")); !os.IsNotExist(err) {
				ents, _ := os.ReadDir(s.AgentDir("oak_0001"))
				t.Fatalf("agents/oak_0001 left behind (%v) holding %d entries", err, len(ents))
			}
		})
	}
}

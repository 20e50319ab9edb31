// Package testproc runs copies of the current test binary as helper
// processes, for tests that need real concurrent processes (flock, O_APPEND)
// rather than goroutines.
package testproc

import (
	"context"
	"os"
	"os/exec"
	"testing"
	"time"
)

// Start runs n copies of this test binary's TestHelperProcess, copy i with
// env(i) added to the environment, and returns a function that waits for them
// all and fails the test if one failed. A 5-minute deadline guards against a
// hang; it is not a speed assertion.
func Start(t testing.TB, n int, env func(i int) []string) (wait func()) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	cmds := make([]*exec.Cmd, 0, n)
	for i := range n {
		cmd := exec.CommandContext(ctx, os.Args[0], "-test.run=^TestHelperProcess$", "-test.count=1")
		cmd.Env = append(os.Environ(), env(i)...)
		cmd.Stderr = os.Stderr
		if err := cmd.Start(); err != nil {
			cancel()
			t.Fatal(err)
		}
		cmds = append(cmds, cmd)
	}
	return func() {
		t.Helper()
		defer cancel()
		for _, c := range cmds {
			if err := c.Wait(); err != nil {
				t.Fatalf("helper process: %v", err)
			}
		}
	}
}

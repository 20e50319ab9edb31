package agent

import (
	"strings"
	"testing"

	"github.com/plasmodium/pm/internal/sandbox"
)

// An exec agent the config asks to sandbox is refused, never started
// unconfined, where the kernel offers no sandbox.
func TestSandboxRefusal(t *testing.T) {
	for _, c := range []struct {
		mode   sandbox.Mode
		refuse bool
	}{
		{sandbox.ModeLandlockNS, false},
		{sandbox.ModeLandlock, false},
		{sandbox.ModeNone, true},
	} {
		err := sandboxRefusal(c.mode, "no Landlock")
		if (err != nil) != c.refuse {
			t.Errorf("%s: %v", c.mode, err)
		}
		if err != nil && !strings.Contains(err.Error(), "not started") {
			t.Errorf("%s: %v", c.mode, err)
		}
	}
}

package main_test

import (
	"fmt"
	"os"

	"github.com/plasmodium/pm/internal/sandbox"
)

// scriptCondition answers the scripts' own conditions: [landlock] holds
// where the kernel offers Landlock, so run_command is confined; [root] when
// the tests run as root (whose capabilities read even a non-dumpable
// process's /proc/PID/environ); [mountns] where this process can start the
// sandbox helper in a mount namespace of its own (pm's processes must find
// the same).
func scriptCondition(cond string) (bool, error) {
	switch cond {
	case "landlock":
		return sandbox.ABI() > 0, nil
	case "mountns":
		return sandbox.Available() == sandbox.ModeLandlockNS, nil
	case "root":
		return os.Geteuid() == 0, nil
	}
	return false, fmt.Errorf("unknown condition %q", cond)
}

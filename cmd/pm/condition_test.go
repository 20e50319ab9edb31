package main_test

import (
	"fmt"

	"github.com/plasmodium/pm/internal/sandbox"
)

// scriptCondition answers the scripts' own conditions: [landlock] holds
// where the kernel offers Landlock, so run_command is confined.
func scriptCondition(cond string) (bool, error) {
	switch cond {
	case "landlock":
		return sandbox.ABI() > 0, nil
	}
	return false, fmt.Errorf("unknown condition %q", cond)
}

package watch

import (
	"errors"
	"fmt"
	"os"
	"syscall"
	"testing"
)

// Used-up inotify instances (EMFILE) or watches (ENOSPC, "no space left on
// device") come back as ErrLimit, naming the sysctls, with the cause kept;
// other errors pass as they are.
func TestExplainLimit(t *testing.T) {
	for _, c := range []struct {
		err   error
		limit bool
	}{
		{syscall.EMFILE, true},
		{fmt.Errorf("inotify_add_watch: %w", syscall.ENOSPC), true},
		{os.ErrNotExist, false},
		{nil, false},
	} {
		got := explain(c.err)
		if errors.Is(got, ErrLimit) != c.limit || (c.err != nil && !errors.Is(got, c.err)) || (c.err == nil && got != nil) {
			t.Errorf("explain(%v) = %v", c.err, got)
		}
	}
}

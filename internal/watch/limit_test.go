package watch

import (
	"context"
	"errors"
	"fmt"
	"os"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/plasmodium/pm/internal/errs"
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

// A waiting command that cannot watch says which limit to raise: the
// inotify sysctls, not the open-files limit (ulimit -n) that the bare EMFILE
// would suggest.
func TestLimitTry(t *testing.T) {
	for _, cause := range []error{syscall.EMFILE, syscall.ENOSPC} {
		err := explain(cause)
		try := errs.TryOf(err)
		if !strings.Contains(try, "fs.inotify.max_user_instances") || !strings.Contains(try, "fs.inotify.max_user_watches") || strings.Contains(try, "ulimit") {
			t.Errorf("explain(%v): Try %q", cause, try)
		}
		if errs.CodeOf(err) != errs.Failure {
			t.Errorf("explain(%v): exit %d", cause, errs.CodeOf(err))
		}
	}
}

// With inotify used up, UntilOrPoll falls back to checking on a timer,
// says so once, and still ends when check does.
func TestUntilOrPollFallsBack(t *testing.T) {
	n := 0
	var said []error
	until := func(ctx context.Context, dirs func() []string, check func() (bool, error)) error {
		return explain(syscall.EMFILE)
	}
	err := UntilOrPollWith(context.Background(), until, nil, func() (bool, error) {
		n++
		return n == 3, nil
	}, time.Millisecond, func(err error) { said = append(said, err) })
	if err != nil || n != 3 {
		t.Fatalf("UntilOrPollWith = %v after %d checks", err, n)
	}
	if len(said) != 1 || !errors.Is(said[0], ErrLimit) {
		t.Fatalf("degraded reported %v", said)
	}
	// Any other error is returned as it is.
	boom := errors.New("boom")
	err = UntilOrPollWith(context.Background(), func(context.Context, func() []string, func() (bool, error)) error { return boom }, nil,
		func() (bool, error) { return false, nil }, time.Millisecond, func(error) { t.Fatal("degraded on another error") })
	if err != boom {
		t.Fatalf("UntilOrPollWith = %v, want boom", err)
	}
}

// Polling lasts only while inotify is used up: each period it tries to
// watch again, and once its watches are in place it says so (degraded(nil),
// once a call) and waits on file events.
func TestUntilOrPollReturnsToWatching(t *testing.T) {
	tries, checks := 0, 0
	var said []error
	until := func(ctx context.Context, dirs func() []string, check func() (bool, error)) error {
		tries++
		if tries <= 2 {
			return explain(syscall.EMFILE)
		}
		for { // watching: the watches are in place, each check follows an event
			if done, err := check(); done || err != nil {
				return err
			}
		}
	}
	err := UntilOrPollWith(context.Background(), until, nil, func() (bool, error) {
		checks++
		return checks == 5, nil
	}, time.Millisecond, func(err error) { said = append(said, err) })
	if err != nil || tries != 3 {
		t.Fatalf("UntilOrPollWith = %v after %d tries to watch, want 3", err, tries)
	}
	if len(said) != 2 || !errors.Is(said[0], ErrLimit) || said[1] != nil {
		t.Fatalf("degraded reported %v, want the limit once, then nil once watching again", said)
	}
}

// A call that watches at once says so too: a caller that polled in an
// earlier call (the supervisor's bus follower waits once per batch of
// events) learns it watches again.
func TestUntilOrPollSaysWatching(t *testing.T) {
	var said []error
	until := func(ctx context.Context, dirs func() []string, check func() (bool, error)) error {
		_, err := check()
		return err
	}
	if err := UntilOrPollWith(context.Background(), until, nil, func() (bool, error) { return true, nil },
		time.Millisecond, func(err error) { said = append(said, err) }); err != nil {
		t.Fatal(err)
	}
	if len(said) != 1 || said[0] != nil {
		t.Fatalf("degraded reported %v, want nil once", said)
	}
}

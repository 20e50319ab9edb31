package task

import (
	"context"
	"errors"
	"time"

	"github.com/plasmodium/pm/internal/errs"
	"github.com/plasmodium/pm/internal/store"
)

// WaitChildren blocks until every subtask of taskID is done (or killed),
// woken by file events on the children's directories, never a sleep loop.
// timeout <= 0 waits for as long as ctx allows.
func WaitChildren(ctx context.Context, s *store.Store, taskID string, timeout time.Duration) ([]*store.Task, error) {
	if _, err := s.Task(taskID); err != nil {
		return nil, err
	}
	if timeout > 0 {
		var cancel context.CancelFunc
		ctx, cancel = context.WithTimeout(ctx, timeout)
		defer cancel()
	}
	var children []*store.Task
	check := func() (bool, error) {
		_, kids, err := s.Children(taskID)
		if err != nil {
			return false, err
		}
		children = children[:0]
		finished := true
		for _, ct := range kids {
			children = append(children, ct)
			if ct.Status != store.TaskDone && ct.Status != store.TaskKilled {
				finished = false
			}
		}
		return finished, nil
	}
	err := s.WatchTask(ctx, taskID, check)
	if errors.Is(err, context.DeadlineExceeded) {
		left := 0
		for _, c := range children {
			if c.Status != store.TaskDone && c.Status != store.TaskKilled {
				left++
			}
		}
		return children, errs.Timeoutf("wait again, or look at them with 'pm status'", "%d of %d subtasks still not done after %s", left, len(children), timeout)
	}
	return children, err
}

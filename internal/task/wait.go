package task

import (
	"context"
	"errors"
	"time"

	"github.com/plasmodium/pm/internal/errs"
	"github.com/plasmodium/pm/internal/state"
	"github.com/plasmodium/pm/internal/store"
)

// WaitChildren blocks until every subtask of taskID is done (or killed),
// woken by the state's watch on the task and its children (Scope.Task),
// never a sleep loop.
// timeout <= 0 waits for as long as ctx allows.
func WaitChildren(ctx context.Context, st state.State, taskID string, timeout time.Duration) ([]*store.Task, error) {
	if _, err := st.Task(taskID); err != nil {
		return nil, err
	}
	if timeout > 0 {
		var cancel context.CancelFunc
		ctx, cancel = context.WithTimeout(ctx, timeout)
		defer cancel()
	}
	var children []*store.Task
	check := func() (bool, error) {
		_, kids, err := childrenOf(st, taskID)
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
	err := st.Watch(ctx, state.Scope{Task: taskID}, check)
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

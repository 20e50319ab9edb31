package supervisor

import (
	"sync"

	"github.com/plasmodium/pm/internal/task"
)

// spareMaker makes a spare checkout ahead of the next task's worktree
// (task.PrepareSpare) off every command's path: one at a time, again when
// asked while one runs (a task created meanwhile may have taken it).
type spareMaker struct {
	mu      sync.Mutex
	running bool
	again   bool
	wg      sync.WaitGroup
}

// prepareSpare asks for a spare: at the supervisor's start and after each
// agent.started (a spare there already costs one read).
func (sv *Supervisor) prepareSpare() {
	if sv.Launcher == nil {
		return
	}
	m := &sv.spare
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.running {
		m.again = true
		return
	}
	m.running = true
	m.wg.Add(1)
	go func() {
		defer m.wg.Done()
		for {
			if err := task.PrepareSpare(sv.Store, sv.records()); err != nil {
				sv.Log.Warn("spare worktree", "err", err)
			}
			m.mu.Lock()
			if !m.again {
				m.running = false
				m.mu.Unlock()
				return
			}
			m.again = false
			m.mu.Unlock()
		}
	}()
}

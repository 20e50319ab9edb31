package task_test

import (
	"testing"

	"github.com/plasmodium/pm/internal/crashpoint"
	"github.com/plasmodium/pm/internal/phase"
	"github.com/plasmodium/pm/internal/store"
	"github.com/plasmodium/pm/internal/task"
)

// A phase whose opening checked the task active before pm kill marked it,
// and is written after, must still be closed by that kill (issue 8 item 10).
// The hooks force the interleaving: the opener stops after its check until
// the kill has marked the task.
func TestKillClosesPhaseOpenedDuringKill(t *testing.T) {
	e := newEnv(t)
	tk := e.create(t, task.Spec{Description: "racing a phase"})
	marked := make(chan struct{})
	killed := make(chan error, 1)
	remove := crashpoint.SetHook(func(name string) {
		switch name {
		case "phase.built":
			go func() {
				_, err := task.Kill(e.s, e.l, store.Human, tk.ID, false)
				killed <- err
			}()
			<-marked
		case "task.kill.marked":
			close(marked)
		}
	})
	ph, err := phase.Create(e.s, store.Human, phase.Spec{TaskID: tk.ID, Name: "P", Limit: 3})
	if err != nil {
		remove()
		t.Fatal(err)
	}
	err = <-killed
	remove()
	if err != nil {
		t.Fatal(err)
	}
	got, err := e.s.Phase(tk.ID, ph.ID)
	if err != nil {
		t.Fatal(err)
	}
	if got.Status != store.PhaseClosed || got.CloseReason != store.CloseKilled {
		t.Fatalf("phase of the killed task = %s (%s), want closed by the kill", got.Status, got.CloseReason)
	}
}

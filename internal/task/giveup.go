package task

import (
	"fmt"

	"github.com/plasmodium/pm/internal/phase"
	"github.com/plasmodium/pm/internal/request"
	"github.com/plasmodium/pm/internal/state"
	"github.com/plasmodium/pm/internal/store"
)

// GiveUpOwner cleans up after an owner that was given up on (an exec owner
// that kept ending its turn without pm done, or went over a budget): its
// task's open room closes, so its role agents leave rather than talk where
// nobody owns, and the human is asked what to do, in a request about the
// owner (request.CreateAbout). The task stays active: answering the request
// resumes the owner with the answer (Resume), pm kill ID --restart starts a
// fresh one, and either makes the request moot or answered.
func GiveUpOwner(s *store.Store, st state.State, a *store.Agent, reason string) error {
	actor := store.Actor{Name: "pm", Agent: &store.Agent{Name: "pm", TaskID: a.TaskID}}
	closeErr := phase.CloseActive(s, st, actor, a.TaskID, store.CloseOwnerFailed)
	text := fmt.Sprintf("Owner @%s of task %s %s. See pm logs %s. Answer to resume it with your words "+
		"(e.g. \"try again\"; \"no\" leaves it stopped), or restart it with pm kill %s --restart.",
		a.Name, a.TaskID, reason, a.Name, a.TaskID)
	if _, err := request.CreateAbout(s, st, actor, a.Name, text); err != nil {
		return err
	}
	return closeErr
}

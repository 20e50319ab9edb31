package task

import (
	"fmt"

	"github.com/plasmodium/pm/internal/inbox"
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

// TellStopped tells whoever must act that agent a stopped for good (text
// says who and why: "@NAME stopped: ..."): its task's owner, in its
// mailbox, when a is one of the task's role agents (the owner decides what
// the room does without it), and the human, in theirs. It is how a role's
// stop by governance (a budget, the loop breaker's stop) reaches its
// owner, whatever the role's runtime. Best effort: a mailbox that cannot
// be written loses the notice, not the stop.
func TellStopped(s *store.Store, st state.State, a *store.Agent, text string) {
	if a.TaskID != "" {
		if t, err := st.Task(a.TaskID); err == nil && t.Owner != a.Name {
			_, _ = inbox.Send(s, st, inbox.Message{Kind: inbox.KindNotice, From: a.Name, To: t.Owner, TaskID: t.ID, Text: text})
		}
	}
	_, _ = inbox.Send(s, st, inbox.Message{Kind: inbox.KindNotice, From: a.Name, To: "human", TaskID: a.TaskID, Text: text})
}

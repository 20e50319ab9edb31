package task

import (
	"fmt"
	"strings"

	"github.com/plasmodium/pm/internal/agent"
	"github.com/plasmodium/pm/internal/errs"
	"github.com/plasmodium/pm/internal/store"
)

// Resume acts on the human's answer to r, a request pm filed when it gave up
// on agent r.Agent (GiveUpOwner, the supervisor's crash loop): an owner that
// is still stopped and still its active task's owner runs again with the
// answer as its first words (agent.Launcher.Resume); an answer of "no" (or
// "stop") leaves it stopped. It returns what it did, in words for the
// person who answered; nothing is started otherwise, and the words say why.
func Resume(s *store.Store, l *agent.Launcher, r *store.Request) (string, error) {
	st := l.State
	if r.Agent == "" {
		return "@" + r.From + " resumes", nil // an agent's own question: it waits for the answer
	}
	switch strings.ToLower(strings.TrimSpace(r.Answer)) {
	case "n", "no", "stop":
		return fmt.Sprintf("@%s stays stopped; pm kill %s --restart gives the task a fresh owner, pm kill %s ends it", r.Agent, r.TaskID, r.TaskID), nil
	}
	a, err := st.Agent(r.Agent)
	if err != nil {
		return "nothing resumed: " + err.Error(), nil
	}
	if !a.IsOwner() || a.TaskID == "" {
		return fmt.Sprintf("nothing resumed: @%s is not a task's owner; pm kill %s --restart runs its task again", a.Name, a.TaskID), nil
	}
	_, err = l.Resume(a.Name, r.ID, func(cur *store.Agent) error {
		t, err := st.Task(cur.TaskID)
		switch {
		case err != nil:
			return err
		case t.Status != store.TaskActive:
			return errs.Statef("", "task %s is %s", t.ID, t.Status)
		case t.Owner != cur.Name:
			return errs.Statef("", "@%s is no longer the owner of %s (@%s is)", cur.Name, t.ID, t.Owner)
		}
		return nil
	})
	if err != nil {
		if errs.Is(err, errs.State) {
			return "nothing resumed: " + err.Error(), nil
		}
		return "", err
	}
	return fmt.Sprintf("owner @%s of %s resumed with your answer", a.Name, a.TaskID), nil
}

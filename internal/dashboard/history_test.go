package dashboard

import (
	"testing"

	"github.com/chromedp/chromedp"

	"github.com/plasmodium/pm/internal/config"
	"github.com/plasmodium/pm/internal/ops"
	"github.com/plasmodium/pm/internal/store"
)

// History (issue 25): a finished task opens, from the tree ("Show N finished
// tasks") and at its own URL (#/task/tk-…), with its messages and its
// agents' logs, where an exec agent's output is.
func TestBrowserHistory(t *testing.T) {
	ctx := browser(t)
	r := newRig(t, nil)
	tk, err := ops.CreateTask(t.Context(), r.sess, ops.TaskInput{Description: "an old job", Runtime: config.RuntimeNone})
	if err != nil {
		t.Fatal(err)
	}
	opened, err := ops.OpenPhase(t.Context(), r.sess, ops.PhaseInput{Task: tk.ID, Name: "Plan", Limit: 10, Roles: []string{"designer"}})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := ops.Say(t.Context(), r.sess, ops.SayInput{Phase: opened.Phase.ID, Message: "said long ago"}); err != nil {
		t.Fatal(err)
	}
	logf, err := r.s.OpenLog(tk.Owner) // what an exec agent's CLI printed
	if err != nil {
		t.Fatal(err)
	}
	if _, err := logf.WriteString("exec output: built index.html\n"); err != nil {
		t.Fatal(err)
	}
	logf.Close()
	owner, err := r.s.Agent(tk.Owner)
	if err != nil {
		t.Fatal(err)
	}
	asOwner := *r.sess
	asOwner.Actor = store.Actor{Name: owner.Name, Agent: owner}
	if _, err := ops.Done(t.Context(), &asOwner, ops.DoneInput{Task: tk.ID}); err != nil {
		t.Fatal(err)
	}

	t.Run("at its URL", func(t *testing.T) {
		if err := chromedp.Do(ctx, chromedp.Navigate(r.srv.URL()+"#/task/"+tk.ID)); err != nil {
			t.Fatal(err)
		}
		waitText(ctx, t, `#detail-box`, "an old job")
		waitText(ctx, t, `#detail-box [data-detail-phase="`+opened.Phase.ID+`"]`, "said long ago")
		waitText(ctx, t, `#detail-box [data-agent-log="`+tk.Owner+`"]`, "exec output: built index.html")
	})

	t.Run("from the tree", func(t *testing.T) {
		if err := chromedp.Do(ctx, chromedp.Navigate(r.srv.URL())); err != nil {
			t.Fatal(err)
		}
		waitText(ctx, t, "#conn", "live")
		waitText(ctx, t, `[data-act="show-finished"]`, "Show 1 finished task")
		click(ctx, t, `[data-act="show-finished"]`)
		click(ctx, t, `[data-task="`+tk.ID+`"] [data-open-task]`)
		waitText(ctx, t, `#detail-box`, "said long ago")
		hash, err := chromedp.Run(ctx, chromedp.Evaluate[string](`location.hash`))
		if err != nil || hash != "#/task/"+tk.ID {
			t.Fatalf("the open task's URL ends %q (%v), want #/task/%s", hash, err, tk.ID)
		}
	})
}

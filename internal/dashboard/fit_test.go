package dashboard

import (
	"fmt"
	"strings"
	"testing"

	"github.com/chromedp/chromedp"

	"github.com/plasmodium/pm/internal/agent"
	"github.com/plasmodium/pm/internal/config"
	"github.com/plasmodium/pm/internal/ops"
	"github.com/plasmodium/pm/internal/state/fsstate"
	"github.com/plasmodium/pm/internal/store"
)

// The page fits a phone (420 px) and a desktop (1400 px) with no sideways
// scroll, the task detail open too (issue 25); an exec agent whose CLI
// reports no usage shows unknown, not 0. (TestBrowserRedesign checks the
// same on a fuller page and saves the screenshots.)
func TestBrowserFits(t *testing.T) {
	ctx := browser(t)
	r := newRig(t, nil)
	long := strings.Repeat("a-long-unbroken-identifier-", 8)
	tk, err := ops.CreateTask(t.Context(), r.sess, ops.TaskInput{Description: "build the landing page " + long, Runtime: config.RuntimeNone})
	if err != nil {
		t.Fatal(err)
	}
	opened, err := ops.OpenPhase(t.Context(), r.sess, ops.PhaseInput{Task: tk.ID, Name: "Design", Limit: 20, Roles: []string{"designer", "developer"}, Rules: "ideas only"})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := ops.Say(t.Context(), r.sess, ops.SayInput{Phase: opened.Phase.ID, Message: "what about " + long}); err != nil {
		t.Fatal(err)
	}
	ex, err := agent.New(r.s, fsstate.New(r.s), store.Agent{Prompt: "developer", Runtime: config.RuntimeExec, TaskID: tk.ID})
	if err != nil {
		t.Fatal(err)
	}
	for _, w := range []int{420, 1400} {
		t.Run(fmt.Sprint(w), func(t *testing.T) {
			if err := chromedp.Do(ctx, chromedp.EmulateViewport(int64(w), 900)); err != nil {
				t.Fatal(err)
			}
			if err := chromedp.Do(ctx, chromedp.Navigate(r.srv.URL()+"#/task/"+tk.ID)); err != nil {
				t.Fatal(err)
			}
			waitText(ctx, t, "#conn", "live")
			waitText(ctx, t, `#detail-box`, "Design")
			waitText(ctx, t, `[data-usage-agent="`+ex.Name+`"]`, "unknown")
			// Usage is shown once: the open task's agents in its detail, not
			// again in the Usage table, which says where they are (issue 25).
			if _, err := chromedp.Run(ctx, chromedp.Evaluate[bool](`document.querySelector("#usage-box details").open = true`)); err != nil {
				t.Fatal(err) // the usage table is drawn while unfolded
			}
			waitText(ctx, t, `#usage tr.elsewhere`, "its agents' usage is in its detail above")
			for _, a := range []string{ex.Name, tk.Owner} {
				n, err := chromedp.Run(ctx, chromedp.Evaluate[int](`document.querySelectorAll('[data-usage-agent="`+a+`"]').length`))
				if err != nil || n != 1 {
					t.Fatalf("@%s's usage is on the page %d times (%v), want once", a, n, err)
				}
			}
			// The capability bar is one compact line: the prompt objects, the
			// primitives folded away until asked for.
			waitText(ctx, t, "#capabilities", "greeter")
			bar, err := chromedp.Run(ctx, chromedp.Evaluate[int](`Math.round(document.getElementById("capabilities-box").getBoundingClientRect().height)`))
			if err != nil || bar > 90 {
				t.Fatalf("the capability bar is %d px tall (%v), want at most 90", bar, err)
			}
			shown, err := chromedp.Run(ctx, chromedp.Evaluate[int](`[...document.querySelectorAll("#capabilities .chip.primitive")].filter((e) => e.getClientRects().length > 0).length`))
			if err != nil || shown != 0 {
				t.Fatalf("%d primitives shown before they are asked for (%v)", shown, err)
			}
			noSideways(ctx, t, w)
		})
	}
}

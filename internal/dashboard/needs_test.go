package dashboard

import (
	"testing"
	"time"

	"github.com/chromedp/chromedp"

	"github.com/plasmodium/pm/internal/bus"
	"github.com/plasmodium/pm/internal/config"
	"github.com/plasmodium/pm/internal/driver"
	"github.com/plasmodium/pm/internal/ops"
	"github.com/plasmodium/pm/internal/request"
	"github.com/plasmodium/pm/internal/state/fsstate"
	"github.com/plasmodium/pm/internal/store"
)

// "Needs you" acts (issue 25): a request about an owner pm gave up on offers
// try again, restart and kill; killing asks first and makes the request moot,
// so its card goes; a failed agent's card can be dismissed, and a killed
// task's failed agent has none.
func TestBrowserNeedsYouActs(t *testing.T) {
	ctx := browser(t)
	r := newRig(t, nil)
	newTask := func(desc string) *store.Task {
		t.Helper()
		tk, err := ops.CreateTask(t.Context(), r.sess, ops.TaskInput{Description: desc, Runtime: config.RuntimeNone})
		if err != nil {
			t.Fatal(err)
		}
		return tk
	}
	fail := func(tk *store.Task) {
		t.Helper()
		now := r.s.Now().UTC()
		if _, err := r.s.UpdateAgent(tk.Owner, func(a *store.Agent) error {
			a.Status, a.Reason, a.EndedAt = store.AgentFailed, "ended its turn without pm done", &now
			return nil
		}); err != nil {
			t.Fatal(err)
		}
		r.s.Notify(bus.Event{Kind: bus.EvAgentFailed, Actor: "supervisor", Agent: tk.Owner, TaskID: tk.ID, Text: "ended its turn without pm done"})
	}
	given := newTask("given up on")
	lone := newTask("failed, no request")
	doomed := newTask("failed, then killed")
	if err := chromedp.Do(ctx, chromedp.Navigate(r.srv.URL())); err != nil {
		t.Fatal(err)
	}
	waitText(ctx, t, "#conn", "live")
	for _, tk := range []*store.Task{given, lone, doomed} {
		fail(tk)
	}
	pm := store.Actor{Name: "pm", Agent: &store.Agent{Name: "pm", TaskID: given.ID}}
	rq, err := request.CreateAbout(r.s, fsstate.New(r.s), pm, given.Owner, "Owner @"+given.Owner+" gave up. Answer to resume it.")
	if err != nil {
		t.Fatal(err)
	}
	card := `[data-request="` + rq.ID + `"]`
	waitText(ctx, t, card, "Try again")
	waitText(ctx, t, card, "Restart")
	waitText(ctx, t, `[data-failed="`+lone.Owner+`"]`, "failed on "+lone.ID)
	waitText(ctx, t, `[data-failed="`+doomed.Owner+`"]`, "failed on "+doomed.ID)
	gone := func(sel string) {
		t.Helper()
		js := `document.querySelector(` + quoteJS(sel) + `) === null`
		if _, err := chromedp.Run(ctx, chromedp.Poll[bool](js, chromedp.WithPollingInterval(50*time.Millisecond))); err != nil {
			t.Fatalf("%s still on the page: %v", sel, err)
		}
	}
	// The request says it: no second card for its owner.
	gone(`[data-failed="` + given.Owner + `"]`)

	t.Run("a killed task's failed agent has no card", func(t *testing.T) {
		if _, err := ops.Kill(t.Context(), r.sess, ops.KillInput{Task: doomed.ID}); err != nil {
			t.Fatal(err)
		}
		gone(`[data-failed="` + doomed.Owner + `"]`)
	})

	t.Run("a failed agent's card is dismissed", func(t *testing.T) {
		click(ctx, t, `[data-failed="`+lone.Owner+`"] [data-act="dismiss"]`)
		gone(`[data-failed="` + lone.Owner + `"]`)
	})

	t.Run("kill on the card asks first, then the request is moot and its card goes", func(t *testing.T) {
		setConfirm := func(answer bool) {
			t.Helper()
			js := `(() => { window.confirmed = 0; window.confirm = () => { window.confirmed++; return ` + map[bool]string{true: "true", false: "false"}[answer] + `; }; return true; })()`
			if _, err := chromedp.Run(ctx, chromedp.Evaluate[bool](js)); err != nil {
				t.Fatal(err)
			}
		}
		setConfirm(false)
		click(ctx, t, card+` [data-act="kill"]`)
		if n, err := chromedp.Run(ctx, chromedp.Evaluate[int](`window.confirmed`)); err != nil || n != 1 {
			t.Fatalf("confirm asked %d times (%v), want once", n, err)
		}
		if tk, _ := r.s.Task(given.ID); tk.Status != store.TaskActive {
			t.Fatalf("declined kill: task is %s", tk.Status)
		}
		setConfirm(true)
		click(ctx, t, card+` [data-act="kill"]`)
		gone(card)
		got, err := r.s.Request(rq.ID)
		if err != nil || got.Status != request.Moot || got.Why != "task "+given.ID+" is killed" {
			t.Fatalf("request after the kill: %+v %v", got, err)
		}
	})
}

// A room nobody moves shows as idle in Needs you, with its reason and the
// way out, from the health the server derives (task.HealthOf); every live
// task shows its last activity.
func TestBrowserIdleTask(t *testing.T) {
	ctx := browser(t)
	r := newRig(t, nil)
	r.s.Config().Runtime.IdleAfter = "4m"
	tk, err := ops.CreateTask(t.Context(), r.sess, ops.TaskInput{Description: "a quiet room", Runtime: config.RuntimeNone})
	if err != nil {
		t.Fatal(err)
	}
	// A running owner: this process, so HealthOf sees it alive.
	now := time.Now().UTC()
	if _, err := r.s.UpdateAgent(tk.Owner, func(a *store.Agent) error {
		a.Status, a.Runtime, a.StartedAt = store.AgentRunning, config.RuntimeExec, &now
		a.Handle = selfHandle(t)
		return nil
	}); err != nil {
		t.Fatal(err)
	}
	quiet, err := ops.OpenPhase(t.Context(), r.sess, ops.PhaseInput{Task: tk.ID, Name: "Quiet", Limit: 10, Roles: []string{"designer"}})
	if err != nil {
		t.Fatal(err)
	}
	r.s.Now = func() time.Time { return time.Now().Add(5 * time.Minute) } // the server's clock: the room has been still 5m
	if err := chromedp.Do(ctx, chromedp.Navigate(r.srv.URL())); err != nil {
		t.Fatal(err)
	}
	waitText(ctx, t, `[data-stalled="`+tk.ID+`"]`, "is idle: nothing posted, read or said for")
	waitText(ctx, t, `[data-stalled="`+tk.ID+`"]`, "Try: pm chat --phase")
	waitText(ctx, t, `[data-task="`+tk.ID+`"] .ago`, " ago")
	// Its room does not read as working: nobody typing, idle, the way out.
	waitText(ctx, t, `.room[data-phase="`+quiet.Phase.ID+`"] .pulse`, "idle: nothing moved for")
	waitText(ctx, t, `.room[data-phase="`+quiet.Phase.ID+`"] .pulse`, "Try: pm chat --phase "+quiet.Phase.ID)
}

func selfHandle(t *testing.T) driver.Handle {
	t.Helper()
	h, err := driver.Self()
	if err != nil {
		t.Fatal(err)
	}
	return h
}

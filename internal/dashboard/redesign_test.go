package dashboard

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"

	"github.com/plasmodium/pm/internal/bus"
	"github.com/plasmodium/pm/internal/config"
	"github.com/plasmodium/pm/internal/cost"
	"github.com/plasmodium/pm/internal/ops"
	"github.com/plasmodium/pm/internal/phase"
	"github.com/plasmodium/pm/internal/state/fsstate"
	"github.com/plasmodium/pm/internal/store"
)

// The dashboard of issue 25: a task graph (subtasks, blocked-by edges both
// ways, health, cost against budget), rooms as conversations (author, role,
// time, count/limit, who is typing from agent.activity, and a still room
// saying nobody is), cost bars per task and agent (unknown as unknown), a
// timeline filtered by task that stays live; at 420 and 1400 px with no
// sideways scroll. PM_DASHBOARD_SCREENSHOTS=DIR saves dashboard-420.png
// and dashboard-1400.png there (docs/img has them).
func TestBrowserRedesign(t *testing.T) {
	ctx := browser(t)
	r := newRig(t, nil)
	b := &r.s.Config().Budgets
	b.Task.MaxUSD, b.Agent.MaxUSD = 2, 1
	site, err := ops.CreateTask(t.Context(), r.sess, ops.TaskInput{Description: "build the landing page", Runtime: config.RuntimeNone})
	if err != nil {
		t.Fatal(err)
	}
	launch, err := ops.CreateTask(t.Context(), r.sess, ops.TaskInput{Description: "announce the launch", BlockedBy: []string{site.ID}, Runtime: config.RuntimeNone})
	if err != nil {
		t.Fatal(err)
	}
	owner, err := r.s.Agent(site.Owner)
	if err != nil {
		t.Fatal(err)
	}
	asOwner := *r.sess
	asOwner.Actor = store.Actor{Name: owner.Name, Agent: owner}
	child, err := ops.Subtask(t.Context(), &asOwner, ops.SubtaskInput{Task: site.ID, Description: "write the hero copy", Runtime: config.RuntimeNone})
	if err != nil {
		t.Fatal(err)
	}
	opened, err := ops.OpenPhase(t.Context(), r.sess, ops.PhaseInput{Task: site.ID, Name: "Design", Limit: 10, Roles: []string{"designer", "developer"}, Rules: "ideas only"})
	if err != nil {
		t.Fatal(err)
	}
	ph := opened.Phase
	designer, developer := ph.Agents[0], ph.Agents[1]
	if _, err := ops.Say(t.Context(), r.sess, ops.SayInput{Phase: ph.ID, Message: "a calm page, one call to action"}); err != nil {
		t.Fatal(err)
	}
	payload := `<img src=x onerror="window.__xss=1">`
	for _, m := range []struct{ who, text string }{{designer, "a bold hero, then three cards " + payload}, {developer, "cards are cheap; the hero needs an image"}} {
		a, err := r.s.Agent(m.who)
		if err != nil {
			t.Fatal(err)
		}
		if _, _, err := phase.Say(r.s, fsstate.New(r.s), store.Actor{Name: a.Name, Agent: a}, site.ID, ph.ID, m.text); err != nil {
			t.Fatal(err)
		}
	}
	for _, e := range []cost.Entry{
		{Agent: designer, Task: site.ID, Runtime: "llm", Model: "gpt-4o", Turns: 1, Usage: &cost.Usage{Input: 100_000, Output: 10_000}}, // $0.35
		{Agent: developer, Task: site.ID, Runtime: "exec", Turns: 1},                                                                    // a CLI that reports nothing: unknown
	} {
		if _, err := r.recordCost(e); err != nil {
			t.Fatal(err)
		}
	}
	// More than the snapshot's log (300 events) since the launch task's
	// events: its history comes from GET /api/timeline when it is chosen.
	for i := range 320 {
		r.s.Notify(bus.Event{Kind: bus.EvAgentThink, Actor: designer, Agent: designer, Text: fmt.Sprint("thought ", i)})
	}
	// The designer's turn is in flight: running, activity working (what the
	// llm runtime records and announces).
	now := time.Now().UTC()
	for _, n := range []string{designer, developer} {
		if _, err := r.s.UpdateAgent(n, func(a *store.Agent) error {
			a.Status, a.StartedAt, a.Handle = store.AgentRunning, &now, selfHandle(t) // alive: this process
			if n == designer {
				a.Activity, a.ActiveAt = "working", &now
			}
			return nil
		}); err != nil {
			t.Fatal(err)
		}
	}
	if err := chromedp.Do(ctx, chromedp.EmulateViewport(1400, 900)); err != nil {
		t.Fatal(err)
	}
	if err := chromedp.Do(ctx, chromedp.Navigate(r.srv.URL())); err != nil {
		t.Fatal(err)
	}
	waitText(ctx, t, "#conn", "live")
	node := func(id string) string { return `[data-task="` + id + `"]` }
	room := `.room[data-phase="` + ph.ID + `"]`

	t.Run("the task graph: subtasks, blockers both ways, cost against budget", func(t *testing.T) {
		waitText(ctx, t, node(site.ID)+` + ul `+node(child.Task.ID), "write the hero copy")
		waitText(ctx, t, node(launch.ID)+" .edge", "blocked by "+site.ID+"active")
		waitText(ctx, t, node(site.ID)+" .edge", "holds up "+launch.ID+"blocked")
		waitText(ctx, t, node(launch.ID)+" .status", "blocked")
		waitText(ctx, t, node(site.ID)+" .cost", "$0.3500 + unknown (1) of $2.00")
		waitText(ctx, t, node(launch.ID)+" .cost", "no model calls yet of $2.00")
		click(ctx, t, node(launch.ID)+` .edge [data-open-task="`+site.ID+`"]`)
		waitText(ctx, t, "#detail-box", "build the landing page")
		click(ctx, t, "#detail-box h2 button")
	})

	t.Run("a room is a conversation with its count and who is typing", func(t *testing.T) {
		waitText(ctx, t, room+" .count", "3/10")
		waitText(ctx, t, room+" .msgs .msg.human .text", "a calm page, one call to action")
		waitText(ctx, t, room+" .msgs", designer+" designer")
		waitText(ctx, t, room+" .msgs", "a bold hero, then three cards "+payload)
		injected, err := chromedp.Run(ctx, chromedp.Evaluate[bool](`window.__xss !== undefined || document.querySelectorAll('main img, main script').length > 0`))
		if err != nil || injected {
			t.Fatalf("an agent message became HTML (%v)", err)
		}
		times, err := chromedp.Run(ctx, chromedp.Evaluate[int](`document.querySelectorAll('`+room+` .msgs .msg time.at').length`))
		if err != nil || times != 3 {
			t.Fatalf("%d messages carry their time (%v), want 3", times, err)
		}
		waitText(ctx, t, room+" .pulse", "@"+designer+" is typing")
		// Live: the designer's turn ends, the developer's starts.
		r.s.Notify(bus.Event{Kind: bus.EvAgentActivity, Actor: designer, Agent: designer, TaskID: site.ID, PhaseID: ph.ID, Text: "idle"})
		r.s.Notify(bus.Event{Kind: bus.EvAgentActivity, Actor: developer, Agent: developer, TaskID: site.ID, PhaseID: ph.ID, Text: "working"})
		waitText(ctx, t, room+" .pulse", "@"+developer+" is typing")
		r.s.Notify(bus.Event{Kind: bus.EvAgentActivity, Actor: developer, Agent: developer, TaskID: site.ID, PhaseID: ph.ID, Text: "waiting"})
		waitText(ctx, t, room+" .pulse", "nobody is typing · last activity")
	})

	t.Run("cost bars per task and agent, live, unknown as unknown", func(t *testing.T) {
		waitText(ctx, t, `#costs [data-cost-agent="`+designer+`"]`, "$0.3500 of $1.00")
		waitText(ctx, t, `#costs [data-cost-agent="`+developer+`"]`, "unknown of $1.00")
		waitText(ctx, t, `#costs [data-cost-task="`+site.ID+`"]`, "$0.3500 + unknown (1) of $2.00")
		usd := 0.5
		r.s.Notify(bus.Event{Kind: bus.EvAgentTurn, Actor: designer, Agent: designer, TaskID: site.ID, PhaseID: ph.ID, Data: bus.AgentTurn{Turns: 2, USD: &usd}})
		waitText(ctx, t, `#costs [data-cost-agent="`+designer+`"]`, "$0.8500 of $1.00")
		waitText(ctx, t, node(site.ID)+" .cost", "$0.8500 + unknown (1) of $2.00")
		over, err := chromedp.Run(ctx, chromedp.Evaluate[bool](`!!document.querySelector('#costs [data-cost-agent="`+designer+`"] .meter.over')`))
		if err != nil || !over {
			t.Fatalf("$0.85 of a $1.00 budget is not marked (%v)", err)
		}
	})

	t.Run("the timeline filters by task and stays live", func(t *testing.T) {
		choose := func(id string) {
			t.Helper()
			if _, err := chromedp.Run(ctx, chromedp.Evaluate[bool](`(() => { const s = document.getElementById("timeline-task"); s.value = `+quoteJS(id)+`; s.dispatchEvent(new Event("change")); return s.value === `+quoteJS(id)+`; })()`)); err != nil {
				t.Fatal(err)
			}
		}
		choose(launch.ID)
		visible := `[...document.querySelectorAll("#log li")].filter((e) => !e.hidden).map((e) => e.dataset.task || "-").join(" ")`
		shows := func(want string) {
			t.Helper()
			if _, err := chromedp.Run(ctx, chromedp.Poll[bool](visible+` === `+quoteJS(want), chromedp.WithPollingInterval(50*time.Millisecond))); err != nil {
				got, _ := chromedp.Run(ctx, chromedp.Evaluate[string](visible))
				t.Fatalf("the timeline shows the events of %q, want %q: %v", got, want, err)
			}
		}
		// Its task.created and agent.created, older than the snapshot's log.
		shows(launch.ID + " " + launch.ID)
		waitText(ctx, t, "#log", "task.created human → "+launch.Owner+": announce the launch")
		if _, err := ops.Say(t.Context(), r.sess, ops.SayInput{Phase: ph.ID, Message: "not of the chosen task"}); err != nil {
			t.Fatal(err)
		}
		r.s.Notify(bus.Event{Kind: bus.EvAgentFailed, Actor: "pm", Agent: launch.Owner, TaskID: launch.ID, Text: "a live event of the chosen task"})
		waitText(ctx, t, "#log", "a live event of the chosen task")
		shows(launch.ID + " " + launch.ID + " " + launch.ID)
		choose("")
		// All tasks again: the snapshot's log (which the task's first events
		// are older than) and the live events, in order; the history read
		// for the filter is not shown out of place.
		if _, err := chromedp.Run(ctx, chromedp.Poll[bool](`(() => { const v = [...document.querySelectorAll("#log li")].filter((e) => !e.hidden);
			return v.length > 300 && v.filter((e) => e.dataset.task === `+quoteJS(launch.ID)+`).length === 1 && v[v.length - 1].textContent.includes("a live event of the chosen task"); })()`, chromedp.WithPollingInterval(50*time.Millisecond))); err != nil {
			t.Fatalf("the timeline of all tasks after a filter: %v", err)
		}
	})

	r.s.Notify(bus.Event{Kind: bus.EvAgentActivity, Actor: designer, Agent: designer, TaskID: site.ID, PhaseID: ph.ID, Text: "working"})
	for _, w := range []int{420, 1400} {
		t.Run(fmt.Sprint("fits ", w), func(t *testing.T) {
			if err := chromedp.Do(ctx, chromedp.EmulateViewport(int64(w), 900)); err != nil {
				t.Fatal(err)
			}
			waitText(ctx, t, room+" .pulse", "@"+designer+" is typing")
			noSideways(ctx, t, w)
			screenshot(ctx, t, fmt.Sprintf("dashboard-%d.png", w))
		})
	}
}

// noSideways fails when the page is wider than its viewport, naming the
// first elements that stick out.
func noSideways(ctx context.Context, t *testing.T, w int) {
	t.Helper()
	wide, err := chromedp.Run(ctx, chromedp.Evaluate[int](`document.documentElement.scrollWidth - window.innerWidth`))
	if err != nil {
		t.Fatal(err)
	}
	if wide > 0 {
		who, _ := chromedp.Run(ctx, chromedp.Evaluate[string](`[...document.querySelectorAll("body *")].filter((e) => e.getBoundingClientRect().right > window.innerWidth + 1).slice(0, 5).map((e) => e.tagName + "." + e.className + "#" + e.id).join(", ")`))
		t.Fatalf("at %d px the page scrolls sideways by %d px; wider: %s", w, wide, who)
	}
}

// screenshot saves the whole page as PNG under PM_DASHBOARD_SCREENSHOTS.
func screenshot(ctx context.Context, t *testing.T, name string) {
	t.Helper()
	dir := os.Getenv("PM_DASHBOARD_SCREENSHOTS")
	if dir == "" {
		return
	}
	png, err := chromedp.Run(ctx, chromedp.FullScreenshot(100)) // 100: PNG
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, name), png, 0o644); err != nil {
		t.Fatal(err)
	}
}

// Past the six liveliest rooms the others fold to one line with their count
// and pulse; a post to a folded room draws it whole (it is now the
// liveliest), and Open unfolds one.
func TestBrowserRoomsFold(t *testing.T) {
	ctx := browser(t)
	r := newRig(t, nil)
	r.s.Config().Limits.ActiveTasks = 20
	var phases []string
	for i := range 8 {
		tk, err := ops.CreateTask(t.Context(), r.sess, ops.TaskInput{Description: fmt.Sprint("task ", i), Runtime: config.RuntimeNone})
		if err != nil {
			t.Fatal(err)
		}
		opened, err := ops.OpenPhase(t.Context(), r.sess, ops.PhaseInput{Task: tk.ID, Name: fmt.Sprint("Room ", i), Limit: 10, Roles: []string{"designer"}})
		if err != nil {
			t.Fatal(err)
		}
		phases = append(phases, opened.Phase.ID)
	}
	if err := chromedp.Do(ctx, chromedp.Navigate(r.srv.URL())); err != nil {
		t.Fatal(err)
	}
	waitText(ctx, t, "#conn", "live")
	folded := `[...document.querySelectorAll("#rooms .room.folded")].map((e) => e.dataset.phase).join(" ")`
	// Opened 0 to 7, each the latest: 7 to 2 are the liveliest.
	want := phases[1] + " " + phases[0]
	if got, err := chromedp.Run(ctx, chromedp.Evaluate[string](folded)); err != nil || got != want {
		t.Fatalf("folded rooms %q (%v), want %q", got, err, want)
	}
	waitText(ctx, t, `.room.folded[data-phase="`+phases[0]+`"] .count`, "0/10")
	if _, err := ops.Say(t.Context(), r.sess, ops.SayInput{Phase: phases[0], Message: "wake up"}); err != nil {
		t.Fatal(err)
	}
	waitText(ctx, t, `.room[data-phase="`+phases[0]+`"] .msgs`, "wake up")
	// What an agent writes is bounded on the page: a 10,000-character
	// message shows its first 4,000 and says how much is left out.
	long := strings.Repeat("x", 10_000)
	if _, err := ops.Say(t.Context(), r.sess, ops.SayInput{Phase: phases[0], Message: long}); err != nil {
		t.Fatal(err)
	}
	waitText(ctx, t, `.room[data-phase="`+phases[0]+`"] .msgs`, "… (6000 more characters)")
	if n, err := chromedp.Run(ctx, chromedp.Evaluate[int](`document.querySelector('.room[data-phase="`+phases[0]+`"] .msgs').lastElementChild.querySelector(".text").textContent.length`)); err != nil || n > 4100 {
		t.Fatalf("the long message shows %d characters (%v), want 4,000 and a note", n, err)
	}
	// Now 0 and 7 to 3 are drawn whole; 2 and 1 are folded. Open unfolds 2.
	click(ctx, t, `.room.folded[data-phase="`+phases[2]+`"] [data-act="unfold"]`)
	if _, err := chromedp.Run(ctx, chromedp.Poll[bool](folded+` === `+quoteJS(phases[1]), chromedp.WithPollingInterval(50*time.Millisecond))); err != nil {
		got, _ := chromedp.Run(ctx, chromedp.Evaluate[string](folded))
		t.Fatalf("after Open the folded rooms are %q, want %q: %v", got, phases[1], err)
	}
}

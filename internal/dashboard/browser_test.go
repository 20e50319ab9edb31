package dashboard

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"strings"
	"sync"
	"testing"
	"time"

	cdpruntime "github.com/chromedp/cdproto/runtime"
	"github.com/chromedp/chromedp"

	"github.com/plasmodium/pm/internal/agent"
	"github.com/plasmodium/pm/internal/bus"
	"github.com/plasmodium/pm/internal/config"
	"github.com/plasmodium/pm/internal/ops"
	"github.com/plasmodium/pm/internal/phase"
	"github.com/plasmodium/pm/internal/request"
	"github.com/plasmodium/pm/internal/state/fsstate"
	"github.com/plasmodium/pm/internal/store"
)

// chromiumPath is Debian's chromium, installed by .ci/run.
const chromiumPath = "/usr/bin/chromium"

// browser starts a headless chromium with a fresh profile (the machine's
// network is closed: nothing in the background may reach out).
func browser(t *testing.T) context.Context {
	t.Helper()
	if _, err := os.Stat(chromiumPath); err != nil {
		t.Skipf("browser test skipped: %s is absent (apt-get install -y chromium)", chromiumPath)
	}
	opts := []chromedp.ExecAllocatorOption{
		chromedp.ExecPath(chromiumPath),
		chromedp.UserDataDir(t.TempDir()),
		chromedp.Flag("headless", true),
		chromedp.Flag("no-sandbox", true),
		chromedp.Flag("disable-gpu", true),
		chromedp.Flag("disable-dev-shm-usage", true),
		chromedp.Flag("disable-background-networking", true),
		chromedp.Flag("disable-component-update", true),
		chromedp.Flag("disable-sync", true),
		chromedp.Flag("no-first-run", true),
		chromedp.Flag("no-default-browser-check", true),
		chromedp.Flag("hide-scrollbars", true), // a full-page screenshot is as wide as the viewport
		chromedp.WindowSize(1280, 1000),
	}
	ctx, cancel := context.WithTimeout(t.Context(), 2*time.Minute) // a hang fails, it is no timing assertion
	t.Cleanup(cancel)
	actx, acancel := chromedp.NewExecAllocator(ctx, opts...)
	t.Cleanup(acancel)
	bctx, bcancel := chromedp.NewContext(actx)
	t.Cleanup(bcancel)
	// A script error in the page fails the test: an event the page could
	// not apply would otherwise only show as a missing update.
	var mu sync.Mutex
	var thrown []string
	err := chromedp.Listen(bctx, func(ev any) {
		if e, ok := ev.(*cdpruntime.EventExceptionThrown); ok {
			mu.Lock()
			d := e.ExceptionDetails
			msg := d.Text
			if d.Exception != nil {
				msg += " " + d.Exception.Description
			}
			thrown = append(thrown, fmt.Sprintf("%s:%d: %s", d.URL, d.LineNumber+1, msg))
			mu.Unlock()
		}
	})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		mu.Lock()
		defer mu.Unlock()
		if len(thrown) > 0 {
			t.Errorf("the page threw: %s", strings.Join(thrown, "\n"))
		}
	})
	return bctx
}

// waitText waits until the element matching sel holds want.
func waitText(ctx context.Context, t *testing.T, sel, want string) {
	t.Helper()
	js := `(() => { const e = document.querySelector(` + quoteJS(sel) + `); return !!e && e.textContent.includes(` + quoteJS(want) + `); })()`
	if _, err := chromedp.Run(ctx, chromedp.Poll[bool](js, chromedp.WithPollingInterval(50*time.Millisecond))); err != nil {
		body, _ := chromedp.Run(ctx, chromedp.Text(chromedp.CSS("body")))
		t.Fatalf("waiting for %q in %s: %v\npage:\n%s", want, sel, err, body)
	}
}

// typeAndClick types text into sel's input and clicks its button in one
// script run: the page re-renders on live events, so a node found by one
// DevTools call can be gone by the next (the draft survives re-renders).
func typeAndClick(ctx context.Context, t *testing.T, sel, text string) {
	t.Helper()
	js := `(() => { const e = document.querySelector(` + quoteJS(sel) + `); if (!e) return false;
		const i = e.querySelector("input"), b = e.querySelector("button"); if (!i || !b) return false;
		i.value = ` + quoteJS(text) + `; i.dispatchEvent(new Event("input", {bubbles: true})); b.click(); return true; })()`
	if _, err := chromedp.Run(ctx, chromedp.Poll[bool](js, chromedp.WithPollingInterval(50*time.Millisecond))); err != nil {
		t.Fatalf("typing %q into %s: %v", text, sel, err)
	}
}

// pm runs pm (the test binary as pm: main_test.go) as the human on the
// rig's state, as a shell would.
func pm(t *testing.T, r *rig, args ...string) {
	t.Helper()
	cmd := exec.CommandContext(t.Context(), os.Args[0], args...)
	for _, kv := range os.Environ() {
		if !strings.HasPrefix(kv, "PM_") {
			cmd.Env = append(cmd.Env, kv)
		}
	}
	cmd.Env = append(cmd.Env, "PM_DASHBOARD_TEST_AS_PM=1", "PM_HOME="+r.s.Root)
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("pm %s: %v\n%s", strings.Join(args, " "), err, out)
	}
}

// click clicks the element matching sel once it exists (in one script run,
// like typeAndClick).
func click(ctx context.Context, t *testing.T, sel string) {
	t.Helper()
	js := `(() => { const e = document.querySelector(` + quoteJS(sel) + `); if (!e) return false; e.click(); return true; })()`
	if _, err := chromedp.Run(ctx, chromedp.Poll[bool](js, chromedp.WithPollingInterval(50*time.Millisecond))); err != nil {
		t.Fatalf("clicking %s: %v", sel, err)
	}
}

func quoteJS(s string) string {
	return "'" + strings.NewReplacer(`\`, `\\`, `'`, `\'`, "\n", `\n`).Replace(s) + "'"
}

func TestBrowserDemoFlow(t *testing.T) {
	ctx := browser(t)
	r := newRig(t, nil)
	tk, err := ops.CreateTask(t.Context(), r.sess, ops.TaskInput{Description: "build the landing page", Runtime: config.RuntimeNone})
	if err != nil {
		t.Fatal(err)
	}
	opened, err := ops.OpenPhase(t.Context(), r.sess, ops.PhaseInput{Task: tk.ID, Name: "Design", Limit: 20, Roles: []string{"designer"}, Rules: "ideas only"})
	if err != nil {
		t.Fatal(err)
	}
	ph := opened.Phase
	if err := chromedp.Do(ctx, chromedp.Navigate(r.srv.URL())); err != nil {
		t.Fatal(err)
	}
	waitText(ctx, t, "#conn", "live")
	waitText(ctx, t, `.room[data-phase="`+ph.ID+`"]`, "Design")
	waitText(ctx, t, `.room[data-phase="`+ph.ID+`"] .info`, "ideas only")

	t.Run("a task created elsewhere appears live, without reading the snapshot again", func(t *testing.T) {
		live, err := ops.CreateTask(t.Context(), r.sess, ops.TaskInput{Description: "write the copy", Runtime: config.RuntimeNone})
		if err != nil {
			t.Fatal(err)
		}
		waitText(ctx, t, `[data-task="`+live.ID+`"]`, "write the copy")
		// The health the server sent with the task's events (its owner is a
		// none-runtime record: manual), not the page's guess from task.created.
		waitText(ctx, t, `[data-task="`+live.ID+`"] .health`, "manual")
		owner, err := r.s.Agent(live.Owner)
		if err != nil {
			t.Fatal(err)
		}
		asOwner := *r.sess
		asOwner.Actor = store.Actor{Name: owner.Name, Agent: owner}
		if _, err := ops.Subtask(t.Context(), &asOwner, ops.SubtaskInput{Task: live.ID, Description: "a child of the copy", Runtime: config.RuntimeNone}); err != nil {
			t.Fatal(err)
		}
		waitText(ctx, t, `[data-task="`+live.ID+`"] + ul`, "a child of the copy")
		if n := r.srv.stateReads.Load(); n != 1 {
			t.Fatalf("GET /api/state read %d times, want once: events are applied in place", n)
		}
	})

	t.Run("streamed model output shows in the room as it comes", func(t *testing.T) {
		role := ph.Agents[0]
		for _, piece := range []string{"Thinking about ", "a bold hero\n"} {
			r.s.Notify(bus.Event{Kind: bus.EvAgentOutput, Actor: role, Agent: role, TaskID: tk.ID, PhaseID: ph.ID, Text: piece})
		}
		waitText(ctx, t, `.room[data-phase="`+ph.ID+`"] .streams`, "Thinking about a bold hero")
	})

	t.Run("dollars show as pm costs words them, unknown as unknown", func(t *testing.T) {
		role := ph.Agents[0]
		turn := func(usd *float64) {
			r.s.Notify(bus.Event{Kind: bus.EvAgentTurn, Actor: role, Agent: role, TaskID: tk.ID, PhaseID: ph.ID,
				Data: bus.AgentTurn{Turns: 1, Tokens: 10, USD: usd}})
		}
		click(ctx, t, "#usage-box summary") // the usage table is drawn while unfolded
		turn(nil)                           // a call without a price
		waitText(ctx, t, `[data-usage-agent="`+role+`"]`, "unknown")
		half := 0.5
		turn(&half)
		waitText(ctx, t, `[data-usage-agent="`+role+`"]`, "$0.5000 + unknown (1)")
		waitText(ctx, t, `[data-usage-task="`+tk.ID+`"]`, "$0.5000 + unknown (1)")
		// The windows are the ledger's, from the snapshot: nothing spent there.
		waitText(ctx, t, "#spend", "project, last hour: $0 · last 24 hours: $0")
	})

	t.Run("the message log nests a call under the call that caused it", func(t *testing.T) {
		// The ids the inbox and the llm loop put on these events (msglog).
		r.s.Notify(bus.Event{Kind: bus.POKind("request"), Actor: "human", Agent: "coordinator", Text: "human → coordinator: map the repo",
			Data: bus.POMessage{Corr: "c1"}})
		r.s.Notify(bus.Event{Kind: bus.POKind("request"), Actor: "coordinator", Agent: "reader", Text: "coordinator → reader: list the root",
			Data: bus.POMessage{Corr: "c2", Cause: "c1"}})
		r.s.Notify(bus.Event{Kind: bus.EvToolCall, Actor: "reader", Agent: "reader", Text: `list_files {"path":"."}`, Data: bus.ToolCall{Cause: "c2"}})
		waitText(ctx, t, `#log li.line[data-depth="1"]`, "coordinator → reader: list the root")
		waitText(ctx, t, `#log li.line.primitive[data-depth="2"]`, "reader → list_files")
		waitText(ctx, t, `[data-prompt="reader"]`, "working")
	})

	t.Run("a resident's activity shows in the bar", func(t *testing.T) {
		res, err := agent.New(r.s, fsstate.New(r.s), store.Agent{Prompt: "reader", Runtime: config.RuntimeLLM})
		if err != nil {
			t.Fatal(err)
		}
		r.s.Notify(bus.Event{Kind: bus.EvAgentActivity, Actor: res.Name, Agent: res.Name, Text: "waiting"})
		waitText(ctx, t, `[data-prompt="reader"]`, "reader · waiting")
	})

	t.Run("a capability created by an agent appears in the bar", func(t *testing.T) {
		// The log shows the create_capability call; the event updates the bar.
		r.s.Notify(bus.Event{Kind: bus.EvToolCall, Actor: "coordinator", Agent: "coordinator", Text: `create_capability {"name":"spec_writer"}`,
			Data: bus.ToolCall{Cause: "c1"}})
		r.s.Notify(bus.Event{Kind: bus.EvCapabilityCreated, Actor: "coordinator", Text: "spec_writer",
			Data: bus.CapabilityCreated{Name: "spec_writer", Description: "writes specs", Capabilities: []string{"write_file"}}})
		waitText(ctx, t, `[data-prompt="spec_writer"]`, "spec_writer · idle")
		waitText(ctx, t, `#log`, `coordinator → create_capability: {"name":"spec_writer"}`)
	})

	t.Run("a request answered on the page unblocks the asker", func(t *testing.T) {
		asker := store.Actor{Name: ph.Agents[0], Agent: &store.Agent{Name: ph.Agents[0], TaskID: tk.ID}}
		rq, err := request.Create(r.s, fsstate.New(r.s), asker, "which colour?")
		if err != nil {
			t.Fatal(err)
		}
		sel := `[data-request="` + rq.ID + `"]`
		waitText(ctx, t, sel, "which colour?")
		typeAndClick(ctx, t, sel, "blue")
		wctx, cancel := context.WithTimeout(t.Context(), 30*time.Second) // a hang fails
		defer cancel()
		got, err := request.Wait(wctx, r.s, fsstate.New(r.s), rq.ID)
		if err != nil || got.Answer != "blue" || got.AnsweredBy != "human" {
			t.Fatalf("request after answering on the page: %+v %v", got, err)
		}
	})

	room := `.room[data-phase="` + ph.ID + `"]`
	t.Run("posting into the phase shows the message", func(t *testing.T) {
		typeAndClick(ctx, t, room+" .say", "hello from the page")
		waitText(ctx, t, room+" .msgs", "hello from the page")
		msgs, _ := r.s.Messages(tk.ID, ph.ID)
		if len(msgs) == 0 || msgs[len(msgs)-1].Author != "human" {
			t.Fatalf("messages after posting on the page: %+v", msgs)
		}
	})

	t.Run("a pm say from a shell appears on the page", func(t *testing.T) {
		pm(t, r, "say", "--phase", ph.ID, "said by a pm process")
		waitText(ctx, t, room+" .msgs", "said by a pm process")
	})

	t.Run("agent text is shown as text", func(t *testing.T) {
		agentRec, err := r.s.Agent(ph.Agents[0])
		if err != nil {
			t.Fatal(err)
		}
		payload := `<img src=x onerror="window.__xss=1"><script>window.__xss=2</script>`
		if _, _, err := phase.Say(r.s, fsstate.New(r.s), store.Actor{Name: agentRec.Name, Agent: agentRec}, tk.ID, ph.ID, payload); err != nil {
			t.Fatal(err)
		}
		waitText(ctx, t, room+" .msgs", payload)
		injected, err := chromedp.Run(ctx, chromedp.Evaluate[bool](`window.__xss !== undefined || document.querySelectorAll('main img, main script').length > 0`))
		if err != nil {
			t.Fatal(err)
		}
		if injected {
			t.Fatal("an agent message became HTML")
		}
	})

	var build *store.Phase
	t.Run("a task's detail shows its phases, closed ones with their messages", func(t *testing.T) {
		if _, err := ops.EndPhase(t.Context(), r.sess, ops.EndInput{Task: tk.ID}); err != nil {
			t.Fatal(err)
		}
		waitText(ctx, t, `#rooms .closed-phases [data-closed-phase="`+ph.ID+`"]`, "Design")
		click(ctx, t, `[data-task="`+tk.ID+`"] [data-open-task]`)
		waitText(ctx, t, `#detail-box [data-detail-phase="`+ph.ID+`"]`, "hello from the page")
		waitText(ctx, t, `#detail-box [data-detail-phase="`+ph.ID+`"] summary`, "closed")
		waitText(ctx, t, `#detail-box`, "build the landing page")
		opened, err := ops.OpenPhase(t.Context(), r.sess, ops.PhaseInput{Task: tk.ID, Name: "Build", Limit: 10, Roles: []string{"developer"}})
		if err != nil {
			t.Fatal(err)
		}
		build = opened.Phase
		waitText(ctx, t, `#detail-box`, "Build — active")
	})

	t.Run("an open detail reads itself again only for events that change it", func(t *testing.T) {
		// fetch is wrapped to count the detail's reads when they are made
		// (the timer that batches them calls fetch in the same task), and
		// the page is synced to the bus's end before and after the burst:
		// no read is pending or counted, whatever the machine's speed.
		synced := func() {
			t.Helper()
			_, end, err := r.s.Bus().Tail(0)
			if err != nil {
				t.Fatal(err)
			}
			c, _ := end.MarshalText()
			js := `cursor === ` + quoteJS(string(c)) + ` && detailTimer === null`
			if _, err := chromedp.Run(ctx, chromedp.Poll[bool](js, chromedp.WithPollingInterval(50*time.Millisecond))); err != nil {
				t.Fatalf("the page never reached the bus's end: %v", err)
			}
		}
		fetches := func() int {
			t.Helper()
			n, err := chromedp.Run(ctx, chromedp.Evaluate[int](`window.taskFetches`))
			if err != nil {
				t.Fatal(err)
			}
			return n
		}
		synced()
		count := `(() => { window.taskFetches = 0; const f = window.fetch;
			window.fetch = (u, o) => { if (String(u).startsWith("/api/task?")) window.taskFetches++; return f(u, o); }; return true; })()`
		if _, err := chromedp.Run(ctx, chromedp.Evaluate[bool](count)); err != nil {
			t.Fatal(err)
		}
		dev := build.Agents[0]
		for i := range 10 {
			for _, k := range []bus.Kind{bus.EvToolCall, bus.EvToolResult, bus.EvAgentThink, bus.EvAgentOutput, bus.EvToolDocPreview, bus.EvToolDocDecision} {
				r.s.Notify(bus.Event{Kind: k, Actor: dev, Agent: dev, TaskID: tk.ID, PhaseID: build.ID, Text: fmt.Sprint(k, " ", i)})
			}
			r.s.Notify(bus.Event{Kind: bus.EvAgentActivity, Actor: dev, Agent: dev, TaskID: tk.ID, Text: []string{"working", "waiting"}[i%2]})
		}
		synced()
		if n := fetches(); n != 0 {
			t.Fatalf("%d reads of /api/task for a burst of tool, text and activity events; want 0", n)
		}
		if _, err := ops.Say(t.Context(), r.sess, ops.SayInput{Phase: build.ID, Message: "a message changes the detail"}); err != nil {
			t.Fatal(err)
		}
		waitText(ctx, t, `#detail-box [data-detail-phase="`+build.ID+`"]`, "a message changes the detail")
		synced()
		if n := fetches(); n != 1 {
			t.Errorf("%d reads of /api/task for one message; want 1", n)
		}
	})

	t.Run("the page resumes after a server restart", func(t *testing.T) {
		addr := r.srv.Addr()
		if err := r.srv.Close(); err != nil {
			t.Fatal(err)
		}
		waitText(ctx, t, "#conn", "reconnecting")
		if build == nil {
			t.Skip("needs the Build phase of the detail subtest")
		}
		if _, err := ops.Say(t.Context(), r.sess, ops.SayInput{Phase: build.ID, Message: "said while the server was down"}); err != nil {
			t.Fatal(err)
		}
		r.open(func(c *Config) { c.Addr = addr })
		waitText(ctx, t, `.room[data-phase="`+build.ID+`"] .msgs`, "said while the server was down")
		waitText(ctx, t, "#conn", "live")
		if n := r.srv.stateReads.Load(); n != 0 {
			t.Fatalf("the restarted server answered GET /api/state %d times: a resume must not read the snapshot", n)
		}
	})

	if path := os.Getenv("PM_DASHBOARD_SCREENSHOT"); path != "" {
		png, err := chromedp.Run(ctx, chromedp.FullScreenshot(100))
		if err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(path, png, 0o644); err != nil {
			t.Fatal(err)
		}
	}
}

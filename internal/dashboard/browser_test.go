package dashboard

import (
	"context"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"

	"github.com/plasmodium/pm/internal/ops"
	"github.com/plasmodium/pm/internal/phase"
	"github.com/plasmodium/pm/internal/request"
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
		chromedp.WindowSize(1280, 1000),
	}
	ctx, cancel := context.WithTimeout(t.Context(), 2*time.Minute) // a hang fails, it is no timing assertion
	t.Cleanup(cancel)
	actx, acancel := chromedp.NewExecAllocator(ctx, opts...)
	t.Cleanup(acancel)
	bctx, bcancel := chromedp.NewContext(actx)
	t.Cleanup(bcancel)
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

func quoteJS(s string) string {
	return "'" + strings.NewReplacer(`\`, `\\`, `'`, `\'`, "\n", `\n`).Replace(s) + "'"
}

func TestBrowserDemoFlow(t *testing.T) {
	ctx := browser(t)
	r := newRig(t, nil)
	tk, err := ops.CreateTask(t.Context(), r.sess, ops.TaskInput{Description: "build the landing page", Runtime: store.RuntimeNone})
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

	t.Run("a task created elsewhere appears live", func(t *testing.T) {
		live, err := ops.CreateTask(t.Context(), r.sess, ops.TaskInput{Description: "write the copy", Runtime: store.RuntimeNone})
		if err != nil {
			t.Fatal(err)
		}
		waitText(ctx, t, `[data-task="`+live.ID+`"]`, "write the copy")
	})

	t.Run("a request answered on the page unblocks the asker", func(t *testing.T) {
		asker := store.Actor{Name: ph.Agents[0], Agent: &store.Agent{Name: ph.Agents[0], TaskID: tk.ID}}
		rq, err := request.Create(r.s, asker, "which colour?")
		if err != nil {
			t.Fatal(err)
		}
		sel := `[data-request="` + rq.ID + `"]`
		waitText(ctx, t, sel, "which colour?")
		typeAndClick(ctx, t, sel, "blue")
		wctx, cancel := context.WithTimeout(t.Context(), 30*time.Second) // a hang fails
		defer cancel()
		got, err := request.Wait(wctx, r.s, rq.ID)
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

	t.Run("agent text is shown as text", func(t *testing.T) {
		agentRec, err := r.s.Agent(ph.Agents[0])
		if err != nil {
			t.Fatal(err)
		}
		payload := `<img src=x onerror="window.__xss=1"><script>window.__xss=2</script>`
		if _, _, err := phase.Say(r.s, store.Actor{Name: agentRec.Name, Agent: agentRec}, tk.ID, ph.ID, payload); err != nil {
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

	t.Run("the page resumes after a server restart", func(t *testing.T) {
		addr := r.srv.Addr()
		if err := r.srv.Close(); err != nil {
			t.Fatal(err)
		}
		waitText(ctx, t, "#conn", "reconnecting")
		if _, err := ops.Say(t.Context(), r.sess, ops.SayInput{Phase: ph.ID, Message: "said while the server was down"}); err != nil {
			t.Fatal(err)
		}
		r.open(func(c *Config) { c.Addr = addr })
		waitText(ctx, t, room+" .msgs", "said while the server was down")
		waitText(ctx, t, "#conn", "live")
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

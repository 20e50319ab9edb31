package dashboard

import (
	"context"
	"encoding/json"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"

	"github.com/plasmodium/pm/internal/agent"
	"github.com/plasmodium/pm/internal/driver/drivertest"
	"github.com/plasmodium/pm/internal/hub/hubtest"
	"github.com/plasmodium/pm/internal/ops"
	"github.com/plasmodium/pm/internal/state"
	"github.com/plasmodium/pm/internal/state/natsstate"
	"github.com/plasmodium/pm/internal/store"
	"github.com/plasmodium/pm/internal/store/storetest"
)

// newHubRig is newRig with the records on a hub (one node), where worker
// w1 is registered and live for the test's length.
func newHubRig(t *testing.T) (*rig, *natsstate.State) {
	t.Helper()
	h := hubtest.Single(t)
	s := storetest.New(t)
	s.Config().Runtime.Default = "none"
	ctx, cancel := context.WithCancel(context.Background())
	t.Cleanup(cancel)
	st, err := natsstate.Open(ctx, h.Connect(0), "dash-000001")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(st.Close)
	st.LeaseTTLWanted = time.Minute // the worker's key outlives the test
	if _, err := st.RegisterWorker(ctx, state.Worker{Name: "w1", Capacity: 2, LastSeen: time.Now()}); err != nil {
		t.Fatal(err)
	}
	l := &agent.Launcher{Store: s, State: st, Exe: "pm", Driver: drivertest.New()}
	r := &rig{t: t, s: s, sess: &ops.Session{Store: s, State: st, Actor: store.Human, Launcher: l, Getenv: func(string) string { return "" }}}
	r.open(nil)
	return r, st
}

// POST /api/task places as pm task --on does (task.Place, the one
// validation): on a live worker the owner runs there; an unknown worker
// is a 404 with Try: pm workers, and no task is made.
func TestNewTaskOnAWorker(t *testing.T) {
	r, st := newHubRig(t)
	resp, b := r.do("POST", "/api/task", `{"description":"train the model","runtime":"none","on":"w1"}`, nil)
	if resp.StatusCode != 200 {
		t.Fatalf("POST /api/task on w1 = %d %s", resp.StatusCode, b)
	}
	var tk store.Task
	if err := json.Unmarshal(b, &tk); err != nil || tk.Owner == "" {
		t.Fatalf("POST /api/task: %s (%v)", b, err)
	}
	if owner, err := st.Agent(tk.Owner); err != nil || owner.Worker != "w1" {
		t.Fatalf("owner %s: %+v, %v; want it placed on w1", tk.Owner, owner, err)
	}
	resp, b = r.do("POST", "/api/task", `{"description":"nowhere","runtime":"none","on":"w9"}`, nil)
	var e apiError
	_ = json.Unmarshal(b, &e)
	if resp.StatusCode != 404 || !strings.Contains(e.Error, "no live worker named w9") || !strings.HasPrefix(e.Try, "pm workers") {
		t.Fatalf("POST /api/task on w9 = %d %s; want 404, no live worker named w9, Try: pm workers", resp.StatusCode, b)
	}
	if tasks, err := st.Tasks(); err != nil || len(tasks) != 1 {
		t.Fatalf("%d tasks (%v) after the refused create, want 1", len(tasks), err)
	}
}

// The new-task form's worker field: an unknown worker shows the error
// with its Try line and keeps what was typed; a live one places the task
// there.
func TestBrowserNewTaskOnAWorker(t *testing.T) {
	ctx := browser(t)
	r, st := newHubRig(t)
	if err := chromedp.Do(ctx, chromedp.Navigate(r.srv.URL())); err != nil {
		t.Fatal(err)
	}
	waitText(ctx, t, "#conn", "live")
	submit := func(desc, on string) {
		t.Helper()
		js := `(() => { const d = document.querySelector("#new-task-text"), o = document.querySelector("#new-task-on");
			if (!d || !o) return false; d.value = ` + quoteJS(desc) + `; o.value = ` + quoteJS(on) + `;
			document.querySelector("#new-task button").click(); return true; })()`
		if _, err := chromedp.Run(ctx, chromedp.Poll[bool](js, chromedp.WithPollingInterval(50*time.Millisecond))); err != nil {
			t.Fatalf("submitting %q on %q: %v", desc, on, err)
		}
	}
	placed := func(desc string) string {
		t.Helper()
		waitText(ctx, t, "#tasks", desc)
		tasks, err := st.Tasks()
		if err != nil {
			t.Fatal(err)
		}
		for _, tk := range tasks {
			if tk.Description == desc {
				owner, err := st.Agent(tk.Owner)
				if err != nil {
					t.Fatal(err)
				}
				return owner.Worker
			}
		}
		t.Fatalf("no task %q", desc)
		return ""
	}

	submit("nowhere", "w9")
	waitText(ctx, t, "#error", "no live worker named w9 — Try: pm workers")
	kept, err := chromedp.Run(ctx, chromedp.Evaluate[string](`document.querySelector("#new-task-text").value`))
	if err != nil || kept != "nowhere" {
		t.Fatalf("the form holds %q (%v) after the refusal, want what was typed", kept, err)
	}
	submit("train the model", "w1")
	if w := placed("train the model"); w != "w1" {
		t.Fatalf("train the model placed on %q, want w1", w)
	}
}

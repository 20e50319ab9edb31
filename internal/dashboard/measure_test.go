package dashboard

import (
	"fmt"
	"os"
	"sort"
	"strconv"
	"testing"
	"time"

	"github.com/chromedp/chromedp"

	"github.com/plasmodium/pm/internal/config"
	"github.com/plasmodium/pm/internal/ops"
)

// TestBrowserMeasure reports (it asserts no time) how the page does on a
// large state: PM_DASHBOARD_MEASURE=N makes N tasks, each in a room of 50
// messages, then times GET /api/state, the page's first load (until every
// task is drawn and the stream is live) and a live update (a pm say until
// the message shows in its room), the median of 20. Figures are in
// docs/benchmarks.md.
func TestBrowserMeasure(t *testing.T) {
	n, _ := strconv.Atoi(os.Getenv("PM_DASHBOARD_MEASURE"))
	if n <= 0 {
		t.Skip("PM_DASHBOARD_MEASURE=N measures the page on N tasks with 50-message rooms")
	}
	ctx := browser(t)
	r := newRig(t, nil)
	lim := &r.s.Config().Limits
	lim.ActiveTasks, lim.MessagesPerPhase = n, 100 // 50 messages and the live updates fit
	start := time.Now()
	var phases []string
	for i := range n {
		tk, err := ops.CreateTask(t.Context(), r.sess, ops.TaskInput{Description: fmt.Sprintf("task %d of the measure", i), Runtime: config.RuntimeNone})
		if err != nil {
			t.Fatal(err)
		}
		opened, err := ops.OpenPhase(t.Context(), r.sess, ops.PhaseInput{Task: tk.ID, Name: "Talk", Limit: 100, Roles: []string{"designer", "developer"}})
		if err != nil {
			t.Fatal(err)
		}
		for m := range 50 {
			if _, err := ops.Say(t.Context(), r.sess, ops.SayInput{Phase: opened.Phase.ID, Message: fmt.Sprintf("message %d: a line of the kind agents write, long enough to wrap once on a phone screen", m)}); err != nil {
				t.Fatal(err)
			}
		}
		phases = append(phases, opened.Phase.ID)
	}
	t.Logf("made %d tasks with 50-message rooms in %v", n, time.Since(start).Round(time.Millisecond))

	var stateTimes []time.Duration
	var size int
	for range 5 {
		at := time.Now()
		resp, b := r.do("GET", "/api/state", "", nil)
		stateTimes = append(stateTimes, time.Since(at))
		if resp.StatusCode != 200 {
			t.Fatalf("GET /api/state = %d", resp.StatusCode)
		}
		size = len(b)
	}
	t.Logf("GET /api/state: median %v, %d KiB", median(stateTimes), size>>10)

	for _, w := range []int{1400, 420} {
		if err := chromedp.Do(ctx, chromedp.EmulateViewport(int64(w), 900)); err != nil {
			t.Fatal(err)
		}
		var loads []time.Duration
		for range 3 {
			at := time.Now()
			if err := chromedp.Do(ctx, chromedp.Navigate(r.srv.URL())); err != nil {
				t.Fatal(err)
			}
			drawn := fmt.Sprintf(`document.querySelectorAll("#tasks .task.node").length === %d && document.querySelectorAll("#rooms .room").length === %d && document.getElementById("conn").textContent === "live"`, n, n)
			if _, err := chromedp.Run(ctx, chromedp.Poll[bool](drawn, chromedp.WithPollingInterval(10*time.Millisecond))); err != nil {
				t.Fatal(err)
			}
			loads = append(loads, time.Since(at))
		}
		parts, _ := chromedp.Run(ctx, chromedp.Evaluate[string](`performance.getEntriesByType("measure").filter((m) => m.name.startsWith("pm:")).map((m) => m.name + " " + Math.round(m.duration) + "ms").join(", ")`))
		t.Logf("at %d px, the last load's parts: %s", w, parts)
		noSideways(ctx, t, w)
		var updates []time.Duration
		for i := range 20 {
			text := fmt.Sprintf("live update %d at %d px", i, w)
			ph := phases[i%len(phases)]
			at := time.Now()
			if _, err := ops.Say(t.Context(), r.sess, ops.SayInput{Phase: ph, Message: text}); err != nil {
				t.Fatal(err)
			}
			js := `(() => { const e = document.querySelector('.room[data-phase="` + ph + `"] .msgs'); return !!e && e.lastElementChild.textContent.includes(` + quoteJS(text) + `); })()`
			if _, err := chromedp.Run(ctx, chromedp.Poll[bool](js, chromedp.WithPollingInterval(5*time.Millisecond))); err != nil {
				t.Fatal(err)
			}
			updates = append(updates, time.Since(at))
		}
		nodes, _ := chromedp.Run(ctx, chromedp.Evaluate[int](`document.getElementsByTagName("*").length`))
		t.Logf("at %d px: first load median %v (of %v), live update median %v (max %v), %d DOM nodes",
			w, median(loads), loads, median(updates), slicesMax(updates), nodes)
	}
}

func median(d []time.Duration) time.Duration {
	s := append([]time.Duration(nil), d...)
	sort.Slice(s, func(i, j int) bool { return s[i] < s[j] })
	return s[len(s)/2].Round(time.Millisecond)
}

func slicesMax(d []time.Duration) time.Duration {
	m := time.Duration(0)
	for _, x := range d {
		m = max(m, x)
	}
	return m.Round(time.Millisecond)
}

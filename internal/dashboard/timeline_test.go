package dashboard

import (
	"encoding/json"
	"net/url"
	"testing"

	"github.com/plasmodium/pm/internal/bus"
	"github.com/plasmodium/pm/internal/config"
	"github.com/plasmodium/pm/internal/ops"
)

// GET /api/timeline is one task's last events before a snapshot's cursor,
// oldest first, none of another task and none after the cursor (the page
// has those from its stream); a bad id, cursor or count is refused.
func TestTimeline(t *testing.T) {
	r := newRig(t, nil)
	var tasks []string
	for _, d := range []string{"first", "second"} {
		tk, err := ops.CreateTask(t.Context(), r.sess, ops.TaskInput{Description: d, Runtime: config.RuntimeNone})
		if err != nil {
			t.Fatal(err)
		}
		tasks = append(tasks, tk.ID)
	}
	for i := range 5 {
		for _, id := range tasks {
			r.s.Notify(bus.Event{Kind: bus.EvAgentFailed, Actor: "pm", TaskID: id, Text: id + " before " + string(rune('0'+i))})
		}
	}
	cur, _ := r.snapshot().Cursor.MarshalText()
	r.s.Notify(bus.Event{Kind: bus.EvAgentFailed, Actor: "pm", TaskID: tasks[0], Text: "after the cursor"})

	get := func(q url.Values) (int, Timeline) {
		resp, b := r.do("GET", "/api/timeline?"+q.Encode(), "", nil)
		var tl Timeline
		if resp.StatusCode == 200 {
			if err := json.Unmarshal(b, &tl); err != nil {
				t.Fatal(err)
			}
		}
		return resp.StatusCode, tl
	}
	code, tl := get(url.Values{"task": {tasks[0]}, "before": {string(cur)}})
	if code != 200 || tl.Task != tasks[0] || !tl.Complete {
		t.Fatalf("timeline = %d %+v", code, tl)
	}
	var texts []string
	for _, e := range tl.Log {
		var ev bus.Event
		if err := json.Unmarshal(e.Event, &ev); err != nil {
			t.Fatal(err)
		}
		if ev.TaskID != tasks[0] {
			t.Errorf("an event of %s in %s's timeline: %+v", ev.TaskID, tasks[0], ev)
		}
		texts = append(texts, ev.Text)
	}
	// task.created and agent.created, then the five in order.
	if len(texts) != 7 || texts[2] != tasks[0]+" before 0" || texts[6] != tasks[0]+" before 4" {
		t.Fatalf("texts %q", texts)
	}
	if code, tl := get(url.Values{"task": {tasks[0]}, "before": {string(cur)}, "n": {"2"}}); code != 200 || len(tl.Log) != 2 {
		t.Errorf("n=2: %d, %d events", code, len(tl.Log))
	}
	for _, tt := range []struct {
		q    url.Values
		want int
	}{
		{url.Values{"task": {tasks[0]}}, 400},
		{url.Values{"task": {tasks[0]}, "before": {"nope"}}, 400},
		{url.Values{"task": {"../etc"}, "before": {string(cur)}}, 400},
		{url.Values{"before": {string(cur)}}, 400},
		{url.Values{"task": {"tk-abcdef"}, "before": {string(cur)}}, 404},
		{url.Values{"task": {tasks[0]}, "before": {string(cur)}, "n": {"-1"}}, 400},
	} {
		if code, _ := get(tt.q); code != tt.want {
			t.Errorf("%v: %d, want %d", tt.q, code, tt.want)
		}
	}
}

package llmagent_test

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/plasmodium/pm/internal/bus"
	"github.com/plasmodium/pm/internal/designmode"
	"github.com/plasmodium/pm/internal/state/fsstate"
	"github.com/plasmodium/pm/internal/state/transcript"
	"github.com/plasmodium/pm/internal/store"
	"github.com/plasmodium/pm/internal/task"
)

// In code-designer mode the owner's first call is held back with the start
// of its doc; the model revises it and only the revision runs. Preview and
// decision are in the transcript and on the bus.
func TestCodeDesignerPreviewThenRevisedCall(t *testing.T) {
	f := newFixture(t)
	since := time.Date(2026, 11, 25, 12, 0, 0, 0, time.UTC)
	tk, err := task.Create(f.s, f.r.Launcher, store.Human, task.Spec{Description: "Ship it", Runtime: "none",
		CodeDesigner: &designmode.Mode{Enabled: true, Source: designmode.SourceCLI, Since: &since}})
	if err != nil {
		t.Fatal(err)
	}
	a, _ := f.s.Agent(tk.Owner)
	f.srv.Enqueue(tool("done", `{"task":"tk-999999"}`), tool("done", `{}`), text("Done."))
	if err := f.r.Run(context.Background(), a, "# owner"); err != nil {
		t.Fatal(err)
	}
	if got, _ := f.s.Task(tk.ID); got.Status != store.TaskDone {
		t.Fatalf("task %s, want done by the revised call", got.Status)
	}
	reqs := f.srv.Requests()
	if len(reqs) != 3 {
		t.Fatalf("%d requests, want 3 (call, preview, answer)", len(reqs))
	}
	preview := reqs[1].LastMessage()
	if preview.Role != "tool" || !strings.Contains(preview.Content, "not run yet") || !strings.Contains(preview.Content, "# Tool: done\n\n## Summary\n") {
		t.Fatalf("second request ends with %+v, want done's doc preview", preview)
	}
	if calls := events(t, f.s, bus.EvToolCall); len(calls) != 1 || calls[0].Text != "done {}" {
		t.Fatalf("tool.call events %+v: only the revised call may run", calls)
	}
	if evs := events(t, f.s, bus.EvToolDocPreview); len(evs) != 1 || !strings.HasPrefix(evs[0].Text, `done {"task":"tk-999999"}`+"\n# Tool: done") {
		t.Fatalf("tool.doc_preview events %+v", evs)
	}
	var got []string
	for _, ev := range events(t, f.s, bus.EvToolDocDecision) {
		got = append(got, ev.Text)
	}
	if strings.Join(got, ",") != "done revised,done dropped" {
		t.Fatalf("tool.doc_decision events %q", got)
	}
	msgs, err := transcript.Of(fsstate.New(f.s), a.Name).Load()
	if err != nil {
		t.Fatal(err)
	}
	var transcript strings.Builder
	for _, m := range msgs {
		transcript.WriteString(m.Content + "\n")
	}
	for _, want := range []string{"code-designer: not run yet. Documentation of done", "code-designer: revised after the doc preview."} {
		if !strings.Contains(transcript.String(), want) {
			t.Errorf("transcript lacks %q", want)
		}
	}
	rec, _ := f.s.Agent(a.Name)
	if !rec.CodeDesigner.On() || rec.CodeDesigner.Source != designmode.SourceCLI || !rec.CodeDesigner.Since.Equal(since) {
		t.Errorf("record mode %+v", rec.CodeDesigner)
	}
}

// An agent no caller decided for gets its mode from its host: off by
// default (no extra turn), on from the host's PM_CODE_DESIGNER.
func TestCodeDesignerDecidedByHost(t *testing.T) {
	for _, tt := range []struct {
		env      string
		on       bool
		source   designmode.Source
		requests int
	}{{"", false, "", 2}, {"1", true, designmode.SourceEnv, 3}} {
		t.Run("PM_CODE_DESIGNER="+tt.env, func(t *testing.T) {
			f := newFixture(t)
			getenv := f.r.Getenv
			f.r.Getenv = func(k string) string {
				if k == designmode.EnvVar {
					return tt.env
				}
				return getenv(k)
			}
			tk, a := f.task(t, "Ship it")
			if a.CodeDesigner != nil {
				t.Fatalf("a task made without a mode has one: %+v", a.CodeDesigner)
			}
			f.srv.Enqueue(tool("done", `{}`))
			if tt.on {
				f.srv.Enqueue(tool("done", `{}`)) // the confirmation
			}
			f.srv.Enqueue(text("Done."))
			if err := f.r.Run(context.Background(), a, "# owner"); err != nil {
				t.Fatal(err)
			}
			if got, _ := f.s.Task(tk.ID); got.Status != store.TaskDone {
				t.Fatalf("task %s", got.Status)
			}
			if n := len(f.srv.Requests()); n != tt.requests {
				t.Fatalf("%d requests, want %d", n, tt.requests)
			}
			if n := len(events(t, f.s, bus.EvToolDocPreview)); n != map[bool]int{false: 0, true: 1}[tt.on] {
				t.Fatalf("%d previews", n)
			}
			rec, _ := f.s.Agent(a.Name)
			if rec.CodeDesigner == nil || rec.CodeDesigner.Enabled != tt.on || rec.CodeDesigner.Source != tt.source {
				t.Fatalf("record mode %+v, want on=%v from %q", rec.CodeDesigner, tt.on, tt.source)
			}
		})
	}
}

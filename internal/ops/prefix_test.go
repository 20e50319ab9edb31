package ops

import (
	"context"
	"os"
	"strings"
	"testing"

	"github.com/plasmodium/pm/internal/agent"
	"github.com/plasmodium/pm/internal/config"
	"github.com/plasmodium/pm/internal/errs"
	"github.com/plasmodium/pm/internal/state/fsstate"
	"github.com/plasmodium/pm/internal/store"
)

// A unique prefix of a task or request id names it wherever an id is taken;
// an ambiguous one is a usage error whose Try: line lists the candidates,
// one that names nothing is not found (issue 25).
func TestIDPrefixes(t *testing.T) {
	s := newStore(t)
	addTask(t, s, "tk-ab1234", store.TaskActive, 0)
	addTask(t, s, "tk-ab5678", store.TaskActive, 1)
	addTask(t, s, "tk-cd0000", store.TaskActive, 2)
	for _, id := range []string{"rq-ee0001", "rq-ee0002", "rq-ff0003"} {
		r := &store.Request{ID: id, From: "own_ab12", TaskID: "tk-ab1234", Question: "?", Status: store.RequestPending, CreatedAt: base}
		if err := os.MkdirAll(s.RequestsDir(), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(s.RequestPath(id), mustJSON(t, r), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	sess := &Session{Store: s, State: fsstate.New(s), Actor: store.Human, Getenv: func(string) string { return "" }}
	ctx := context.Background()
	cases := []struct {
		name, given string
		code        errs.Code
		want, try   string
	}{
		{"task: whole id", "tk-cd0000", 0, "tk-cd0000", ""},
		{"task: unique prefix", "tk-c", 0, "tk-cd0000", ""},
		{"task: unique longer prefix", "tk-ab5", 0, "tk-ab5678", ""},
		{"task: ambiguous", "tk-ab", errs.Usage, "", "tk-ab1234, tk-ab5678"},
		{"task: none", "tk-99", errs.NotFound, "", ""},
		{"task: not an id at all", "banana", errs.Usage, "", ""},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			res, err := Status(ctx, sess, StatusInput{Task: c.given})
			if errs.CodeOf(err) != c.code && !(c.code == 0 && err == nil) {
				t.Fatalf("Status(%q): %v (exit %d), want exit %d", c.given, err, errs.CodeOf(err), c.code)
			}
			if c.code == 0 && res.View.Task.ID != c.want {
				t.Fatalf("Status(%q) is %s, want %s", c.given, res.View.Task.ID, c.want)
			}
			if c.try != "" && !strings.Contains(errs.TryOf(err), c.try) {
				t.Fatalf("Try: %q, want the candidates %q", errs.TryOf(err), c.try)
			}
		})
	}
	t.Run("costs --task: unique prefix", func(t *testing.T) {
		res, err := Costs(ctx, sess, CostsInput{Task: "tk-c"})
		if err != nil || res.Task != "tk-cd0000" {
			t.Fatalf("Costs(tk-c): %+v %v", res.Task, err)
		}
		if _, err := Costs(ctx, sess, CostsInput{Task: "tk-ab"}); errs.CodeOf(err) != errs.Usage || !strings.Contains(errs.TryOf(err), "tk-ab1234, tk-ab5678") {
			t.Fatalf("Costs(tk-ab): %v (Try: %s)", err, errs.TryOf(err))
		}
	})
	t.Run("--blocked-by: unique prefixes, recorded whole", func(t *testing.T) {
		ls := &Session{Store: s, State: sess.State, Actor: store.Human, Launcher: &agent.Launcher{Store: s, State: sess.State, Exe: "/nonexistent/pm"}, Getenv: func(string) string { return "" }}
		tk, err := CreateTask(ctx, ls, TaskInput{Description: "after", BlockedBy: []string{"tk-c,tk-ab5"}, Runtime: config.RuntimeNone})
		if err != nil || strings.Join(tk.BlockedBy, " ") != "tk-ab5678 tk-cd0000" && strings.Join(tk.BlockedBy, " ") != "tk-cd0000 tk-ab5678" {
			t.Fatalf("CreateTask --blocked-by tk-c,tk-ab5: %+v %v", tk, err)
		}
		before, _ := s.LiveTasks()
		_, err = CreateTask(ctx, ls, TaskInput{Description: "ambiguous", BlockedBy: []string{"tk-ab"}, Runtime: config.RuntimeNone})
		after, _ := s.LiveTasks()
		if errs.CodeOf(err) != errs.Usage || len(after) != len(before) {
			t.Fatalf("CreateTask --blocked-by tk-ab: %v; tasks %d -> %d", err, len(before), len(after))
		}
	})
	t.Run("request: unique prefix answers it", func(t *testing.T) {
		r, err := Answer(ctx, sess, AnswerInput{ID: "rq-ff", Text: "yes"})
		if err != nil || r.ID != "rq-ff0003" || r.Answer != "yes" {
			t.Fatalf("Answer(rq-ff): %+v %v", r, err)
		}
	})
	t.Run("request: ambiguous changes nothing", func(t *testing.T) {
		_, err := Answer(ctx, sess, AnswerInput{ID: "rq-ee", Text: "yes"})
		if errs.CodeOf(err) != errs.Usage || !strings.Contains(errs.TryOf(err), "rq-ee0001, rq-ee0002") {
			t.Fatalf("Answer(rq-ee): %v (Try: %s)", err, errs.TryOf(err))
		}
		for _, id := range []string{"rq-ee0001", "rq-ee0002"} {
			if r, _ := s.Request(id); r.Status != store.RequestPending {
				t.Fatalf("%s is %s after an ambiguous answer", id, r.Status)
			}
		}
	})
}

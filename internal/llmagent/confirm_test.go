package llmagent_test

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/plasmodium/pm/internal/config"
	"github.com/plasmodium/pm/internal/request"
	"github.com/plasmodium/pm/internal/state/fsstate"
	"github.com/plasmodium/pm/internal/store"
	"github.com/plasmodium/pm/internal/watch"
)

// answerEach answers the pending requests as they come, one answer each,
// in order (woken by file events), and hands over what was asked.
func answerEach(t *testing.T, s *store.Store, answers ...string) <-chan []*store.Request {
	out := make(chan []*store.Request, 1)
	go func() {
		ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
		defer cancel()
		var asked []*store.Request
		_ = os.MkdirAll(s.RequestsDir(), 0o755)
		for _, ans := range answers {
			var got *store.Request
			_ = watch.Until(ctx, func() []string { return []string{s.RequestsDir()} }, func() (bool, error) {
				if rs, err := request.List(s, fsstate.New(s), false); err == nil && len(rs) > 0 {
					got = rs[0]
				}
				return got != nil, nil
			})
			if got == nil {
				break
			}
			_, _ = request.Answer(s, fsstate.New(s), store.Human, got.ID, ans)
			asked = append(asked, got)
		}
		out <- asked
	}()
	return out
}

// governance.confirm holds write_file: the human sees the call and its
// diff; a confirmed write happens, a denied one does not and the model
// reads the denial with the reason.
func TestConfirmWrite(t *testing.T) {
	f := newFixture(t)
	f.s.Config().Governance.Confirm = []config.ConfirmRule{{Tool: "write_file"}}
	if err := os.WriteFile(filepath.Join(f.s.ProjectDir(), "a.txt"), []byte("old\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	tk, a := f.task(t, "Write files")
	f.srv.Enqueue(tool("write_file", `{"path":"a.txt","content":"new\n"}`), tool("write_file", `{"path":"b.txt","content":"b\n"}`),
		tool("done", `{}`), text("Done."))
	answered := answerEach(t, f.s, "yes", "no, b.txt is not wanted")
	if err := f.r.Run(context.Background(), a, "# You are the owner"); err != nil {
		t.Fatal(err)
	}
	asked := <-answered
	if b, _ := os.ReadFile(filepath.Join(f.s.ProjectDir(), "a.txt")); string(b) != "new\n" {
		t.Fatalf("a.txt = %q: the confirmed write did not happen", b)
	}
	if _, err := os.Stat(filepath.Join(f.s.ProjectDir(), "b.txt")); !os.IsNotExist(err) {
		t.Fatalf("b.txt was written: %v", err)
	}
	if got := f.srv.Requests()[2].LastMessage().Content; !strings.Contains(got, "write_file denied by human: no, b.txt is not wanted") {
		t.Fatalf("the model read %q", got)
	}
	if len(asked) != 2 || asked[0].Kind != request.KindConfirm || asked[0].TaskID != tk.ID ||
		!strings.Contains(asked[0].Question, "-old\n+new") || !strings.Contains(asked[0].Question, "write_file (a.txt)") {
		t.Fatalf("asked %+v", asked)
	}
	if got, _ := f.s.Task(tk.ID); got.Status != store.TaskDone {
		t.Fatalf("task %s", got.Status)
	}
}

// run_command rules match command patterns; "always" allows the rule for
// the rest of the task; done is held too (the operation confirms itself);
// a command no pattern matches runs without asking.
func TestConfirmAlwaysAndDone(t *testing.T) {
	f := newFixture(t)
	f.s.Config().Governance.Confirm = []config.ConfirmRule{{Tool: "run_command", Match: []string{"echo *"}}, {Tool: "done"}}
	tk, a := f.task(t, "Echo")
	echo := tool("run_command", `{"command":"echo hi"}`)
	f.srv.Enqueue(echo, echo, tool("run_command", `{"command":"true"}`), tool("done", `{}`), text("Done."))
	answered := answerEach(t, f.s, "always", "yes")
	if err := f.r.Run(context.Background(), a, "# You are the owner"); err != nil {
		t.Fatal(err)
	}
	asked := <-answered
	if len(asked) != 2 || asked[0].Confirm.Tool != "run_command" || asked[1].Confirm.Tool != "done" {
		t.Fatalf("asked %+v", asked)
	}
	all, _ := request.List(f.s, fsstate.New(f.s), true)
	if len(all) != 2 {
		t.Fatalf("%d requests, want 2: the second echo was allowed by always, true matches no pattern", len(all))
	}
	if got, _ := f.s.Task(tk.ID); got.Status != store.TaskDone {
		t.Fatalf("task %s", got.Status)
	}
}

// Unanswered within governance.confirm_timeout_seconds, a call is denied,
// and pm answers the request so it is not left pending.
func TestConfirmTimeout(t *testing.T) {
	f := newFixture(t)
	f.s.Config().Governance.Confirm = []config.ConfirmRule{{Tool: "run_command", Match: []string{"*git push*"}}}
	f.s.Config().Governance.ConfirmTimeoutSeconds = 1
	_, a := f.task(t, "Push")
	f.srv.Enqueue(tool("run_command", `{"command":"git push origin main"}`), tool("done", `{}`), text("Done."))
	if err := f.r.Run(context.Background(), a, "# You are the owner"); err != nil {
		t.Fatal(err)
	}
	if got := f.srv.Requests()[1].LastMessage().Content; !strings.Contains(got, "run_command denied by pm: no (timed out: unanswered after 1s)") {
		t.Fatalf("the model read %q", got)
	}
	all, _ := request.List(f.s, fsstate.New(f.s), true)
	if len(all) != 1 || all[0].Status != request.Answered || all[0].AnsweredBy != "pm" || !strings.Contains(all[0].Question, "run_command (git push origin main)") {
		t.Fatalf("requests %+v", all)
	}
}

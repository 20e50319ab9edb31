package ops

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/plasmodium/pm/internal/config"
	"github.com/plasmodium/pm/internal/openaitest"
	"github.com/plasmodium/pm/internal/state/fsstate"
	"github.com/plasmodium/pm/internal/store"
)

// evalScript plays a supervisor that asks for a refine on pass 1, a
// correctness angle that finds the bug on pass 1 only, and a worker whose
// single-shot fix (mode off) returns the file unchanged while its refine in
// the loop returns the fix: the plumbing, not a model's skill.
func evalScript(fixed string) func(openaitest.Request) openaitest.Reply {
	return func(req openaitest.Request) openaitest.Reply {
		system, user := req.Messages[0].Content, req.LastMessage().Content
		title := strings.TrimPrefix(strings.SplitN(system, "\n", 2)[0], "# ")
		pass := 0
		if i := strings.Index(user, `"pass_number": `); i >= 0 {
			fmt.Sscanf(user[i+len(`"pass_number": `):], "%d", &pass)
		} else if i := strings.Index(user, "pass "); i >= 0 {
			fmt.Sscanf(user[i+5:], "%d", &pass)
		}
		var text string
		switch title {
		case "Supervisor":
			text = `{"type":"verify","context":"ok","issues":[],"preserve":[],"questions":[]}`
			if pass == 1 {
				text = `{"type":"refine","context":"fix the loop","issues":[{"severity":"high","location":{"line":1},"description":"skips xs[0]"}],"preserve":[],"questions":[]}`
			}
		case "Worker":
			var code string
			if strings.Contains(user, `"request_id": "fix-once"`) {
				var req struct {
					Payload struct {
						Code string `json:"code"`
					} `json:"payload"`
				}
				_ = json.Unmarshal([]byte(user[strings.Index(user, "{"):]), &req)
				code = req.Payload.Code
			} else {
				code = fixed
			}
			b, _ := json.Marshal(map[string]any{"status": "success", "code": code, "reason": "fixed", "observations": []string{}})
			text = string(b)
		default:
			issues := "[]"
			if pass == 1 {
				issues = `[{"severity":"high","location":{"line":1},"description":"skips xs[0]"}]`
			}
			text = fmt.Sprintf(`{"angle_id":"correctness","issues_found":%s,"suggestions":[],"confidence":0.9,"pass_number":%d}`, issues, pass)
		}
		return openaitest.Reply{Content: text, Usage: &openaitest.Usage{PromptTokens: 9, CompletionTokens: 1}}
	}
}

func TestDesignEvalPlumbing(t *testing.T) {
	src := filepath.Join("..", "..", "testdata", "designer-eval", "01-sum")
	dir := t.TempDir()
	if err := os.CopyFS(filepath.Join(dir, "01-sum"), os.DirFS(src)); err != nil {
		t.Fatal(err)
	}
	fixed, err := os.ReadFile(filepath.Join(src, "fixed.go.txt"))
	if err != nil {
		t.Fatal(err)
	}
	srv := openaitest.New()
	t.Cleanup(srv.Close)
	srv.Handle(evalScript(string(fixed)))
	env := map[string]string{"OPENAI_BASE_URL": srv.BaseURL(), "PM_MODEL": "small"}
	sesss := newStore(t)
	sess := &Session{Store: sesss, State: fsstate.New(sesss), Actor: store.Human, Getenv: func(k string) string { return env[k] }}
	rep, err := DesignEval(context.Background(), sess, DesignEvalInput{Dir: dir, Angles: []string{"correctness"}})
	if err != nil {
		t.Fatal(err)
	}
	if rep.Total != 1 || rep.Off.Fixed != 0 || rep.On.Fixed != 1 || rep.On.FixRate != 1 {
		t.Fatalf("report: %+v", rep)
	}
	p := rep.Programs[0]
	if p.On.Outcome != "converged" || p.Off.Error != "" || p.On.Error != "" {
		t.Errorf("program: %+v", p)
	}
	// Mode off: one worker call. Mode on: pass 1 (angle, plan, refine),
	// passes 2 and 3 (angle, plan): 7 calls. 10 tokens each.
	if rep.Off.Tokens != 10 || rep.On.Tokens != 70 || len(srv.Requests()) != 8 {
		t.Errorf("tokens off %d on %d, %d requests", rep.Off.Tokens, rep.On.Tokens, len(srv.Requests()))
	}
	if !strings.Contains(rep.Text(), "mode on:  fixed 1/1 (100%)") {
		t.Errorf("text:\n%s", rep.Text())
	}
}

func TestDesignEvalRefusesBadDirs(t *testing.T) {
	sesss := newStore(t)
	sess := &Session{Store: sesss, State: fsstate.New(sesss), Actor: store.Human}
	dir := t.TempDir()
	if err := os.MkdirAll(filepath.Join(dir, "p"), 0o755); err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct{ dir, want string }{
		{filepath.Join(dir, "missing"), "eval directory"},
		{dir, "has no goal.txt"},
	} {
		if _, err := DesignEval(context.Background(), sess, DesignEvalInput{Dir: c.dir}); err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("DesignEval(%s) = %v, want %q", c.dir, err, c.want)
		}
	}
}

// The agent budget bounds each program's run (each mode), not the whole
// eval: with budgets.agent.max_turns 10, one program's two modes take 8
// model calls, so a budget shared across programs ran the second program
// out of turns and counted it not fixed.
func TestDesignEvalBudgetPerProgram(t *testing.T) {
	src := filepath.Join("..", "..", "testdata", "designer-eval", "01-sum")
	dir := t.TempDir()
	for _, name := range []string{"a", "b"} {
		if err := os.CopyFS(filepath.Join(dir, name), os.DirFS(src)); err != nil {
			t.Fatal(err)
		}
	}
	fixed, err := os.ReadFile(filepath.Join(src, "fixed.go.txt"))
	if err != nil {
		t.Fatal(err)
	}
	srv := openaitest.New()
	t.Cleanup(srv.Close)
	srv.Handle(evalScript(string(fixed)))
	env := map[string]string{"OPENAI_BASE_URL": srv.BaseURL(), "PM_MODEL": "small"}
	st := newStore(t)
	st.Config().Budgets.Agent = config.Budget{MaxTurns: 10}
	sess := &Session{Store: st, State: fsstate.New(st), Actor: store.Human, Getenv: func(k string) string { return env[k] }}
	rep, err := DesignEval(context.Background(), sess, DesignEvalInput{Dir: dir, Angles: []string{"correctness"}})
	if err != nil {
		t.Fatal(err)
	}
	if rep.On.Fixed != 2 {
		t.Fatalf("mode on fixed %d of 2; programs: %+v", rep.On.Fixed, rep.Programs)
	}
}

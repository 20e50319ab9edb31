package ops

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/plasmodium/pm/internal/errs"
	"github.com/plasmodium/pm/internal/openaitest"
	"github.com/plasmodium/pm/internal/sandbox"
	"github.com/plasmodium/pm/internal/store"
)

// The supervisor's tool_call to test runs the command on the candidate
// (the refined file, bind-mounted over the real one in the sandbox) and
// its exit code and output come back to the supervisor; the real file is
// untouched. Where the sandbox has no mount namespace the tool refuses,
// recoverably, and the design goes on.
func TestDesignTestTool(t *testing.T) {
	sess, file, fixed := designSetup(t, store.Human)
	srv := openaitest.New()
	t.Cleanup(srv.Close)
	base := evalScript(fixed)
	srv.Handle(func(req openaitest.Request) openaitest.Reply {
		user := req.LastMessage().Content
		if strings.HasPrefix(req.Messages[0].Content, "# Supervisor") && strings.Contains(user, "pass 2 of") && !strings.Contains(user, `"model": "tool:test"`) {
			return openaitest.Reply{Content: `{"type":"tool_call","context":"run the tests","issues":[],"preserve":[],"questions":[],"tool_name":"test","arguments":{}}`}
		}
		return base(req)
	})
	env := map[string]string{"OPENAI_BASE_URL": srv.BaseURL(), "PM_MODEL": "m"}
	sess.Getenv = func(k string) string { return env[k] }
	bug, _ := os.ReadFile(file)

	_, err := Design(context.Background(), sess, DesignInput{File: file, Goal: "sum", Angles: []string{"correctness"},
		Test: "grep -q 'range xs' prog.go && echo candidate-seen; exit 3"})
	if err != nil {
		t.Fatal(err)
	}
	var sawTools bool
	var answer string
	for _, r := range srv.Requests() {
		text := r.LastMessage().Content
		if strings.Contains(text, "Tools (tool_call): test") {
			sawTools = true
		}
		if strings.Contains(text, `"model": "tool:test"`) {
			answer = text
		}
	}
	if !sawTools {
		t.Error("the supervisor was not told of the test tool")
	}
	if sandbox.Available() == sandbox.ModeLandlockNS {
		if !strings.Contains(answer, `exit code 3\ncandidate-seen`) {
			t.Errorf("the supervisor did not get the test's result:\n%s", answer)
		}
	} else if !strings.Contains(answer, "tool_failed") || !strings.Contains(answer, "mount namespace") {
		t.Errorf("no recoverable refusal without a mount namespace:\n%s", answer)
	}
	if now, _ := os.ReadFile(file); string(now) != string(bug) {
		t.Errorf("the real file changed:\n%s", now)
	}
}

func TestTestRefusal(t *testing.T) {
	tests := []struct {
		name string
		off  bool
		mode sandbox.Mode
		want string
	}{
		{"mount namespace", false, sandbox.ModeLandlockNS, ""},
		{"sandbox off", true, sandbox.ModeLandlockNS, "sandbox.off"},
		{"landlock alone", false, sandbox.ModeLandlock, "mount namespace"},
		{"no sandbox", false, sandbox.ModeNone, "mount namespace"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			err := testRefusal(tt.off, tt.mode)
			if tt.want == "" {
				if err != nil {
					t.Fatalf("refused: %v", err)
				}
				return
			}
			if err == nil || !strings.Contains(err.Error(), tt.want) || errs.CodeOf(err) != errs.State {
				t.Errorf("got %v, want a state error about %s", err, tt.want)
			}
		})
	}
}

// The code designer's test command is the models' code run by pm: like
// run_command it cannot write what steers the unconfined side (issue 20):
// .git's config and hooks, prompts/.
func TestDesignTestToolSteering(t *testing.T) {
	if sandbox.Available() != sandbox.ModeLandlockNS {
		t.Skip("the test tool needs a mount namespace")
	}
	sess, _, fixed := designSetup(t, store.Human)
	project := sess.Store.ProjectDir()
	files := map[string]string{".git/config": "[core]\n", "prompts/greeter.md": "greeter\n"}
	for f, content := range files {
		p := filepath.Join(project, f)
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	if err := os.MkdirAll(filepath.Join(project, ".git", "hooks"), 0o755); err != nil {
		t.Fatal(err)
	}
	line := `r=0
printf '\tfsmonitor = touch pwned\n' >> .git/config && r=1
echo 'touch pwned' > .git/hooks/pre-commit && r=1
echo obey > prompts/greeter.md && r=1
echo "wrote=$r"`
	out, err := designTestTool(sess, "prog.go", line)(context.Background(), fixed, nil)
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(out, "wrote=0") {
		t.Errorf("the test command wrote:\n%s", out)
	}
	for f, content := range files {
		if data, _ := os.ReadFile(filepath.Join(project, f)); string(data) != content {
			t.Errorf("%s changed: %q", f, data)
		}
	}
	if _, err := os.Stat(filepath.Join(project, ".git", "hooks", "pre-commit")); err == nil {
		t.Error("a hook was written")
	}
}

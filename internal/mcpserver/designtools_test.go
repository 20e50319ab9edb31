package mcpserver

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/plasmodium/pm/internal/openaitest"
)

const (
	buggySum = "package prog\n\n// Sum returns the sum of xs.\nfunc Sum(xs []int) int {\n\tt := 0\n\tfor i := 1; i < len(xs); i++ {\n\t\tt += xs[i]\n\t}\n\treturn t\n}\n"
	fixedSum = "package prog\n\n// Sum returns the sum of xs.\nfunc Sum(xs []int) int {\n\tt := 0\n\tfor _, x := range xs {\n\t\tt += x\n\t}\n\treturn t\n}\n"
)

// designModel answers the code designer's requests: pass 1 finds the bug
// and the worker fixes it, later passes find nothing, so a design converges
// at pass 3 with one change.
func designModel(req openaitest.Request) openaitest.Reply {
	system, user := req.Messages[0].Content, req.LastMessage().Content
	title := strings.TrimPrefix(strings.SplitN(system, "\n", 2)[0], "# ")
	pass := 0
	if i := strings.Index(user, `"pass_number": `); i >= 0 {
		fmt.Sscanf(user[i+len(`"pass_number": `):], "%d", &pass)
	} else if i := strings.Index(user, "pass "); i >= 0 {
		fmt.Sscanf(user[i+5:], "%d", &pass)
	}
	issues := "[]"
	if pass == 1 {
		issues = `[{"severity":"high","location":{"line":1},"description":"skips xs[0]"}]`
	}
	var text string
	switch title {
	case "Supervisor":
		text = `{"type":"verify","context":"ok","issues":[],"preserve":[],"questions":[]}`
		if pass == 1 {
			text = `{"type":"refine","context":"fix the loop","issues":` + issues + `,"preserve":[],"questions":[]}`
		}
	case "Worker":
		b, _ := json.Marshal(map[string]any{"status": "success", "code": fixedSum, "reason": "fixed", "observations": []string{}})
		text = string(b)
	default:
		text = fmt.Sprintf(`{"angle_id":"correctness","issues_found":%s,"suggestions":[],"confidence":0.9,"pass_number":%d}`, issues, pass)
	}
	return openaitest.Reply{Content: text, Usage: &openaitest.Usage{PromptTokens: 9, CompletionTokens: 1}}
}

// The design tool runs pm design's operation: the file is untouched until
// a call says apply=true; designs lists what ran; bad input is a tool
// error with pm's Try: line and creates nothing.
func TestDesignTools(t *testing.T) {
	srv := openaitest.New()
	t.Cleanup(srv.Close)
	srv.Handle(designModel)
	sess := newSession(t)
	env := map[string]string{"OPENAI_BASE_URL": srv.BaseURL(), "PM_MODEL": "m"}
	sess.Getenv = func(k string) string { return env[k] }
	file := filepath.Join(sess.Store.ProjectDir(), "sum.go")
	if err := os.WriteFile(file, []byte(buggySum), 0o644); err != nil {
		t.Fatal(err)
	}
	_, cs := connect(t, sess, ToolsTasks, nil)
	design := func(args map[string]any) (string, bool) { return callTool(t, cs, "design", args) }

	for _, tt := range []struct {
		name string
		args map[string]any
		want string
	}{
		{"no goal", map[string]any{"file": "sum.go"}, "Try: say what the code must do"},
		{"no file", map[string]any{"goal": "sum"}, "a design needs a file"},
		{"outside", map[string]any{"file": "../x.go", "goal": "sum"}, "outside the project"},
		{"unknown angle", map[string]any{"file": "sum.go", "goal": "sum", "angles": []string{"nosuch"}}, `no angle "nosuch"`},
		{"file and resume", map[string]any{"file": "sum.go", "resume": "ds-aaaaaa"}, "not both"},
	} {
		if got, isErr := design(tt.args); !isErr || !strings.Contains(got, tt.want) {
			t.Errorf("%s: isError %v: %s\nwant %q", tt.name, isErr, got, tt.want)
		}
	}
	if got, _ := callTool(t, cs, "designs", nil); got != "[]" {
		t.Fatalf("designs after refusals: %s", got)
	}

	got, isErr := design(map[string]any{"file": "sum.go", "goal": "Sum returns the sum of xs", "angles": []string{"correctness"}})
	if isErr {
		t.Fatal(got)
	}
	var res struct {
		Report struct {
			ID, Status, Outcome, Diff string
		} `json:"report"`
		Applied bool `json:"applied"`
	}
	if err := json.Unmarshal([]byte(got), &res); err != nil {
		t.Fatal(err, got)
	}
	if res.Report.Status != "complete" || res.Report.Outcome != "converged" || !strings.Contains(res.Report.Diff, "+\tfor _, x := range xs {") || res.Applied {
		t.Fatalf("design: %s", got)
	}
	if b, _ := os.ReadFile(file); string(b) != buggySum {
		t.Fatalf("file written without apply:\n%s", b)
	}
	if got, _ := callTool(t, cs, "designs", nil); !strings.Contains(got, `"id":"`+res.Report.ID+`"`) || !strings.Contains(got, `"modified":1`) {
		t.Errorf("designs: %s", got)
	}
	requests := len(srv.Requests())

	// Resuming a finished design shows it (no model call); apply writes it.
	got, isErr = design(map[string]any{"resume": res.Report.ID, "apply": true})
	if isErr || !strings.Contains(got, `"applied":true`) {
		t.Fatalf("resume and apply: %s", got)
	}
	if b, _ := os.ReadFile(file); string(b) != fixedSum {
		t.Errorf("file after apply:\n%s", b)
	}
	if n := len(srv.Requests()); n != requests {
		t.Errorf("showing a finished design made %d model requests", n-requests)
	}
	// The file is no longer what the design read: refused, unchanged.
	if got, isErr = design(map[string]any{"resume": res.Report.ID, "apply": true}); !isErr || !strings.Contains(got, "changed since design") {
		t.Errorf("apply twice: %v %s", isErr, got)
	}
}

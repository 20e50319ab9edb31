package replay_test

import (
	"context"
	"encoding/json"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/plasmodium/pm/internal/errs"
	"github.com/plasmodium/pm/internal/llm"
	"github.com/plasmodium/pm/internal/openaitest"
	"github.com/plasmodium/pm/internal/replay"
)

func load(t *testing.T, js string) *replay.Script {
	t.Helper()
	s, err := replay.Load(strings.NewReader(js))
	if err != nil {
		t.Fatal(err)
	}
	return s
}

func TestLoadRejects(t *testing.T) {
	for name, js := range map[string]string{
		"both":            `{"steps":{"owner":[{"content":"x","tool":"say"}]}}`,
		"neither":         `{"steps":{"owner":[{"args":{}}]}}`,
		"unknown field":   `{"steps":{},"extra":1}`,
		"bad delay":       `{"steps":{"owner":[{"content":"x","delay":"soon"}]}}`,
		"negative":        `{"steps":{"owner":[{"content":"x","delay":"-1s"}]}}`,
		"not json":        `{`,
		"status+content":  `{"steps":{"owner":[{"status":429,"content":"x"}]}}`,
		"status+tool":     `{"steps":{"owner":[{"status":500,"tool":"say"}]}}`,
		"status 200":      `{"steps":{"owner":[{"status":200}]}}`,
		"retry no status": `{"steps":{"owner":[{"content":"x","retry_after":"1s"}]}}`,
		"bad retry":       `{"steps":{"owner":[{"status":429,"retry_after":"later"}]}}`,
	} {
		t.Run(name, func(t *testing.T) {
			if _, err := replay.Load(strings.NewReader(js)); err == nil || !strings.Contains(err.Error(), "replay script") {
				t.Fatalf("Load(%s) = %v, want a replay script error", js, err)
			}
		})
	}
}

func TestLandingLoads(t *testing.T) {
	s, err := replay.Landing()
	if err != nil {
		t.Fatal(err)
	}
	for _, role := range []string{"owner", "designer", "developer"} {
		if len(s.Steps[role]) == 0 {
			t.Errorf("landing script has no steps for %s", role)
		}
	}
}

func req(system string, msgs ...openaitest.Message) openaitest.Request {
	return openaitest.Request{Messages: append([]openaitest.Message{{Role: "system", Content: system}}, msgs...)}
}

func TestIdentify(t *testing.T) {
	for _, c := range []struct{ system, name, role string }{
		{"# You are @cedar_a1b2, owner of task tk-000001: x", "cedar_a1b2", "owner"},
		{"# You are @oak_c3d4, the designer in phase \"Design\"", "oak_c3d4", "designer"},
		{"---\n# Greeter\n\n## Identity\nYou are warm.", "greeter", "greeter"},
		{"# Ruby Debugger\n\nYou debug Ruby.", "ruby_debugger", "ruby_debugger"},
		{"no idea who I am", "unknown", "unknown"},
	} {
		name, role := replay.Identify(req(c.system))
		if name != c.name || role != c.role {
			t.Errorf("Identify(%q) = %s, %s; want %s, %s", c.system, name, role, c.name, c.role)
		}
	}
	if name, _ := replay.Identify(openaitest.Request{}); name != "unknown" {
		t.Errorf("no system message: %s", name)
	}
}

// Each agent has its own cursor through its role's steps; once they are used
// up it gets the role's "otherwise" text, else PASS.
func TestPlayerCursorsPerAgent(t *testing.T) {
	p := replay.NewPlayer(load(t, `{"steps":{
		"designer":[{"tool":"say","args":{"message":"hi"}},{"content":"done","delay":"5ms"}],
		"owner":[{"content":"ok"}]},
		"otherwise":{"designer":"nothing more"}}`))
	a := req("You are @a_1, the designer in phase")
	b := req("You are @b_2, the designer in phase")
	o := req("You are @o_3, owner of task")

	r := p.Reply(a)
	if len(r.ToolCalls) != 1 || r.ToolCalls[0].Name != "say" || r.ToolCalls[0].Arguments != `{"message":"hi"}` {
		t.Fatalf("a step 1 = %+v", r)
	}
	if r := p.Reply(b); len(r.ToolCalls) != 1 {
		t.Fatalf("b starts at step 1 too: %+v", r)
	}
	if r := p.Reply(a); r.Content != "done" || r.Delay != 5*time.Millisecond {
		t.Fatalf("a step 2 = %+v", r)
	}
	if r := p.Reply(a); r.Content != "nothing more" {
		t.Fatalf("a after its steps = %+v", r)
	}
	if r := p.Reply(o); r.Content != "ok" {
		t.Fatalf("owner = %+v", r)
	}
	if r := p.Reply(o); r.Content != "PASS" {
		t.Fatalf("owner after its steps, no otherwise = %+v", r)
	}
	if r := p.Reply(req("stranger")); r.Content != "PASS" {
		t.Fatalf("unknown agent = %+v", r)
	}
}

// A step with until repeats until the last tool result contains the text; a
// result that is not a tool message never ends it.
func TestPlayerUntil(t *testing.T) {
	p := replay.NewPlayer(load(t, `{"steps":{"owner":[
		{"tool":"chat","args":{"wait":true},"until":"closed"},
		{"tool":"done"}]}}`))
	who := "You are @o_1, owner of task"
	step := func(last openaitest.Message) string {
		r := p.Reply(req(who, last))
		if len(r.ToolCalls) != 1 {
			t.Fatalf("want a tool call, got %+v", r)
		}
		return r.ToolCalls[0].Name + " " + r.ToolCalls[0].Arguments
	}
	if got := step(openaitest.Message{Role: "user", Content: "Begin"}); got != `chat {"wait":true}` {
		t.Fatal(got)
	}
	if got := step(openaitest.Message{Role: "tool", Content: "[10:00] @x: hi"}); got != `chat {"wait":true}` {
		t.Fatal(got)
	}
	if got := step(openaitest.Message{Role: "user", Content: "phase closed"}); got != `chat {"wait":true}` {
		t.Fatal("a user message must not end the wait: ", got)
	}
	if got := step(openaitest.Message{Role: "tool", Content: "wrong state: phase ph-1 is closed (limit)"}); got != "done {}" {
		t.Fatal(got)
	}
}

// The player behind the OpenAI-protocol server drives the real loop: a tool
// call with its arguments, then the answer.
func TestPlayerThroughServerAndLoop(t *testing.T) {
	srv := openaitest.New()
	defer srv.Close()
	srv.Handle(replay.NewPlayer(load(t, `{"steps":{"reader":[
		{"tool":"list_files","args":{"path":"."}},
		{"content":"Two files."}]}}`)).Reply)
	var got string
	loop := &llm.Loop{
		Provider: llm.Provider{BaseURL: srv.BaseURL(), Model: "replay"},
		System:   "# Reader\n\nYou read.",
		Tools: []llm.Tool{{Name: "list_files", Call: func(_ context.Context, args json.RawMessage) (string, error) {
			got = string(args)
			return "a.txt\nb.txt", nil
		}}},
	}
	out, err := loop.Run(context.Background(), "what's in here?")
	if err != nil {
		t.Fatal(err)
	}
	if out != "Two files." || got != `{"path":"."}` {
		t.Fatalf("answer %q, tool args %q", out, got)
	}
	reqs := srv.Requests()
	if len(reqs) != 2 || reqs[1].LastMessage().Role != "tool" || reqs[1].LastMessage().Content != "a.txt\nb.txt" {
		t.Fatalf("the tool result did not go back: %+v", reqs)
	}
}

// An error step answers with its HTTP status (and Retry-After); it uses up
// one request, so a retrying client gets the next step.
func TestPlayerErrorSteps(t *testing.T) {
	p := replay.NewPlayer(load(t, `{"steps":{"owner":[
		{"status":429,"retry_after":"1s"},{"status":500,"delay":"5ms"},{"content":"ok"}]}}`))
	o := req("You are @o_1, owner of task")
	if r := p.Reply(o); r.Status != 429 || r.RetryAfter != time.Second || r.Content != "" || r.ToolCalls != nil {
		t.Fatalf("step 1 = %+v", r)
	}
	if r := p.Reply(o); r.Status != 500 || r.RetryAfter != 0 || r.Delay != 5*time.Millisecond {
		t.Fatalf("step 2 = %+v", r)
	}
	if r := p.Reply(o); r.Status != 0 || r.Content != "ok" {
		t.Fatalf("step 3 = %+v", r)
	}
}

// Through the server, the real loop retries past a 429 and a 500.
func TestPlayerErrorStepsThroughLoop(t *testing.T) {
	srv := openaitest.New()
	defer srv.Close()
	srv.Handle(replay.NewPlayer(load(t, `{"steps":{"reader":[
		{"status":429,"retry_after":"10ms"},{"status":500},{"content":"fine"}]}}`)).Reply)
	var retries []int
	loop := &llm.Loop{
		Provider: llm.Provider{BaseURL: srv.BaseURL(), Model: "replay"},
		System:   "# Reader\n\nYou read.",
		Retry:    llm.RetryPolicy{BaseDelay: time.Millisecond, MaxDelay: 50 * time.Millisecond},
		OnEvent: func(ev llm.Event) {
			if ev.Kind == llm.EventRetry {
				retries = append(retries, ev.Status)
			}
		},
	}
	out, err := loop.Run(context.Background(), "hi")
	if err != nil {
		t.Fatal(err)
	}
	if out != "fine" || len(retries) != 2 || retries[0] != 429 || retries[1] != 500 {
		t.Fatalf("answer %q, retries %v", out, retries)
	}
	if n := len(srv.Requests()); n != 3 {
		t.Fatalf("%d requests, want 3", n)
	}
}

// The five demos of the seed load, in order, each reachable by number and
// by name, and the project they explore has the files their steps read.
func TestTalkDemos(t *testing.T) {
	all, err := replay.TalkDemos()
	if err != nil {
		t.Fatal(err)
	}
	if len(all) != 5 {
		t.Fatalf("%d demos, want the seed's 5", len(all))
	}
	files, err := replay.DemoProject()
	if err != nil {
		t.Fatal(err)
	}
	for i, s := range all {
		if s.Talk.N != i+1 {
			t.Errorf("demo %d is numbered %d", i+1, s.Talk.N)
		}
		for _, which := range []string{strconv.Itoa(s.Talk.N), s.Talk.Name} {
			if got, err := replay.TalkDemo(which); err != nil || got.Talk.N != s.Talk.N {
				t.Errorf("TalkDemo(%q) = %v, %v", which, got, err)
			}
		}
		for who, steps := range s.Steps {
			for _, st := range steps {
				var a struct{ Path string }
				if st.Tool == "read_file" && json.Unmarshal(st.Args, &a) == nil && files[a.Path] == nil {
					t.Errorf("demo %d: %s reads %s, which the demo project lacks", s.Talk.N, who, a.Path)
				}
			}
		}
	}
	if _, err := replay.TalkDemo("6"); err == nil || !strings.Contains(errs.TryOf(err), "1 simple") {
		t.Fatalf("unknown demo: %v (try %q)", err, errs.TryOf(err))
	}
}

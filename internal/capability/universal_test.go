package capability_test

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/plasmodium/pm/internal/capability"
	"github.com/plasmodium/pm/internal/errs"
	"github.com/plasmodium/pm/internal/prompt"
	"github.com/plasmodium/pm/internal/request"
	"github.com/plasmodium/pm/internal/state/fsstate"
	"github.com/plasmodium/pm/internal/store"
	"github.com/plasmodium/pm/internal/watch"
)

func TestEveryCatalogNameHasATool(t *testing.T) {
	env := &capability.Env{Store: newStore(t), Actor: store.Human}
	env.State = fsstate.New(env.Store)
	tools, err := capability.Tools(env, obj(prompt.BuiltinNames("")...))
	if err != nil {
		t.Fatal(err)
	}
	if len(tools) != len(prompt.BuiltinNames("")) {
		t.Fatalf("%d tools for %d catalog names", len(tools), len(prompt.BuiltinNames("")))
	}
}

func TestUniversalAlwaysPresent(t *testing.T) {
	env := &capability.Env{Store: newStore(t), Actor: store.Human}
	env.State = fsstate.New(env.Store)
	tools, err := capability.Tools(env, obj())
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, tl := range tools {
		names = append(names, tl.Name)
	}
	if strings.Join(names, ",") != "ask_human,create_capability,think" {
		t.Fatalf("tools of an object without capabilities: %v", names)
	}
}

func TestThink(t *testing.T) {
	var thoughts []string
	env := &capability.Env{Store: newStore(t), Actor: store.Human, OnThink: func(s string) { thoughts = append(thoughts, s) }}
	env.State = fsstate.New(env.Store)
	if got := call(t, tool(t, env, obj(), "think"), m{"thought": "list first, then read"}); got != "ok" {
		t.Fatalf("think = %q", got)
	}
	if len(thoughts) != 1 || thoughts[0] != "list first, then read" {
		t.Fatalf("thoughts = %v", thoughts)
	}
}

func TestAskHumanBlocksUntilAnswered(t *testing.T) {
	s := newStore(t)
	a := &store.Agent{Name: "cedar_0001", TaskID: "tk-000001"}
	env := &capability.Env{Store: s, Actor: store.Actor{Name: a.Name, Agent: a}}
	env.State = fsstate.New(env.Store)
	ask := tool(t, env, obj("ask_human"), "ask_human") // an agent of a task: declared
	got := make(chan string, 1)
	go func() {
		out, err := ask.Call(context.Background(), []byte(`{"question":"Delete all files in spec/?"}`))
		if err != nil {
			out = "error " + err.Error()
		}
		got <- out
	}()
	// The request appears (woken by file events, no sleeps)...
	var id string
	err := watch.Until(context.Background(), func() []string { return []string{s.RequestsDir()} }, func() (bool, error) {
		rs, err := request.List(s, fsstate.New(s), false)
		if err != nil || len(rs) == 0 {
			return false, err
		}
		id = rs[0].ID
		return true, nil
	})
	if err != nil {
		t.Fatal(err)
	}
	// ...and the tool is still waiting.
	select {
	case out := <-got:
		t.Fatalf("ask_human returned before the answer: %q", out)
	default:
	}
	if _, err := request.Answer(s, fsstate.New(s), store.Human, id, "no, keep them"); err != nil {
		t.Fatal(err)
	}
	if out := <-got; out != "the human answered: no, keep them" {
		t.Fatalf("ask_human = %q", out)
	}
	mustContain(t, call(t, ask, m{"question": ""}), "bad arguments", "empty question")
}

func TestCreateCapability(t *testing.T) {
	s := newStore(t)
	var created []*prompt.Object
	env := &capability.Env{Store: s, Actor: store.Human, OnCreated: func(o *prompt.Object) { created = append(created, o) }}
	env.State = fsstate.New(env.Store)
	create := tool(t, env, obj(), "create_capability")

	got := call(t, create, m{"name": "ruby_debugger", "description": "Finds bugs in Ruby code",
		"capabilities": []string{"read_file", "list_files", "reader"}, "body": "# Ruby debugger\n\nYou find bugs.\n"})
	mustContain(t, got, "created prompt object ruby_debugger", "read_file, list_files, reader")
	if len(created) != 1 || created[0].Name != "ruby_debugger" {
		t.Fatalf("OnCreated got %v", created)
	}
	path := filepath.Join(s.Root, "prompts", "ruby_debugger.md")
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	if !strings.HasPrefix(string(data), "---\nname: ruby_debugger\n") || !strings.Contains(string(data), "\n---\n\n# Ruby debugger\n") {
		t.Fatalf("file:\n%s", data)
	}
	// Every later load sees it, it is a known capability, and other objects
	// can list it and get a tool for it at once.
	set, err := prompt.LoadProject(s, fsstate.New(s))
	if err != nil {
		t.Fatal(err)
	}
	o, ok := set["ruby_debugger"]
	if !ok || o.Description != "Finds bugs in Ruby code" || strings.Join(o.Capabilities, ",") != "read_file,list_files,reader" {
		t.Fatalf("loaded %+v", o)
	}
	if !set.Known("ruby_debugger") {
		t.Fatal("not Known")
	}
	var calls []string
	env.CallPO = func(ctx context.Context, to, msg string) (string, error) {
		calls = append(calls, to+": "+msg)
		return "found it: line 42", nil
	}
	po := tool(t, env, obj("ruby_debugger"), "ruby_debugger")
	mustContain(t, po.Description, "Finds bugs in Ruby code")
	if got := call(t, po, m{"message": "why does it crash?"}); got != "found it: line 42" {
		t.Fatalf("PO tool = %q", got)
	}
	if len(calls) != 1 || calls[0] != "ruby_debugger: why does it crash?" {
		t.Fatalf("CallPO got %v", calls)
	}

	refused := []struct {
		name string
		args any
		want string
	}{
		{"existing", m{"name": "ruby_debugger", "description": "x", "body": "x"}, "wrong state: a prompt object \"ruby_debugger\" already exists"},
		{"builtin object", m{"name": "greeter", "description": "x", "body": "x"}, "already exists (builtin:greeter.md)"},
		{"builtin capability", m{"name": "read_file", "description": "x", "body": "x"}, "is a built-in capability"},
		{"bad name", m{"name": "../evil", "description": "x", "body": "x"}, "bad arguments: bad name"},
		{"upper case", m{"name": "Evil", "description": "x", "body": "x"}, "bad name"},
		{"unknown capability", m{"name": "helper", "description": "x", "capabilities": []string{"teleport"}, "body": "x"}, `not found: unknown capability "teleport"`},
		{"itself", m{"name": "helper", "description": "x", "capabilities": []string{"helper"}, "body": "x"}, "is the new object itself"},
		{"empty body", m{"name": "helper", "description": "x", "body": " "}, "the body is empty"},
		{"multi-line description", m{"name": "helper", "description": "a\nb", "body": "x"}, "one line"},
	}
	for _, c := range refused {
		t.Run(c.name, func(t *testing.T) {
			mustContain(t, call(t, create, c.args), c.want)
		})
	}
	if _, err := os.Stat(filepath.Join(s.Root, "prompts", "helper.md")); err == nil {
		t.Fatal("a refused object was written")
	}
	// YAML-looking text in the description stays text.
	mustContain(t, call(t, create, m{"name": "tricky", "description": "a: b # c [d]", "body": "---\nnot frontmatter\n"}), "created")
	set, err = prompt.LoadProject(s, fsstate.New(s))
	if err != nil || set["tricky"].Description != "a: b # c [d]" {
		t.Fatalf("tricky: %v %+v", err, set["tricky"])
	}
}

func TestObjectToolWithoutHost(t *testing.T) {
	env := &capability.Env{Store: newStore(t), Actor: store.Human}
	env.State = fsstate.New(env.Store)
	po := tool(t, env, obj("greeter"), "greeter")
	mustContain(t, call(t, po, m{"message": "hi"}), "error: messaging prompt objects is not available")
	mustContain(t, call(t, po, m{}), "bad arguments", "empty message")
	env.CallPO = func(ctx context.Context, to, msg string) (string, error) {
		return "", errs.Timeoutf("try later", "greeter did not answer")
	}
	mustContain(t, call(t, tool(t, env, obj("greeter"), "greeter"), m{"message": "hi"}), "timed out: greeter did not answer", "Try: try later")
}

func TestValidateNamesFileAndLine(t *testing.T) {
	s := newStore(t)
	bad := "---\nname: broken\ndescription: has a typo\ncapabilities:\n  - read_file\n  - teleport\n---\nbody\n"
	path := filepath.Join(s.Root, "prompts", "broken.md")
	if err := os.WriteFile(path, []byte(bad), 0o644); err != nil {
		t.Fatal(err)
	}
	_, err := prompt.LoadProject(s, fsstate.New(s))
	if err == nil {
		t.Fatal("an unknown capability loaded")
	}
	want := path + `:6: unknown capability "teleport"`
	if !strings.Contains(err.Error(), want) {
		t.Fatalf("error %q does not contain %q", err, want)
	}
	var pe *prompt.Error
	if !errors.As(err, &pe) || pe.File != path || pe.Line != 6 {
		t.Fatalf("error %#v", pe)
	}

	// Flow style names the frontmatter line too; each problem is reported.
	cases := []struct {
		name, text string
		want       []string
	}{
		{"flow", "---\nname: x\ncapabilities: [say, nope]\n---\n", []string{"x.md:3: unknown capability \"nope\""}},
		{"twice", "---\nname: x\ncapabilities:\n- say\n- say\n---\n", []string{"x.md:5: capability \"say\" is listed twice"}},
		{"itself", "---\nname: x\ncapabilities: [x]\n---\n", []string{"x.md:3: capability \"x\" is the prompt object itself"}},
		{"builtin name", "---\nname: say\n---\n", []string{"say.md:2: name \"say\" is a built-in capability"}},
		{"several", "---\nname: x\ncapabilities:\n  - a1\n  - say\n  - a2\n---\n", []string{"x.md:4: unknown capability \"a1\"", "x.md:6: unknown capability \"a2\""}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			stem := "x"
			if c.name == "builtin name" {
				stem = "say"
			}
			o, err := prompt.Parse(stem+".md", []byte(c.text))
			if err != nil {
				t.Fatal(err)
			}
			err = prompt.Set{o.Name: o}.Validate()
			if err == nil {
				t.Fatal("valid")
			}
			for _, w := range c.want {
				if !strings.Contains(err.Error(), w) {
					t.Fatalf("error %q does not contain %q", err, w)
				}
			}
		})
	}

	// Tools names the line of an unknown capability of an object that was
	// never loaded into the set.
	env := &capability.Env{Store: newStore(t), Actor: store.Human}
	env.State = fsstate.New(env.Store)
	o, err := prompt.Parse("/p/solo.md", []byte("---\nname: solo\ncapabilities:\n  - think\n  - warp\n---\n"))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := capability.Tools(env, o); err == nil || !strings.Contains(err.Error(), "/p/solo.md:5: unknown capability \"warp\"") {
		t.Fatalf("Tools error = %v", err)
	}
}

func TestBuiltinPromptsValidate(t *testing.T) {
	ps := newStore(t)
	set, err := prompt.LoadProject(ps, fsstate.New(ps))
	if err != nil {
		t.Fatal(err)
	}
	for _, name := range set.Names() {
		env := &capability.Env{Store: newStore(t), Actor: store.Human}
		env.State = fsstate.New(env.Store)
		if _, err := capability.Tools(env, set[name]); err != nil {
			t.Fatalf("%s: %v", name, err)
		}
	}
}

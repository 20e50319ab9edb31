package capability_test

import (
	"context"
	"encoding/json"
	"strings"
	"testing"

	"github.com/plasmodium/pm/internal/agent"
	"github.com/plasmodium/pm/internal/capability"
	"github.com/plasmodium/pm/internal/llm"
	"github.com/plasmodium/pm/internal/prompt"
	"github.com/plasmodium/pm/internal/state/fsstate"
	"github.com/plasmodium/pm/internal/store"
	"github.com/plasmodium/pm/internal/store/storetest"
)

// newStore makes a real state directory in a temp project, on runtime none.
func newStore(t testing.TB) *store.Store {
	t.Helper()
	s := storetest.New(t)
	s.Config().Runtime.Default = "none"
	return s
}

func launcher(s *store.Store) *agent.Launcher {
	// Runtime none never spawns, so the binary is never run.
	return &agent.Launcher{Store: s, State: fsstate.New(s), Exe: "/nonexistent/pm"}
}

// obj is a prompt object with the given capabilities (not on disk).
func obj(caps ...string) *prompt.Object {
	return &prompt.Object{Name: "tester", Capabilities: caps, Source: "tester.md"}
}

// tool builds env's tools for obj and returns the one named name.
func tool(t testing.TB, env *capability.Env, o *prompt.Object, name string) llm.Tool {
	t.Helper()
	tools, err := capability.Tools(env, o)
	if err != nil {
		t.Fatal(err)
	}
	for _, tl := range tools {
		if tl.Name == name {
			return tl
		}
	}
	t.Fatalf("no tool %s", name)
	return llm.Tool{}
}

// call runs a tool with args given as a Go value (or a raw JSON string).
func call(t testing.TB, tl llm.Tool, args any) string {
	t.Helper()
	var raw json.RawMessage
	switch a := args.(type) {
	case string:
		raw = json.RawMessage(a)
	default:
		data, err := json.Marshal(a)
		if err != nil {
			t.Fatal(err)
		}
		raw = data
	}
	out, err := tl.Call(context.Background(), raw)
	if err != nil {
		t.Fatalf("%s(%s): error %v", tl.Name, raw, err)
	}
	return out
}

func mustContain(t *testing.T, got string, wants ...string) {
	t.Helper()
	for _, w := range wants {
		if !strings.Contains(got, w) {
			t.Fatalf("result does not contain %q:\n%s", w, got)
		}
	}
}

type m = map[string]any

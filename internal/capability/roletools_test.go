package capability_test

import (
	"slices"
	"testing"

	"github.com/plasmodium/pm/internal/capability"
	"github.com/plasmodium/pm/internal/llm"
	"github.com/plasmodium/pm/internal/prompt"
	"github.com/plasmodium/pm/internal/state/fsstate"
	"github.com/plasmodium/pm/internal/store"
)

func toolNames(tools []llm.Tool) []string {
	names := make([]string, len(tools))
	for i, t := range tools {
		names[i] = t.Name
	}
	return names
}

// A role's tool list is what its prompt allows: an owner or a role agent
// of a task gets its declared capabilities, in order, and nothing else (no
// undeclared universal: each tool costs every call); a resident prompt
// object keeps the universal ones (the PromptObjects contract).
func TestRoleToolsAreItsCapabilities(t *testing.T) {
	env, tk := ownerEnv(t)
	set, err := prompt.LoadProject(env.Store, fsstate.New(env.Store))
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		prompt string
		agent  *store.Agent
		want   func(o *prompt.Object) []string
	}{
		{"owner", env.Actor.Agent, declared},
		{"designer", &store.Agent{Name: "d_0001", Prompt: "designer", Role: "designer", TaskID: tk.ID, PhaseID: "ph-000001"}, declared},
		{"developer", &store.Agent{Name: "d_0002", Prompt: "developer", Role: "developer", TaskID: tk.ID, PhaseID: "ph-000001"}, declared},
		{"pm", &store.Agent{Name: "p_0001", Prompt: "pm", Role: "pm", TaskID: tk.ID, PhaseID: "ph-000001"}, declared},
		{"copywriter", &store.Agent{Name: "c_0001", Prompt: "copywriter", Role: "copywriter", TaskID: tk.ID, PhaseID: "ph-000001"}, declared},
		{"qa", &store.Agent{Name: "q_0001", Prompt: "qa", Role: "qa", TaskID: tk.ID, PhaseID: "ph-000001"}, declared},
		{"greeter", &store.Agent{Name: "greeter", Prompt: "greeter"}, withUniversals},
		{"reader", nil, withUniversals}, // the human's view (pm tools, MCP)
	} {
		o := set[tc.prompt]
		actor := store.Human
		if tc.agent != nil {
			actor = store.Actor{Name: tc.agent.Name, Agent: tc.agent}
		}
		tools, err := capability.Tools(&capability.Env{Store: env.Store, State: env.State, Actor: actor, Launcher: env.Launcher}, o)
		if err != nil {
			t.Fatal(err)
		}
		if got, want := toolNames(tools), tc.want(o); !slices.Equal(got, want) {
			t.Errorf("%s: tools %v, want %v", tc.prompt, got, want)
		}
	}
}

func declared(o *prompt.Object) []string { return o.Capabilities }

func withUniversals(o *prompt.Object) []string {
	names := slices.Clone(o.Capabilities)
	for _, u := range prompt.Universals() {
		if !slices.Contains(names, u) {
			names = append(names, u)
		}
	}
	return names
}

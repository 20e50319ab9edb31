package llmagent

import (
	"encoding/json"
	"fmt"

	"github.com/plasmodium/pm/internal/agent"
	"github.com/plasmodium/pm/internal/capability"
	"github.com/plasmodium/pm/internal/config"
	"github.com/plasmodium/pm/internal/llm"
	"github.com/plasmodium/pm/internal/prompt"
	"github.com/plasmodium/pm/internal/state"
	"github.com/plasmodium/pm/internal/store"
)

// What pm itself writes into an agent's conversation (besides the system
// prompt and the tools): the first message of an owner and of a role agent,
// and the wrapper around what a role agent is woken with.
const (
	ownerBegin = "Begin. You own task %s: %s"
	roleEnter  = "Enter the room: phase %q. Read the room with chat, then give your view with say."
	roomNew    = "New in the room:\n"
	roomAsk    = "If you have something to add, call say with one short message; otherwise answer PASS."
)

// Overhead is what pm sends with every model call of one role before any
// work: its rendered system prompt and its tool list (JSON as a request
// carries it), and the text pm adds to the conversation (Context: an
// owner's first message; a role agent's first message and the wrapper of
// each wake-up). In bytes; Tokens estimates at four bytes a token.
type Overhead struct {
	Role    string   `json:"role"`
	Prompt  int      `json:"prompt_bytes"`
	Tools   int      `json:"tools_bytes"`
	Context int      `json:"context_bytes"`
	Names   []string `json:"tools"`
}

// Fixed is the bytes every call of the role pays: prompt and tools.
func (o Overhead) Fixed() int { return o.Prompt + o.Tools }

// Tokens is Fixed at the usual estimate of four bytes a token.
func (o Overhead) Tokens() int { return (o.Fixed() + 3) / 4 }

// OverheadRoles are the roles of the landing flow (pm demo) and the other
// built-in role prompts.
var OverheadRoles = []string{"owner", "designer", "developer", "pm", "copywriter", "qa"}

// Overheads measures each role of OverheadRoles on task t of s (a phase
// named phase of limit messages for the role agents), as a host would
// render and equip it.
func Overheads(s *store.Store, st state.State, t *store.Task, phase string, limit int) ([]Overhead, error) {
	set, err := prompt.LoadProject(s, st)
	if err != nil {
		return nil, err
	}
	var out []Overhead
	for _, role := range OverheadRoles {
		obj, err := set.Lookup(role)
		if err != nil {
			return nil, err
		}
		a := &store.Agent{Name: role + "_0000", Prompt: role, TaskID: t.ID, Runtime: config.RuntimeLLM}
		context := fmt.Sprintf(ownerBegin, t.ID, t.Description)
		if role != "owner" {
			a.Role, a.PhaseID = role, "ph-000000"
			context = fmt.Sprintf(roleEnter, phase) + roomNew + roomAsk
		}
		vars := agent.Vars(s, st, a)
		if role != "owner" {
			vars["PHASE_NAME"], vars["LIMIT"] = phase, fmt.Sprint(limit)
		}
		text := obj.Render(vars)
		env := &capability.Env{Store: s, State: st, Actor: store.Actor{Name: a.Name, Agent: a}, Workspace: s.ProjectDir()}
		tools, err := capability.Tools(env, obj)
		if err != nil {
			return nil, err
		}
		defs, err := json.Marshal(llm.ToolDefs(tools))
		if err != nil {
			return nil, err
		}
		o := Overhead{Role: role, Prompt: len(text), Tools: len(defs), Context: len(context)}
		for _, tl := range tools {
			o.Names = append(o.Names, tl.Name)
		}
		out = append(out, o)
	}
	return out, nil
}

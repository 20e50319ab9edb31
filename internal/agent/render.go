package agent

import (
	"strconv"
	"strings"

	"github.com/plasmodium/pm/internal/prompt"
	"github.com/plasmodium/pm/internal/state"
	"github.com/plasmodium/pm/internal/store"
)

// Vars are the placeholders filled into an agent's prompt.
func Vars(s *store.Store, st state.State, a *store.Agent) map[string]string {
	v := map[string]string{
		"NAME": a.Name, "ROLE": a.Role, "TASK_ID": a.TaskID, "PHASE_ID": a.PhaseID,
		"DESCRIPTION": "", "PARENT_DESCRIPTION": "(none)", "CONTEXT": "(none)",
		"PHASE_NAME": "", "LIMIT": "", "RULES": "(none)", "OWNER": "",
		"RUNTIME": string(a.Runtime), // an llm agent's prompt leaves out its CLI parts
	}
	if a.TaskID == "" {
		return v
	}
	t, err := st.Task(a.TaskID)
	if err != nil {
		return v
	}
	v["DESCRIPTION"], v["OWNER"] = t.Description, t.Owner
	if t.ParentID != "" {
		if p, err := st.Task(t.ParentID); err == nil {
			v["PARENT_DESCRIPTION"] = p.Description
		}
	}
	if data, err := st.Context(t.ID); err == nil && len(strings.TrimSpace(string(data))) > 0 {
		v["CONTEXT"] = string(data)
	}
	if t.Rejected != "" && a.Role == "" {
		// pm reject: the owner works on from the human's reason.
		note := "The human rejected your work (pm reject): " + t.Rejected + "\nWork on in your worktree, then run pm done again."
		if v["CONTEXT"] == "(none)" {
			v["CONTEXT"] = note
		} else {
			v["CONTEXT"] += "\n\n" + note
		}
	}
	if a.PhaseID != "" {
		if ph, err := st.Phase(a.TaskID, a.PhaseID); err == nil {
			v["PHASE_NAME"], v["LIMIT"] = ph.Name, strconv.Itoa(ph.MessageLimit)
			if ph.Rules != "" {
				v["RULES"] = ph.Rules
			}
		}
	}
	return v
}

// Render renders the agent's prompt object and writes it to agents/NAME/prompt.md.
func Render(s *store.Store, st state.State, a *store.Agent) (string, error) {
	set, err := prompt.LoadProject(s, st)
	if err != nil {
		return "", err
	}
	o, err := set.Lookup(a.Prompt)
	if err != nil {
		return "", err
	}
	return RenderObject(s, st, a, o)
}

// RenderObject renders o for agent a (a loaded set is reused, not re-read)
// and writes it to agents/NAME/prompt.md.
func RenderObject(s *store.Store, st state.State, a *store.Agent, o *prompt.Object) (string, error) {
	text := o.Render(Vars(s, st, a))
	return text, s.WritePromptFile(a.Name, text)
}

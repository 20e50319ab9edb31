package capability_test

import (
	"encoding/json"
	"slices"
	"strings"
	"testing"

	"github.com/plasmodium/pm/internal/capability"
	"github.com/plasmodium/pm/internal/prompt"
	"github.com/plasmodium/pm/internal/state/fsstate"
	"github.com/plasmodium/pm/internal/store"
	"github.com/plasmodium/pm/internal/task"
)

// ownerEnv creates a task on runtime none and returns an Env acting as its
// owner, with the owner prompt object.
func ownerEnv(t *testing.T) (*capability.Env, *store.Task) {
	t.Helper()
	s := newStore(t)
	l := launcher(s)
	tk, err := task.Create(s, l, store.Human, task.Spec{Description: "build a landing page"})
	if err != nil {
		t.Fatal(err)
	}
	a, err := s.Agent(tk.Owner)
	if err != nil {
		t.Fatal(err)
	}
	return &capability.Env{Store: s, State: fsstate.New(s), Actor: store.Actor{Name: a.Name, Agent: a}, Launcher: l}, tk
}

func TestOwnerTools(t *testing.T) {
	env, tk := ownerEnv(t)
	set, err := prompt.LoadProject(env.Store, fsstate.New(env.Store))
	if err != nil {
		t.Fatal(err)
	}
	owner := set["owner"]
	tools, err := capability.Tools(env, owner)
	if err != nil {
		t.Fatal(err)
	}
	byName := map[string]int{}
	for i, tl := range tools {
		byName[tl.Name] = i
		var sch map[string]any
		if err := json.Unmarshal(tl.Parameters, &sch); err != nil || sch["type"] != "object" {
			t.Fatalf("%s: bad schema %s", tl.Name, tl.Parameters)
		}
		if tl.Description == "" {
			t.Fatalf("%s: no description", tl.Name)
		}
	}
	// An agent of a task gets its declared capabilities, in order, and no
	// other: the universal create_capability, not declared, is not sent.
	if names := toolNames(tools); !slices.Equal(names, owner.Capabilities) {
		t.Fatalf("owner's tools %v, want its capabilities %v", names, owner.Capabilities)
	}
	use := func(name string, args any) string {
		t.Helper()
		return call(t, tools[byName[name]], args)
	}

	steps := []struct {
		tool string
		args any
		want []string
	}{
		{"say", m{"message": "hello"}, []string{"wrong state", "no active phase"}},
		{"end_phase", m{}, []string{"wrong state", "no active phase"}},
		{"phase", m{"name": "Design", "limit": 2, "roles": []string{"designer", "developer", "pm", "qa"}}, []string{"refused (limit)", "limit is 3 agents per phase"}},
		{"phase", m{"name": "Design", "limit": 99, "roles": []string{"designer"}}, []string{"refused (limit)"}},
		{"phase", m{"name": "Design", "limit": 2, "roles": []string{"nobody"}}, []string{"not found", `no prompt object for role "nobody"`}},
		{"phase", m{"name": "Design", "limit": 2, "roles": []string{"designer", "developer"}}, []string{"open: limit 2", "(designer)", "(developer)"}},
		{"phase", m{"name": "Again", "limit": 2, "roles": []string{"qa"}}, []string{"wrong state", "already has an active phase"}},
		{"chat", m{}, []string{"(no messages yet)", `"Design" active 0/2`}},
		{"say", m{"message": "first idea"}, []string{"posted msg-"}},
		{"extend_phase", m{"n": 100}, []string{"refused (limit)", "over the limit of 50"}},
		{"extend_phase", m{"n": 1}, []string{"limit now 3"}},
		{"say", m{"message": ""}, []string{"bad arguments", "empty message"}},
		{"say", m{"message": "second"}, []string{"posted"}},
		{"say", m{"message": "third"}, []string{"posted", "reached its limit of 3 messages and is now closed"}},
		{"say", m{"message": "one too many"}, []string{"wrong state", "is closed (limit)", "Try: "}},
		{"chat", m{"phase": "ph-zzzzzz"}, []string{"bad arguments"}},
		{"history", m{"tail": 2}, []string{`"Design" (closed)`, "second", "third"}},
		{"status", m{}, []string{tk.ID, "build a landing page", `"Design" closed 3/3 (limit)`, "designer"}},
		{"status", m{"task": "tk-ffffff"}, []string{"not found: no task tk-ffffff"}},
		{"subtask", m{"description": "write the copy", "context": "tone: warm"}, []string{"active owner @", "subtask of " + tk.ID + ", depth 1"}},
		{"done", m{}, []string{"wrong state", "is still active"}},
	}
	for i, st := range steps {
		got := use(st.tool, st.args)
		for _, w := range st.want {
			if !strings.Contains(got, w) {
				t.Fatalf("step %d %s(%v) = %q; want %q", i, st.tool, st.args, got, w)
			}
		}
	}
	phID := firstPhase(t, env.Store, tk.ID)
	mustContain(t, use("say", m{"message": "one too many", "phase": phID}), "wrong state", "is closed (limit)", "Try: ")
	if n, _ := env.Store.Messages(tk.ID, phID); len(n) != 3 {
		t.Fatalf("phase holds %d messages, want exactly 3", len(n))
	}

	// The child's owner finishes it; wait_children returns; done commits
	// (no repository here: done without a commit).
	parent, _ := env.Store.Task(tk.ID)
	child, _ := env.Store.Task(parent.Children[0])
	ca, _ := env.Store.Agent(child.Owner)
	childEnv := &capability.Env{Store: env.Store, State: env.State, Actor: store.Actor{Name: ca.Name, Agent: ca}, Launcher: env.Launcher}
	mustContain(t, call(t, tool(t, childEnv, set["owner"], "done"), m{}), child.ID+" done", "not a git repository")
	mustContain(t, use("wait_children", m{"timeout": "1h"}), child.ID+" done write the copy", "all 1 subtasks of "+tk.ID+" finished")
	mustContain(t, use("wait_children", m{"timeout": "soon"}), "bad arguments")
	mustContain(t, use("done", m{}), tk.ID+" done")
	mustContain(t, use("phase", m{"name": "Late", "limit": 2, "roles": []string{"qa"}}), "wrong state", "is done")
}

func firstPhase(t *testing.T, s *store.Store, taskID string) string {
	t.Helper()
	ps, err := s.Phases(taskID)
	if err != nil || len(ps) == 0 {
		t.Fatalf("phases: %v %v", ps, err)
	}
	return ps[0].ID
}

func TestRoleAgentIsNotOwner(t *testing.T) {
	env, _ := ownerEnv(t)
	set, _ := prompt.LoadProject(env.Store, fsstate.New(env.Store))
	mustContain(t, call(t, tool(t, env, set["owner"], "phase"), m{"name": "Talk", "limit": 4, "roles": []string{"designer"}}), "open")
	ph, err := env.Store.ActivePhase(env.Actor.Agent.TaskID)
	if err != nil || ph == nil || len(ph.Agents) != 1 {
		t.Fatalf("phase %+v %v", ph, err)
	}
	ra, err := env.Store.Agent(ph.Agents[0])
	if err != nil {
		t.Fatal(err)
	}
	role := &capability.Env{Store: env.Store, State: env.State, Actor: store.Actor{Name: ra.Name, Agent: ra}, Launcher: env.Launcher}
	// Role agents may talk and read, but not run owner operations.
	mustContain(t, call(t, tool(t, role, set["designer"], "say"), m{"message": "make it blue"}), "posted")
	mustContain(t, call(t, tool(t, role, obj("end_phase"), "end_phase"), m{}), "wrong state", "is not the owner")
	mustContain(t, call(t, tool(t, role, obj("wait_children"), "wait_children"), m{}), "wrong state", "is not the owner")
	mustContain(t, call(t, tool(t, role, obj("chat"), "chat"), m{}), "@"+ra.Name+" (designer): make it blue")

	// chat wait: the owner posts, the role agent's wait returns only that.
	mustContain(t, call(t, tool(t, env, set["owner"], "say"), m{"message": "agreed"}), "posted")
	got := call(t, tool(t, role, set["designer"], "chat"), m{"wait": true})
	mustContain(t, got, "agreed")
	if strings.Contains(got, "make it blue") {
		t.Fatalf("wait returned a message already seen:\n%s", got)
	}
	// The owner ends the phase: a wait now reports it closed.
	mustContain(t, call(t, tool(t, env, set["owner"], "end_phase"), m{}), "closed early")
	mustContain(t, call(t, tool(t, role, set["designer"], "chat"), m{"wait": true}), "wrong state", "is closed (ended)")
}

func TestNoLauncher(t *testing.T) {
	env, _ := ownerEnv(t)
	env.Launcher = nil
	mustContain(t, call(t, tool(t, env, obj("phase"), "phase"), m{"name": "X", "limit": 2, "roles": []string{"qa"}}), "cannot start agents")
}

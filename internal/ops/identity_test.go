package ops

import (
	"context"
	"testing"

	"github.com/plasmodium/pm/internal/config"
	"github.com/plasmodium/pm/internal/errs"
	"github.com/plasmodium/pm/internal/phase"
	"github.com/plasmodium/pm/internal/request"
	"github.com/plasmodium/pm/internal/state/fsstate"
	"github.com/plasmodium/pm/internal/store"
)

func TestCheckPost(t *testing.T) {
	phA := &store.Phase{ID: "ph-aaaaaa", TaskID: "tk-aaaaaa"}
	tests := []struct {
		name  string
		actor store.Actor
		ok    bool
	}{
		{"human anywhere", store.Human, true},
		{"role agent in its phase", agentActor("r1", "tk-aaaaaa", "ph-aaaaaa", "qa"), true},
		{"role agent of an older phase of the same task", agentActor("r2", "tk-aaaaaa", "ph-000000", "qa"), false},
		{"role agent of another task", agentActor("r3", "tk-bbbbbb", "ph-bbbbbb", "qa"), false},
		{"owner of the task", agentActor("o1", "tk-aaaaaa", "", ""), true},
		{"owner of another task", agentActor("o2", "tk-bbbbbb", "", ""), false},
		{"agent with no task (prompt object)", agentActor("greeter", "", "", ""), false},
		{"role without phase id", agentActor("r4", "tk-aaaaaa", "", "qa"), false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			err := phase.CheckPost(tt.actor, phA)
			if tt.ok != (err == nil) {
				t.Fatalf("CheckPost = %v; want ok=%v", err, tt.ok)
			}
			if err != nil && (errs.CodeOf(err) != errs.State || !hasTry(err)) {
				t.Fatalf("refusal %v: want exit 5 with a Try line", err)
			}
		})
	}
}

func TestCheckAnswer(t *testing.T) {
	r := &request.Request{ID: "rq-aaaaaa", From: "asker"}
	named := config.Config{Requests: config.Requests{Answerers: []string{"reviewer", "asker"}}}
	withPrompt := func(name, prompt string) store.Actor {
		return store.Actor{Name: name, Agent: &store.Agent{Name: name, Prompt: prompt}}
	}
	tests := []struct {
		name  string
		cfg   config.Config
		actor store.Actor
		ok    bool
	}{
		{"human", config.Config{}, store.Human, true},
		{"the asker", config.Config{}, withPrompt("asker", "owner"), false},
		{"the asker even when named", named, withPrompt("asker", "owner"), false},
		{"another agent, not named", config.Config{}, withPrompt("other", "owner"), false},
		{"another agent named by prompt", named, withPrompt("other", "reviewer"), true},
		{"another agent named by name", config.Config{Requests: config.Requests{Answerers: []string{"other"}}}, withPrompt("other", "qa"), true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			err := CheckAnswer(tt.cfg, tt.actor, r)
			if tt.ok != (err == nil) {
				t.Fatalf("CheckAnswer = %v; want ok=%v", err, tt.ok)
			}
			if err != nil && (errs.CodeOf(err) != errs.State || !hasTry(err)) {
				t.Fatalf("refusal %v: want exit 5 with a Try line", err)
			}
		})
	}
}

func TestCheckKill(t *testing.T) {
	s := newStore(t)
	root := addTask(t, s, "tk-aaaaaa", store.TaskActive, 0)
	child := addTask(t, s, "tk-bbbbbb", store.TaskActive, 1)
	grand := addTask(t, s, "tk-cccccc", store.TaskActive, 2)
	other := addTask(t, s, "tk-dddddd", store.TaskActive, 3)
	setParent(t, s, child.ID, root.ID)
	setParent(t, s, grand.ID, child.ID)
	owner := agentActor(root.Owner, root.ID, "", "")
	childOwner := agentActor(child.Owner, child.ID, "", "")
	tests := []struct {
		name   string
		actor  store.Actor
		target string
		ok     bool
	}{
		{"human any task", store.Human, other.ID, true},
		{"owner kills its child", owner, child.ID, true},
		{"owner kills its grandchild", owner, grand.ID, true},
		{"owner may not kill its own task", owner, root.ID, false},
		{"owner may not kill another tree", owner, other.ID, false},
		{"child owner may not kill its parent", childOwner, root.ID, false},
		{"role agent may not kill", agentActor("r1", root.ID, "ph-aaaaaa", "qa"), child.ID, false},
		{"stale owner (not the task's owner any more)", agentActor("old_0001", root.ID, "", ""), child.ID, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			target, err := s.Task(tt.target)
			if err != nil {
				t.Fatal(err)
			}
			err = CheckKill(s, fsstate.New(s), tt.actor, target)
			if tt.ok != (err == nil) {
				t.Fatalf("CheckKill = %v; want ok=%v", err, tt.ok)
			}
			if err != nil && errs.CodeOf(err) != errs.State {
				t.Fatalf("refusal %v: want exit 5", err)
			}
		})
	}
}

func TestCheckKillCycle(t *testing.T) {
	s := newStore(t)
	a := addTask(t, s, "tk-aaaaaa", store.TaskActive, 0)
	b := addTask(t, s, "tk-bbbbbb", store.TaskActive, 1)
	addTask(t, s, "tk-eeeeee", store.TaskActive, 2)
	setParent(t, s, a.ID, b.ID) // a hand-edited cycle a <-> b
	setParent(t, s, b.ID, a.ID)
	c, _ := s.Task(b.ID)
	if err := CheckKill(s, fsstate.New(s), agentActor("own_eeee", "tk-eeeeee", "", ""), c); err == nil {
		t.Fatal("a cycle outside the actor's tree was accepted")
	}
}

func TestCheckReset(t *testing.T) {
	if err := CheckReset(store.Human); err != nil {
		t.Fatal(err)
	}
	if err := CheckReset(agentActor("o1", "tk-aaaaaa", "", "")); errs.CodeOf(err) != errs.State {
		t.Fatalf("agent reset: %v; want exit 5", err)
	}
}

func setParent(t *testing.T, s *store.Store, id, parent string) {
	t.Helper()
	if _, err := s.UpdateTask(id, func(x *store.Task) error { x.ParentID = parent; return nil }); err != nil {
		t.Fatal(err)
	}
}

func hasTry(err error) bool {
	e, ok := err.(*errs.Error)
	return ok && e.Try != ""
}

// The model's say tool takes the same path as pm say: a phase argument
// naming another task's room is refused and nothing is written.
func TestSayToolRefusesForeignPhase(t *testing.T) {
	s := newStore(t)
	addTask(t, s, "tk-aaaaaa", store.TaskActive, 0)
	addTask(t, s, "tk-bbbbbb", store.TaskActive, 1)
	addPhase(t, s, "tk-aaaaaa", "ph-aaaaaa", store.PhaseActive, 0)
	addPhase(t, s, "tk-bbbbbb", "ph-bbbbbb", store.PhaseActive, 1)
	say, ok := LookupTool("say")
	if !ok {
		t.Fatal("no say tool")
	}
	sess := &Session{Store: s, State: fsstate.New(s), Actor: agentActor("r_b", "tk-bbbbbb", "ph-bbbbbb", "qa")}
	_, err := say.Call(t.Context(), sess, []byte(`{"message":"hijack","phase":"ph-aaaaaa"}`))
	if errs.CodeOf(err) != errs.State {
		t.Fatalf("say into another task's phase: %v; want exit 5", err)
	}
	if msgs, _ := s.Messages("tk-aaaaaa", "ph-aaaaaa"); len(msgs) != 0 {
		t.Fatalf("foreign room holds %d messages", len(msgs))
	}
	if _, err := say.Call(t.Context(), sess, []byte(`{"message":"mine"}`)); err != nil {
		t.Fatalf("say into own phase: %v", err)
	}
}

// The code designer calls models with the human's key and rewrites files
// from the unconfined side: an agent reaching MCP's design tool (pm mcp
// through its broker) may not run, resume or apply a design (an owner has
// design_review, which checks the task it owns).
func TestDesignIsTheHumans(t *testing.T) {
	sess := &Session{Actor: agentActor("o1", "tk-aaaaaa", "", "")}
	ctx := context.Background()
	for _, in := range []DesignCallInput{{File: "main.go", Goal: "faster"}, {Resume: "ds-000000", Apply: true}} {
		if _, err := DesignCall(ctx, sess, in); errs.CodeOf(err) != errs.State {
			t.Fatalf("agent design %+v: %v; want exit 5", in, err)
		}
	}
}

package ops

import (
	"context"
	"strings"
	"testing"

	"github.com/plasmodium/pm/internal/config"
	"github.com/plasmodium/pm/internal/errs"
	"github.com/plasmodium/pm/internal/request"
	"github.com/plasmodium/pm/internal/state/fsstate"
	"github.com/plasmodium/pm/internal/store"
)

func TestConfirmRule(t *testing.T) {
	rules := []config.ConfirmRule{
		{Tool: "run_command", Match: []string{"git push*", "*rm -rf*"}},
		{Tool: "http_get", NewHosts: true},
		{Tool: "kill"},
	}
	for _, tc := range []struct {
		call      Call
		held      bool
		wantScope string
	}{
		{Call{Tool: "run_command", Subject: "git push origin main"}, true, "governance.confirm[0] run_command git push* | *rm -rf*"},
		{Call{Tool: "run_command", Subject: "cd x && rm -rf /"}, true, "governance.confirm[0] run_command git push* | *rm -rf*"},
		{Call{Tool: "run_command", Subject: "git status"}, false, ""},
		{Call{Tool: "http_get", Subject: "example.com"}, true, "http_get example.com"},
		{Call{Tool: "kill", Subject: "tk-000002"}, true, "governance.confirm[2] kill"},
		{Call{Tool: "write_file", Subject: "a.txt"}, false, ""},
	} {
		_, scope, held := confirmRule(rules, tc.call)
		if held != tc.held || scope != tc.wantScope {
			t.Errorf("%+v: held %v scope %q; want %v %q", tc.call, held, scope, tc.held, tc.wantScope)
		}
	}
}

// A yes to a new host allows that host for the rest of the task, not
// another host; the human's own calls are never held.
func TestConfirmNewHosts(t *testing.T) {
	s := newStore(t)
	s.Config().Governance.Confirm = []config.ConfirmRule{{Tool: "http_get", NewHosts: true}}
	tk := addTask(t, s, "tk-000001", store.TaskActive, 0)
	sess := &Session{Store: s, State: fsstate.New(s), Actor: agentActor(tk.Owner, tk.ID, "", "")}
	get := func(host string) error {
		return Confirm(context.Background(), sess, Call{Tool: "http_get", Args: `{"url":"https://` + host + `/"}`, Subject: host})
	}
	asked := answerNext(t, s, "yes")
	if err := get("example.com"); err != nil {
		t.Fatal(err)
	}
	<-asked
	if err := get("example.com"); err != nil { // allowed: no request
		t.Fatal(err)
	}
	asked = answerNext(t, s, "not that one")
	err := get("other.example")
	<-asked
	if !errs.Is(err, errs.Limit) || !strings.Contains(err.Error(), "http_get denied by human: not that one") {
		t.Fatalf("other host: %v", err)
	}
	if all, _ := request.List(s, fsstate.New(s), true); len(all) != 2 {
		t.Fatalf("%d requests, want 2", len(all))
	}
	if err := Confirm(context.Background(), &Session{Store: s, State: fsstate.New(s), Actor: store.Human}, Call{Tool: "http_get", Subject: "x"}); err != nil {
		t.Fatal(err)
	}
}

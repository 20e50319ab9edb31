package request_test

import (
	"context"
	"os"
	"testing"
	"time"

	"github.com/plasmodium/pm/internal/request"
	"github.com/plasmodium/pm/internal/state/fsstate"
	"github.com/plasmodium/pm/internal/store"
	"github.com/plasmodium/pm/internal/store/storetest"
	"github.com/plasmodium/pm/internal/watch"
)

func TestParseVerdict(t *testing.T) {
	for _, tc := range []struct {
		answer string
		want   request.Verdict
		why    string
	}{
		{"yes", request.Allow, ""}, {" Y ", request.Allow, ""}, {"ok.", request.Allow, ""},
		{"always", request.AllowAlways, ""}, {"approve always", request.AllowAlways, ""},
		{"stop", request.Stop, ""},
		{"no", request.Deny, "no"}, {"no, use home.html", request.Deny, "no, use home.html"},
	} {
		if v, why := request.ParseVerdict(tc.answer); v != tc.want || why != tc.why {
			t.Errorf("%q: %v %q, want %v %q", tc.answer, v, why, tc.want, tc.why)
		}
	}
}

// A decision whose asker stops waiting is answered by pm, not left pending.
func TestDecideAskerGone(t *testing.T) {
	s := storetest.New(t)
	ctx, cancel := context.WithCancel(context.Background())
	go func() { // cancel once the request is there (file events, no sleep)
		wctx, wcancel := context.WithTimeout(context.Background(), 30*time.Second)
		defer wcancel()
		_ = os.MkdirAll(s.RequestsDir(), 0o755)
		_ = watch.Until(wctx, func() []string { return []string{s.RequestsDir()} }, func() (bool, error) {
			rs, err := request.List(s, fsstate.New(s), false)
			return err == nil && len(rs) > 0, nil
		})
		cancel()
	}()
	a := &store.Agent{Name: "cedar_0001", TaskID: "tk-000001"}
	if _, err := request.Decide(ctx, s, fsstate.New(s), store.Actor{Name: a.Name, Agent: a}, request.Decision{Kind: request.KindConfirm, Question: "may I?"}); err == nil {
		t.Fatal("Decide returned no error after its context ended")
	}
	all, _ := request.List(s, fsstate.New(s), true)
	if len(all) != 1 || all[0].Status != request.Answered || all[0].AnsweredBy != "pm" || all[0].Answer != "no (the agent stopped waiting)" {
		t.Fatalf("requests %+v", all)
	}
}

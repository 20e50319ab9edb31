package request_test

import (
	"context"
	"os"
	"strings"
	"testing"

	"github.com/plasmodium/pm/internal/bus"
	"github.com/plasmodium/pm/internal/errs"
	"github.com/plasmodium/pm/internal/jsonl"
	"github.com/plasmodium/pm/internal/request"
	"github.com/plasmodium/pm/internal/state/fsstate"
	"github.com/plasmodium/pm/internal/store"
	"github.com/plasmodium/pm/internal/store/storetest"
	"github.com/plasmodium/pm/internal/watch"
)

func newStore(t *testing.T) *store.Store {
	t.Helper()
	s := storetest.New(t)
	return s
}

func TestAskBlocksUntilAnswered(t *testing.T) {
	s := newStore(t)
	asker := store.Actor{Name: "cedar_0001", Agent: &store.Agent{Name: "cedar_0001", TaskID: "tk-000001"}}
	type result struct {
		answer string
		err    error
	}
	got := make(chan result, 1)
	go func() {
		a, err := request.Ask(context.Background(), s, fsstate.New(s), asker, "Delete spec/?")
		got <- result{a, err}
	}()

	// Wait for the request to appear, woken by file events (no sleeps).
	var id string
	err := watch.Until(context.Background(), func() []string { return []string{s.RequestsDir()} }, func() (bool, error) {
		rs, err := request.List(s, fsstate.New(s), false)
		if err != nil || len(rs) == 0 {
			return false, err
		}
		id = rs[0].ID
		if rs[0].From != "cedar_0001" || rs[0].TaskID != "tk-000001" || rs[0].Status != request.Pending {
			t.Errorf("request = %+v", rs[0])
		}
		return true, nil
	})
	if err != nil {
		t.Fatal(err)
	}
	select {
	case r := <-got:
		t.Fatalf("Ask returned before an answer: %+v", r)
	default:
	}
	if _, err := request.Answer(s, fsstate.New(s), store.Human, id, "yes, go ahead"); err != nil {
		t.Fatal(err)
	}
	r := <-got
	if r.err != nil || r.answer != "yes, go ahead" {
		t.Fatalf("Ask = %q, %v", r.answer, r.err)
	}
	if rs, _ := request.List(s, fsstate.New(s), false); len(rs) != 0 {
		t.Fatalf("pending after answer: %+v", rs)
	}
	all, _ := request.List(s, fsstate.New(s), true)
	if len(all) != 1 || all[0].Status != request.Answered || all[0].AnsweredBy != "human" || all[0].AnsweredAt == nil {
		t.Fatalf("all = %+v", all)
	}
	evs, err := jsonl.ReadAll[bus.Event](s.EventsPath(), nil)
	if err != nil {
		t.Fatal(err)
	}
	var kinds []string
	for _, e := range evs {
		kinds = append(kinds, string(e.Kind))
	}
	if strings.Join(kinds, ",") != string(bus.EvRequestAsked)+","+string(bus.EvRequestAnswered) {
		t.Fatalf("events = %v", kinds)
	}
}

func TestAskCancelled(t *testing.T) {
	s := newStore(t)
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	_, err := request.Ask(ctx, s, fsstate.New(s), store.Human, "anyone?")
	if err == nil || ctx.Err() == nil {
		t.Fatalf("err = %v", err)
	}
	rs, _ := request.List(s, fsstate.New(s), false)
	if len(rs) != 1 {
		t.Fatalf("a cancelled ask keeps its pending request, got %d", len(rs))
	}
}

func TestAnswerErrors(t *testing.T) {
	s := newStore(t)
	r, err := request.Create(s, fsstate.New(s), store.Human, "ok?")
	if err != nil {
		t.Fatal(err)
	}
	if _, err := request.Answer(s, fsstate.New(s), store.Human, r.ID, "first"); err != nil {
		t.Fatal(err)
	}
	cases := []struct {
		name, id, text string
		code           errs.Code
	}{
		{"malformed id", "rq-xyz", "x", errs.Usage},
		{"wrong kind", "tk-000001", "x", errs.Usage},
		{"unknown id", "rq-abcdef", "x", errs.NotFound},
		{"answered twice", r.ID, "second", errs.State},
		{"empty answer", r.ID, "  ", errs.Usage},
	}
	p, _ := request.Create(s, fsstate.New(s), store.Human, "again?")
	cases = append(cases, struct {
		name, id, text string
		code           errs.Code
	}{"too long", p.ID, strings.Repeat("x", request.MaxText+1), errs.Usage})
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			_, err := request.Answer(s, fsstate.New(s), store.Human, c.id, c.text)
			if got := errs.CodeOf(err); got != c.code {
				t.Fatalf("code = %d (%v), want %d", got, err, c.code)
			}
		})
	}
	got, _ := request.Get(s, fsstate.New(s), r.ID)
	if got.Answer != "first" {
		t.Fatalf("a refused answer changed the request: %+v", got)
	}
}

func TestCreateRefusesEmptyQuestion(t *testing.T) {
	s := newStore(t)
	if _, err := request.Create(s, fsstate.New(s), store.Human, ""); errs.CodeOf(err) != errs.Usage {
		t.Fatalf("err = %v", err)
	}
}

func TestListSkipsJunk(t *testing.T) {
	s := newStore(t)
	if _, err := request.Create(s, fsstate.New(s), store.Human, "q"); err != nil {
		t.Fatal(err)
	}
	os.WriteFile(s.RequestsDir()+"/rq-00000g.json", []byte("{}"), 0o644)
	os.WriteFile(s.RequestsDir()+"/rq-000001.json", []byte("{bad"), 0o644)
	var warn strings.Builder
	s.Warn = &warn
	rs, err := request.List(s, fsstate.New(s), true)
	if err != nil || len(rs) != 1 {
		t.Fatalf("List = %v, %v", rs, err)
	}
	if !strings.Contains(warn.String(), "rq-000001") {
		t.Fatalf("bad file not reported: %q", warn.String())
	}
}

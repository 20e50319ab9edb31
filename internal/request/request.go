package request

import (
	"context"
	"strings"
	"unicode/utf8"

	"github.com/plasmodium/pm/internal/bus"
	"github.com/plasmodium/pm/internal/errs"
	"github.com/plasmodium/pm/internal/state"
	"github.com/plasmodium/pm/internal/store"
)

// Status is whether a request waits for its answer.
type Status = store.RequestStatus

// Request statuses.
const (
	Pending  = store.RequestPending
	Answered = store.RequestAnswered
)

// MaxText bounds a question or an answer (bytes).
const MaxText = 16 << 10

// Request is requests/rq-xxxxxx.json; the store keeps it.
type Request = store.Request

func checkText(what, text string) error {
	if strings.TrimSpace(text) == "" {
		return errs.Usagef("say what you need", "empty %s", what)
	}
	if len(text) > MaxText || !utf8.ValidString(text) {
		return errs.Usagef("keep it under 16 KiB of UTF-8 text", "%s of %d bytes is too long or not UTF-8", what, len(text))
	}
	return nil
}

// Create records a pending request from actor and announces it on the bus.
func Create(s *store.Store, st state.State, actor store.Actor, question string) (*Request, error) {
	return create(s, st, actor, question, "", "")
}

// CreateAbout is Create for pm giving up on agent about (an owner that
// failed, a crash loop): the request names it, and answering it resumes
// that agent (task.Resume).
func CreateAbout(s *store.Store, st state.State, actor store.Actor, about, question string) (*Request, error) {
	return create(s, st, actor, question, "", about)
}

// CreateFor is Create for a question about task taskID that pm asks on
// its own (a task's merge that waits for a decision), whoever ran the
// command that found it.
func CreateFor(s *store.Store, st state.State, actor store.Actor, taskID, question string) (*Request, error) {
	return createFor(s, st, actor, taskID, question, "", "")
}

// create is Create for a question asked while answering call cause
// (bus.CauseOf), which the event carries, about an agent pm gave up on.
func create(s *store.Store, st state.State, actor store.Actor, question, cause, about string) (*Request, error) {
	taskID := ""
	if actor.Agent != nil {
		taskID = actor.Agent.TaskID
	}
	return createFor(s, st, actor, taskID, question, cause, about)
}

func createFor(s *store.Store, st state.State, actor store.Actor, taskID, question, cause, about string) (*Request, error) {
	if err := checkText("question", question); err != nil {
		return nil, err
	}
	r := &Request{From: actor.Name, TaskID: taskID, Question: question, Status: Pending, CreatedAt: s.Now().UTC(), Agent: about}
	if err := st.CreateRequest(r); err != nil {
		return nil, err
	}
	s.Notify(bus.Event{Kind: bus.EvRequestAsked, Actor: actor.Name, TaskID: r.TaskID, Agent: actor.Name, Text: question,
		Data: bus.RequestAsked{Request: r.ID, Cause: cause, About: about}})
	return r, nil
}

// Get reads one request: a malformed id is exit 2, an unknown one exit 4.
func Get(s *store.Store, st state.State, id string) (*Request, error) { return st.Request(id) }

// Wait blocks until request id is answered or ctx ends, woken by changes
// to the requests (state.Watcher), never a sleep loop.
func Wait(ctx context.Context, s *store.Store, st state.State, id string) (*Request, error) {
	var out *Request
	err := st.Watch(ctx, state.Scope{Requests: true}, func() (bool, error) {
		r, err := Get(s, st, id)
		if err != nil {
			return false, err
		}
		out = r
		return r.Status == Answered, nil
	})
	if err != nil {
		return nil, err
	}
	return out, nil
}

// Ask asks the human: it records the question, then blocks until someone
// runs `pm answer ID "..."` (or ctx ends) and returns the answer.
func Ask(ctx context.Context, s *store.Store, st state.State, actor store.Actor, question string) (string, error) {
	r, err := create(s, st, actor, question, bus.CauseOf(ctx), "")
	if err != nil {
		return "", err
	}
	done, err := Wait(ctx, s, st, r.ID)
	if err != nil {
		return "", err
	}
	return done.Answer, nil
}

// Answer answers a pending request. Answering twice is exit 5.
func Answer(s *store.Store, st state.State, actor store.Actor, id, text string) (*Request, error) {
	if _, err := Get(s, st, id); err != nil {
		return nil, err
	}
	if err := checkText("answer", text); err != nil {
		return nil, err
	}
	now := s.Now().UTC()
	r, err := st.UpdateRequest(id, func(r *Request) error {
		switch {
		case r.Status == Moot:
			return errs.Statef("see it with 'pm requests --all'", "request %s is moot: %s", r.ID, r.Why)
		case r.Status != Pending:
			return errs.Statef("see it with 'pm requests --all'", "request %s is already %s (by %s)", r.ID, r.Status, r.AnsweredBy)
		}
		r.Status, r.Answer, r.AnsweredBy, r.AnsweredAt = Answered, text, actor.Name, &now
		return nil
	})
	if err != nil {
		return nil, err
	}
	s.Notify(bus.Event{Kind: bus.EvRequestAnswered, Actor: actor.Name, TaskID: r.TaskID, Agent: r.From, Text: text,
		Data: bus.RequestAnswered{Request: r.ID}})
	return r, nil
}

// List reads the requests, oldest first: those that wait for an answer
// (pending and not moot: MootWhy), or all with all set. An unreadable file
// is reported and skipped.
func List(s *store.Store, st state.State, all bool) ([]*Request, error) {
	rs, err := st.Requests()
	if err != nil {
		return nil, err
	}
	out := []*Request{}
	for _, r := range rs {
		if all || r.Status == Pending && MootWhy(s, st, r) == "" {
			out = append(out, r)
		}
	}
	return out, nil
}

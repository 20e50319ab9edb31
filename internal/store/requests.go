package store

import (
	"os"
	"sort"
	"strings"
	"time"

	"github.com/plasmodium/pm/internal/errs"
	"github.com/plasmodium/pm/internal/ids"
	"github.com/plasmodium/pm/internal/lockedfile"
)

// RequestStatus is whether a request waits for its answer.
type RequestStatus string

// Request statuses.
const (
	RequestPending  RequestStatus = "pending"
	RequestAnswered RequestStatus = "answered"
	// RequestMoot: nobody waits for the answer any more (its task ended,
	// the agent it is about was killed or replaced); Why says which.
	RequestMoot RequestStatus = "moot"
)

// Request is requests/rq-xxxxxx.json: an agent's question to the human.
type Request struct {
	ID         string        `json:"id"`
	From       string        `json:"from"`
	TaskID     string        `json:"task_id,omitempty"`
	Question   string        `json:"question"`
	Status     RequestStatus `json:"status"`
	Answer     string        `json:"answer,omitempty"`
	AnsweredBy string        `json:"answered_by,omitempty"`
	CreatedAt  time.Time     `json:"created_at"`
	AnsweredAt *time.Time    `json:"answered_at,omitempty"`
	// Agent is the agent pm filed the request about when it gave up on it
	// (an owner that failed, a crash loop): answering it resumes that agent.
	Agent string `json:"agent,omitempty"`
	// Why says what made a moot request moot.
	Why string `json:"why,omitempty"`
	// Kind is what is asked: "" a question (ask_human), "loop" the loop
	// breaker's pause, "confirm" a call waiting for confirmation,
	// "budget" a dollar cap reached (internal/request, decide.go).
	Kind string `json:"kind,omitempty"`
	// Confirm is the call a "confirm" request holds.
	Confirm *ConfirmCall `json:"confirm,omitempty"`
}

// ConfirmCall is a call held for a human's confirmation: the tool, its
// arguments, and Scope, what an "always" answer allows for the rest of the
// task (the rule, or for http_get's new_hosts the host).
type ConfirmCall struct {
	Tool  string `json:"tool"`
	Args  string `json:"args"`
	Scope string `json:"scope"`
}

// CreateRequest stores r under a fresh id and sets r.ID. Each try draws an
// id and, under that file's lock, writes it only if no file has the id yet.
func (s *Store) CreateRequest(r *Request) error {
	if err := os.MkdirAll(s.RequestsDir(), 0o755); err != nil {
		return err
	}
	for range 16 {
		id := s.IDs.New(ids.Request)
		p := s.RequestPath(id)
		created := false
		err := lockedfile.With(p, func() error {
			if _, err := os.Stat(p); err == nil {
				return nil // taken; try another id
			}
			r.ID, created = id, true
			return lockedfile.WriteJSON(p, r)
		})
		if err != nil {
			return err
		}
		if created {
			return nil
		}
	}
	return errs.Failf("", "could not find a free request id")
}

// Request reads one request: a malformed id is exit 2, an unknown one exit 4.
func (s *Store) Request(id string) (*Request, error) {
	if err := ids.Parse(ids.Request, id); err != nil {
		return nil, errs.Usagef("request ids look like rq-a1b2c3; see 'pm requests'", "%v", err)
	}
	var r Request
	if err := lockedfile.ReadJSON(s.RequestPath(id), &r); err != nil {
		return nil, notFound(err, "see 'pm requests --all' for the requests that exist", "no request %s", id)
	}
	return &r, nil
}

// UpdateRequest runs fn on request id under its lock and writes it back
// (nothing when fn fails).
func (s *Store) UpdateRequest(id string, fn func(r *Request) error) (*Request, error) {
	if _, err := s.Request(id); err != nil {
		return nil, err
	}
	r, err := lockedfile.Update(s.RequestPath(id), false, fn)
	if err != nil {
		return nil, err
	}
	return &r, nil
}

// Requests reads every request, oldest first. An unreadable file is reported
// and skipped; no requests directory is no requests (an empty list).
func (s *Store) Requests() ([]*Request, error) {
	ents, err := os.ReadDir(s.RequestsDir())
	if err != nil {
		if os.IsNotExist(err) {
			return []*Request{}, nil
		}
		return nil, err
	}
	out := []*Request{}
	for _, e := range ents {
		id, ok := strings.CutSuffix(e.Name(), ".json")
		if !ok || e.IsDir() || ids.Parse(ids.Request, id) != nil {
			continue
		}
		var r Request
		if err := lockedfile.ReadJSON(s.RequestPath(id), &r); err != nil {
			if !os.IsNotExist(err) {
				s.Warnf("skipped request %s: %v", id, err)
			}
			continue
		}
		out = append(out, &r)
	}
	sort.SliceStable(out, func(i, j int) bool { return out[i].CreatedAt.Before(out[j].CreatedAt) })
	return out, nil
}

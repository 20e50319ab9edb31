package ops

import (
	"context"

	"github.com/plasmodium/pm/internal/agent"
	"github.com/plasmodium/pm/internal/config"
	"github.com/plasmodium/pm/internal/errs"
	"github.com/plasmodium/pm/internal/ids"
	"github.com/plasmodium/pm/internal/inbox"
	"github.com/plasmodium/pm/internal/prompt"
	"github.com/plasmodium/pm/internal/request"
	"github.com/plasmodium/pm/internal/state"
	"github.com/plasmodium/pm/internal/store"
	"github.com/plasmodium/pm/internal/task"
)

// AgentsInput is pm agents.
type AgentsInput struct {
	All bool `json:"all,omitempty" jsonschema:"list ended agents too"`
}

// AgentsResult is the listed agents and how many ended ones were left out.
type AgentsResult struct {
	Agents []*store.Agent
	Hidden int
}

// Agents lists the agents that run, wait to start, failed or died
// unnoticed (with All, every agent); the exited and killed ones it leaves
// out are counted in Hidden.
func Agents(ctx context.Context, sess *Session, in AgentsInput) (AgentsResult, error) {
	recs, err := sess.State.Agents()
	if err != nil {
		return AgentsResult{}, err
	}
	return ClassifyAgents(recs, in.All), nil
}

// ClassifyAgents is pm agents' listing of recs (oldest first): a running
// record whose host is gone shows as dead; shown are the running, pending,
// dead and failed ones (with all, every one), the rest counted in Hidden.
// The records shown are recs' own (a dead one has its Status changed).
func ClassifyAgents(recs []*store.Agent, all bool) AgentsResult {
	res := AgentsResult{Agents: []*store.Agent{}}
	for _, a := range recs {
		if a.Status == store.AgentRunning && !agent.Running(a) {
			a.Status = store.AgentDead
		}
		switch {
		case all, a.Status == store.AgentRunning, a.Status == store.AgentPending, a.Status == store.AgentDead, a.Status == store.AgentFailed:
			res.Agents = append(res.Agents, a)
		default:
			res.Hidden++
		}
	}
	return res
}

// PromptsInput is pm prompts.
type PromptsInput struct{}

// PromptEntry is one prompt object as listed.
type PromptEntry struct {
	Name         string             `json:"name"`
	Description  string             `json:"description"`
	Capabilities []string           `json:"capabilities"`
	Runtime      config.RuntimeName `json:"runtime,omitempty"`
	Source       string             `json:"source"`
	State        string             `json:"state"` // idle, working, waiting (its resident agent), or failed/killed
}

// Prompts lists the prompt objects with their capabilities and state.
func Prompts(ctx context.Context, sess *Session, in PromptsInput) ([]PromptEntry, error) {
	set, err := prompt.LoadProject(sess.Store, sess.State)
	if err != nil {
		return nil, err
	}
	list := []PromptEntry{}
	for _, name := range set.Names() {
		obj := set[name]
		caps := obj.Capabilities
		if caps == nil {
			caps = []string{}
		}
		list = append(list, PromptEntry{Name: name, Description: obj.Description, Capabilities: caps, Runtime: obj.Runtime,
			Source: obj.Source, State: residentState(sess.Store, sess.State, name)})
	}
	return list, nil
}

// residentState is what the object's resident agent is doing; an object that
// has no running process is idle (it starts when called).
func residentState(s *store.Store, st state.State, name string) string {
	a, err := st.Agent(name)
	if err != nil {
		return "idle"
	}
	switch {
	case a.Status == store.AgentFailed || a.Status == store.AgentKilled:
		return string(a.Status)
	case agent.Running(a) && a.Activity != "":
		return a.Activity
	}
	return "idle"
}

// RequestsInput is pm requests.
type RequestsInput struct {
	All bool `json:"all,omitempty" jsonschema:"list answered requests too"`
}

// Requests lists agents' questions waiting for a human (with All, answered
// and moot ones too).
func Requests(ctx context.Context, sess *Session, in RequestsInput) ([]*request.Request, error) {
	if in.All { // show the moot ones as moot, with why (the first reader writes it)
		if _, err := request.Settle(sess.Store, sess.State, sess.Actor); err != nil {
			return nil, err
		}
	}
	return request.List(sess.Store, sess.State, in.All)
}

// AnswerInput is pm answer.
type AnswerInput struct {
	ID   string `json:"id" jsonschema:"request id rq-..."`
	Text string `json:"text" jsonschema:"the answer"`
}

// AnswerResult is the answered request and what the answer set going.
type AnswerResult struct {
	*request.Request
	// Outcome says, in words, what the answer did: the asker resumes, an
	// owner pm gave up on runs again (or why it does not).
	Outcome string `json:"outcome"`
}

// Answer answers an agent's question; the waiting agent resumes at once.
// A request pm filed about an owner it gave up on resumes that owner
// (task.Resume). A request that is moot (request.MootWhy: its task ended,
// its agent was killed or replaced) is refused, exit 5, and marked so.
// The agent that asked may not answer it (CheckAnswer).
func Answer(ctx context.Context, sess *Session, in AnswerInput) (*AnswerResult, error) {
	st := sess.State
	s := sess.Store
	var err error
	if in.ID, err = state.CompleteID(st, ids.Request, in.ID); err != nil { // a unique prefix names its request
		return nil, err
	}
	r, err := request.Get(s, st, in.ID)
	if err != nil {
		return nil, err
	}
	if err := CheckAnswer(*s.Config(), sess.Actor, r); err != nil {
		return nil, err
	}
	if why := request.MootWhy(s, st, r); why != "" {
		if _, err := request.Settle(s, st, sess.Actor); err != nil {
			return nil, err
		}
		return nil, errs.Statef("pm requests lists the ones that wait for you", "request %s is moot: %s", r.ID, why)
	}
	var l *agent.Launcher
	if r.Agent != "" { // answering resumes an agent: refuse before answering where none can start
		if l, err = sess.launcher(); err != nil {
			return nil, err
		}
		// A supervisor wanted before the answer that resumes it.
		if err := l.Wanted(func() error { return nil }); err != nil {
			return nil, err
		}
	}
	r, err = request.Answer(s, st, sess.Actor, in.ID, in.Text)
	if err != nil {
		return nil, err
	}
	out := &AnswerResult{Request: r, Outcome: "@" + r.From + " resumes"}
	if l != nil {
		out.Outcome, err = task.Resume(s, l, r)
	}
	return out, err
}

// MaxSend bounds one message to a prompt object (bytes).
const MaxSend = 256 << 10

// SendInput is pm send.
type SendInput struct {
	PO      string `json:"po" jsonschema:"the prompt object to send to, e.g. greeter"`
	Message string `json:"message" jsonschema:"what to ask or tell it, in plain language"`
	// OnDelta, when set, receives the reply as it is generated.
	OnDelta func(string) `json:"-"`
}

// SendResult is a prompt object's reply.
type SendResult struct {
	PO    string `json:"po"`
	Reply string `json:"reply"`
}

// Send sends one message to a prompt object (starting it if needed) and
// waits for its reply.
func Send(ctx context.Context, sess *Session, in SendInput) (SendResult, error) {
	if len(in.Message) > MaxSend {
		return SendResult{}, errs.Usagef("put long material in a file and name it in the message", "message of %d bytes is over %d", len(in.Message), MaxSend)
	}
	po, err := checkPO(sess, in.PO)
	if err != nil {
		return SendResult{}, err
	}
	l, err := sess.launcher()
	if err != nil {
		return SendResult{}, err
	}
	if sess.Actor.Name != in.PO { // a call to itself is refused by inbox.Call, with nothing written
		if err := residentMode(sess, po); err != nil {
			return SendResult{}, err
		}
	}
	if err := CheckCascade(ctx, sess, in.PO); err != nil {
		return SendResult{}, err
	}
	reply, err := inbox.Call(ctx, sess.Store, l, sess.Actor.Name, in.PO, in.Message, in.OnDelta)
	if err != nil {
		return SendResult{}, err
	}
	return SendResult{PO: in.PO, Reply: reply}, nil
}

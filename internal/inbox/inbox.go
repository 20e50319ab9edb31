package inbox

import (
	"context"
	"encoding/json"
	"strings"
	"time"

	"github.com/plasmodium/pm/internal/agent"
	"github.com/plasmodium/pm/internal/bus"
	"github.com/plasmodium/pm/internal/config"
	"github.com/plasmodium/pm/internal/errs"
	"github.com/plasmodium/pm/internal/ids"
	"github.com/plasmodium/pm/internal/prompt"
	"github.com/plasmodium/pm/internal/state"
	"github.com/plasmodium/pm/internal/store"
)

// Message kinds.
const (
	KindRequest = "request" // a PO (or the human) asks another PO
	KindReply   = "reply"   // the answer, carrying the request's Corr
	KindNotice  = "notice"  // one-way: a subtask finished, a human note
)

// Message is one line of agents/NAME/inbox.jsonl.
type Message struct {
	ID   string `json:"id"`
	Kind string `json:"kind"`
	From string `json:"from"`
	To   string `json:"to"`
	Corr string `json:"corr,omitempty"` // correlates a reply with its request
	// Cause is the request the sender was answering when it sent this one
	// (bus.CauseOf): the cascade's parent call. Empty for the human's.
	Cause  string    `json:"cause,omitempty"`
	TaskID string    `json:"task_id,omitempty"`
	Text   string    `json:"text"`
	Error  string    `json:"error,omitempty"` // set on a reply when the callee failed
	Time   time.Time `json:"ts"`
}

// Send appends m to the recipient's mailbox (st.Post) and puts it on the
// bus as "from → to: text". The recipient's process wakes on the change
// (its Watch of Scope{Agent}).
func Send(s *store.Store, st state.Mailboxes, m Message) (Message, error) {
	if !ids.ValidAgentName(m.To) { // m.To becomes a path under agents/
		return m, errs.Usagef("see pm prompts and pm agents for the names that exist", "%q is not an agent name", m.To)
	}
	m.Text, m.Error = s.Secrets.Mask(m.Text), s.Secrets.Mask(m.Error) // an inbox is state: no secret reaches it
	if m.ID == "" {
		m.ID = s.IDs.New(ids.Message)
	}
	if m.Time.IsZero() {
		m.Time = s.Now().UTC()
	}
	if err := st.Post(m.To, m); err != nil {
		return m, err
	}
	text := m.Text
	if m.Error != "" {
		text = "error: " + m.Error
	}
	s.Notify(bus.Event{Kind: bus.POKind(m.Kind), Actor: m.From, Agent: m.To, TaskID: m.TaskID, MsgID: m.ID,
		Text: m.From + " → " + m.To + ": " + text, Data: bus.POMessage{Corr: m.Corr, Cause: m.Cause}})
	return m, nil
}

// Resident returns the record of the resident agent that plays prompt object
// po (named after it), creating it on first use.
func Resident(s *store.Store, st state.State, po *prompt.Object, runtime config.RuntimeName) (*store.Agent, error) {
	if a, err := st.Agent(po.Name); err == nil {
		return a, nil
	}
	rec := store.Agent{Name: po.Name, Prompt: po.Name, Runtime: runtime, Model: po.Model, Status: store.AgentPending, CreatedAt: s.Now().UTC()}
	// Of two callers racing, one creates it and both read the same record.
	if _, err := st.CreateAgent(&rec); err != nil {
		return nil, err
	}
	return st.Agent(po.Name)
}

// Call sends text to prompt object `to` and blocks until its reply lands in
// the caller's inbox. The callee's process is started if it is not running.
// onDelta, if set, receives the reply's text as the callee streams it. If the
// callee's process ends without replying, Call returns its recorded reason.
func Call(ctx context.Context, s *store.Store, l *agent.Launcher, from, to, text string, onDelta func(string)) (string, error) {
	st := l.State
	set, err := prompt.LoadProject(s, st)
	if err != nil {
		return "", err
	}
	po, err := set.Lookup(to)
	if err != nil {
		return "", err
	}
	if from == to {
		return "", errs.Usagef("ask another prompt object", "@%s cannot call itself", to)
	}
	runtime := po.Runtime
	if runtime == "" {
		runtime = config.RuntimeLLM
	}
	if _, err := Resident(s, st, po, runtime); err != nil {
		return "", err
	}
	if err := state.CheckName(from); err != nil {
		return "", err
	}
	corr := s.IDs.New(ids.Request)
	// Start reading before sending, so neither reply nor stream can slip
	// past: the replies from the caller's mailbox's end as it is now.
	pos, err := st.MailboxEnd(from)
	if err != nil {
		return "", err
	}
	streamPos, err := st.RepliesEnd(to)
	if err != nil {
		return "", err
	}
	if _, err := Send(s, st, Message{Kind: KindRequest, From: from, To: to, Corr: corr, Cause: bus.CauseOf(ctx), Text: text}); err != nil {
		return "", err
	}
	if err := revive(s, st, to); err != nil {
		return "", err
	}
	if err := l.Start(to); err != nil {
		return "", err
	}
	var reply *Message
	var gone string
	// The caller's mailbox (the reply) and the callee (its record, its
	// stream) wake the wait.
	scopes := []state.Scope{{Agent: from}, {Agent: to, Replies: onDelta != nil}}
	err = state.WatchAny(ctx, st, scopes, func() (bool, error) {
		var err error
		if onDelta != nil {
			streamPos, err = st.ReadReplies(to, streamPos, func(raw json.RawMessage, _ int64) error {
				var d Delta
				if json.Unmarshal(raw, &d) == nil && d.Corr == corr {
					onDelta(d.Text)
				}
				return nil
			})
			if err != nil {
				return false, err
			}
		}
		pos, err = st.ReadMailbox(from, pos, func(raw json.RawMessage, _ int64) error {
			var m Message
			if json.Unmarshal(raw, &m) == nil && m.Kind == KindReply && m.Corr == corr && m.From == to {
				reply = &m
			}
			return nil
		})
		if err != nil {
			return false, err
		}
		if reply != nil {
			return true, nil
		}
		// Gone for good: failed, killed, or left on purpose (exit 0). A crash
		// (non-zero exit) is respawned and answers the request, so keep waiting.
		if a, err := st.Agent(to); err == nil && (a.Status == store.AgentFailed || a.Status == store.AgentKilled ||
			(a.Status == store.AgentExited && a.ExitCode != nil && *a.ExitCode == 0)) {
			gone = string(a.Status) + ": " + a.Reason
			return true, nil
		}
		return false, nil
	})
	if err != nil {
		return "", err
	}
	if reply == nil {
		return "", errs.Failf("see pm logs "+to, "@%s ended without replying (%s)", to, gone)
	}
	if reply.Error != "" {
		return "", errs.Failf("see pm logs "+to, "@%s failed: %s", to, reply.Error)
	}
	return reply.Text, nil
}

// revive lets a resident that was given up on (failed) or killed run again:
// a new call is an explicit retry, one process per call at most.
func revive(s *store.Store, st state.State, name string) error {
	a, err := st.Agent(name)
	if err != nil || (a.Status != store.AgentFailed && a.Status != store.AgentKilled) {
		return err
	}
	_, err = st.UpdateAgent(name, func(r *store.Agent) error {
		if r.Status == store.AgentFailed || r.Status == store.AgentKilled {
			r.Status, r.Reason, r.ExitCode = store.AgentExited, "", nil
		}
		return nil
	})
	return err
}

// Delta is one piece of a streamed reply (state.Replies: agents/NAME/
// stream.jsonl on files, the project's reply stream on a hub).
type Delta struct {
	Corr string `json:"corr"`
	Text string `json:"text"`
}

// ReplyAppender is the part of state.Replies a resident writes with.
type ReplyAppender interface {
	AppendReply(agent string, v any) error
}

// Stream appends a piece of the reply to request corr (a resident's
// model loop streams through a Streamer, which calls it off its path).
func Stream(st ReplyAppender, name, corr, text string) error {
	return st.AppendReply(name, Delta{Corr: corr, Text: text})
}

// Handler answers one request; its error becomes the reply's Error.
type Handler func(ctx context.Context, m Message) (string, error)

// Serve answers the requests in name's inbox one at a time, forever (until
// ctx ends). It resumes after the last request it answered (cursor file), so
// a respawned agent neither loses nor repeats a request. notice is called for
// notices and may be nil.
func Serve(ctx context.Context, s *store.Store, st state.State, name string, handle Handler, notice func(Message)) error {
	pos, err := st.MailboxCursor(name)
	if err != nil {
		return err
	}
	return st.Watch(ctx, state.Scope{Agent: name}, func() (bool, error) {
		for {
			var next *Message
			_, err := st.ReadMailbox(name, pos, func(raw json.RawMessage, after int64) error {
				pos = after // past what is not a message, too
				var m Message
				if json.Unmarshal(raw, &m) != nil {
					return nil
				}
				next = &m
				return errStop
			})
			if err != nil && err != errStop {
				return false, err
			}
			if next == nil {
				return false, nil
			}
			switch next.Kind {
			case KindRequest:
				text, herr := handle(bus.WithCause(ctx, next.Corr), *next) // what it causes nests under it
				reply := Message{Kind: KindReply, From: name, To: next.From, Corr: next.Corr, TaskID: next.TaskID, Text: text}
				if herr != nil {
					reply.Error = herr.Error()
				}
				if _, err := Send(s, st, reply); err != nil {
					return false, err
				}
			case KindNotice:
				if notice != nil {
					notice(*next)
				}
			}
			if err := st.SetMailboxCursor(name, pos); err != nil {
				return false, err
			}
		}
	})
}

var errStop = errs.Failf("", "stop")

// Format renders a request for the model: who asks, and what.
func Format(m Message) string {
	from := "@" + m.From
	if m.From == "human" {
		from = "the human"
	}
	return "Message from " + from + ":\n" + strings.TrimSpace(m.Text)
}

// Parse is Format read back (a transcript's user turn): who asked and what.
// ok is false for text Format did not write.
func Parse(text string) (from, body string, ok bool) {
	head, body, ok := strings.Cut(text, "\n")
	rest, found := strings.CutPrefix(head, "Message from ")
	if !ok || !found || !strings.HasSuffix(rest, ":") {
		return "", "", false
	}
	from = strings.TrimSuffix(rest, ":")
	if from == "the human" {
		return "human", body, true
	}
	from, found = strings.CutPrefix(from, "@")
	if !found || from == "" {
		return "", "", false
	}
	return from, body, true
}

// IdleOut ends resident name's run (pid) when it has nothing to do: under
// the agent's lock, with no unanswered message in its inbox, it is recorded
// exited (exit 0, reason "idle") and IdleOut reports true; the host then
// leaves. A caller appends its request before Launcher.Start reads the
// record under the same lock, so either the resident sees the request and
// stays, or Start sees it exited and starts it again: no request is
// stranded.
func IdleOut(s *store.Store, st state.State, name string, pid int) (bool, error) {
	out := false
	_, err := st.UpdateAgent(name, func(r *store.Agent) error {
		if r.Status != store.AgentRunning || r.Pid != pid {
			return store.ErrUnchanged
		}
		// An entry past the saved cursor is one not answered yet.
		end, err := st.MailboxEnd(name)
		if err != nil {
			return err
		}
		cursor, err := st.MailboxCursor(name)
		if err != nil {
			return err
		}
		if end > cursor {
			return store.ErrUnchanged
		}
		now, zero := s.Now().UTC(), 0
		r.Status, r.ExitCode, r.Reason, r.EndedAt = store.AgentExited, &zero, "idle", &now
		out = true
		return nil
	})
	return out, err
}

package ops

import (
	"context"
	"encoding/json"

	"github.com/plasmodium/pm/internal/phase"
	"github.com/plasmodium/pm/internal/store"
)

// SayInput is pm say.
type SayInput struct {
	Message string `json:"message" jsonschema:"the message, under 16 KiB"`
	Phase   string `json:"phase,omitempty" jsonschema:"phase id ph-...; default: your own phase, or your task's active one"`
}

// SayResult is the posted message and whether it filled the room.
type SayResult struct {
	Phase   *store.Phase  `json:"phase"`
	Message store.Message `json:"message"`
	// Closed: this message reached the limit and closed the phase.
	Closed bool `json:"closed"`
}

// Say posts a message to a phase; a phase closes exactly at its limit. An
// agent posts only into its own room (CheckPost).
func Say(ctx context.Context, sess *Session, in SayInput) (SayResult, error) {
	ph, err := ResolvePhase(sess.Store, sess.Actor, in.Phase)
	if err != nil {
		return SayResult{}, err
	}
	if err := CheckPost(sess.Actor, ph); err != nil {
		return SayResult{}, err
	}
	msg, closed, err := phase.Say(sess.Store, sess.Actor, ph.TaskID, ph.ID, in.Message)
	if err != nil {
		return SayResult{}, err
	}
	return SayResult{Phase: ph, Message: msg, Closed: closed}, nil
}

// ChatInput is pm chat (without --follow, which streams).
type ChatInput struct {
	Phase string `json:"phase,omitempty" jsonschema:"phase id ph-...; default: your own phase, or your task's active one"`
	Wait  bool   `json:"wait,omitempty" jsonschema:"block until there is a new message from someone else"`
}

// ChatResult is what the room holds (or, after a wait, what is new).
type ChatResult struct {
	Phase *store.Phase `json:"phase"`
	// Lines are the valid JSON lines read, as written (pm chat --json
	// prints them unchanged); Count is how many the phase held.
	Lines []json.RawMessage `json:"-"`
	Count int               `json:"count"`
	// Messages are the lines that are messages (objects with an id).
	Messages []store.Message `json:"messages"`
}

// Chat reads a phase's messages and marks them seen. With Wait it blocks
// until someone else posts and returns only what the actor has not seen;
// it ends with an exit-5 error when the phase closes first.
func Chat(ctx context.Context, sess *Session, in ChatInput) (ChatResult, error) {
	s, actor := sess.Store, sess.Actor
	ph, err := ResolvePhase(s, actor, in.Phase)
	if err != nil {
		return ChatResult{}, err
	}
	if in.Wait {
		w, err := phase.WaitNew(ctx, s, actor, ph)
		if w == nil {
			return ChatResult{Phase: ph}, err
		}
		return chatResult(w.Phase, w.Fresh, w.Count), err
	}
	var lines [][]byte
	if err := s.ReadMessageLines(ph.TaskID, ph.ID, func(raw []byte) error { lines = append(lines, raw); return nil }); err != nil {
		return ChatResult{}, err
	}
	phase.MarkSeen(s, actor, ph, len(lines))
	return chatResult(ph, lines, len(lines)), nil
}

func chatResult(ph *store.Phase, lines [][]byte, count int) ChatResult {
	res := ChatResult{Phase: ph, Count: count, Messages: []store.Message{}}
	for _, raw := range lines {
		res.Lines = append(res.Lines, raw)
		var m store.Message
		if json.Unmarshal(raw, &m) == nil && m.ID != "" {
			res.Messages = append(res.Messages, m)
		}
	}
	return res
}

// HistoryInput is pm history.
type HistoryInput struct {
	Task string `json:"task,omitempty" jsonschema:"task id tk-...; default: your own task, or the only active one"`
	// Tail is a pointer so 0 (show nothing) differs from unset (DefaultTail).
	Tail *int `json:"tail,omitempty" jsonschema:"how many messages, counted back from the newest (default 20)"`
}

// DefaultTail is how many messages history shows when not told.
const DefaultTail = 20

// HistoryResult is the last messages of a task's phases, oldest first.
type HistoryResult struct {
	Task    *store.Task   `json:"task"`
	Entries []phase.Entry `json:"entries"`
}

// History reads the last Tail messages of all the phases of a task.
func History(ctx context.Context, sess *Session, in HistoryInput) (HistoryResult, error) {
	t, err := ResolveTask(sess.Store, sess.Actor, in.Task)
	if err != nil {
		return HistoryResult{}, err
	}
	tail := DefaultTail
	if in.Tail != nil {
		tail = *in.Tail
	}
	entries, err := phase.History(sess.Store, t.ID, tail)
	if err != nil {
		return HistoryResult{}, err
	}
	return HistoryResult{Task: t, Entries: entries}, nil
}

// PhaseInput is pm phase.
type PhaseInput struct {
	Task  string   `json:"task,omitempty" jsonschema:"task id tk-...; default: your own task"`
	Name  string   `json:"name" jsonschema:"what the phase is for, e.g. \"Design\""`
	Limit int      `json:"limit" jsonschema:"messages after which the phase closes"`
	Roles []string `json:"roles" jsonschema:"roles to bring in (prompt objects such as designer, developer, pm, copywriter, qa); at most 3"`
	Rules string   `json:"rules,omitempty" jsonschema:"rules for this phase, e.g. \"no code, just ideas\""`
}

// PhaseResult is the opened phase and its role agents, in the order of its
// roles. With an error it may still hold the phase (a role agent failed to
// start after the phase opened).
type PhaseResult struct {
	Phase  *store.Phase `json:"phase"`
	Agents []string     `json:"agents"`
}

// Partial reports that the phase opened even though the result comes with
// an error.
func (r PhaseResult) Partial() bool { return r.Phase != nil }

// OpenPhase opens a bounded discussion phase on the actor's task and starts
// one role agent per role (owners only).
func OpenPhase(ctx context.Context, sess *Session, in PhaseInput) (PhaseResult, error) {
	t, err := OwnTask(sess.Store, sess.Actor, in.Task)
	if err != nil {
		return PhaseResult{}, err
	}
	l, err := sess.launcher()
	if err != nil {
		return PhaseResult{}, err
	}
	ph, names, err := phase.Open(sess.Store, l, sess.Actor, phase.Spec{TaskID: t.ID, Name: in.Name, Limit: in.Limit, Roles: in.Roles, Rules: in.Rules})
	return PhaseResult{Phase: ph, Agents: names}, err
}

// ExtendInput is pm extend-phase.
type ExtendInput struct {
	Task string `json:"task,omitempty" jsonschema:"task id tk-...; default: your own task"`
	N    int    `json:"n" jsonschema:"how many messages to add"`
}

// ExtendPhase adds N messages to the active phase's limit (owners only).
func ExtendPhase(ctx context.Context, sess *Session, in ExtendInput) (*store.Phase, error) {
	t, ph, err := ownActivePhase(sess, in.Task, "open one with pm phase")
	if err != nil {
		return nil, err
	}
	return phase.Extend(sess.Store, sess.Actor, t.ID, ph.ID, in.N)
}

// EndInput is pm end-phase.
type EndInput struct {
	Task string `json:"task,omitempty" jsonschema:"task id tk-...; default: your own task"`
}

// EndPhase closes the active phase early; its role agents leave (owners only).
func EndPhase(ctx context.Context, sess *Session, in EndInput) (*store.Phase, error) {
	t, ph, err := ownActivePhase(sess, in.Task, "nothing to end; see pm status")
	if err != nil {
		return nil, err
	}
	return phase.Close(sess.Store, sess.Actor, t.ID, ph.ID, store.CloseEnded)
}

// ownActivePhase is the owner's task and its active phase (try: what to do
// when there is none).
func ownActivePhase(sess *Session, taskID, try string) (*store.Task, *store.Phase, error) {
	t, err := OwnTask(sess.Store, sess.Actor, taskID)
	if err != nil {
		return nil, nil, err
	}
	ph, err := phase.Active(sess.Store, t.ID, try)
	return t, ph, err
}

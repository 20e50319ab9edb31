package ops

import (
	"bytes"
	"context"
	"encoding/json"

	"github.com/plasmodium/pm/internal/phase"
	"github.com/plasmodium/pm/internal/store"
)

// ChatInput is pm chat (without --follow, which streams).
type ChatInput struct {
	Phase string `json:"phase,omitempty" jsonschema:"ph-...; default: yours"`
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
	if in.Wait {
		return chatWait(ctx, sess, in)
	}
	res := ChatResult{Messages: []store.Message{}}
	streamed, err := ChatStream(ctx, sess, in.Phase, func(raw []byte, m *store.Message) error {
		res.Lines = append(res.Lines, bytes.Clone(raw)) // raw is the reader's buffer
		if m.ID != "" {
			res.Messages = append(res.Messages, *m)
		}
		return nil
	})
	res.Phase, res.Count = streamed.Phase, streamed.Count
	return res, err
}

// ChatStream is Chat without a wait for a reader that prints as it reads
// (pm chat): each line of the room goes to each once, decoded once, and
// nothing is held, so memory does not grow with the room. The result has
// the phase and the count only. The lines are marked seen once all were
// handed on.
func ChatStream(ctx context.Context, sess *Session, phaseID string, each func(raw []byte, m *store.Message) error) (ChatResult, error) {
	ph, n, err := phase.Read(sess.Store, sess.State, sess.Actor, phaseID, each)
	return ChatResult{Phase: ph, Count: n, Messages: []store.Message{}}, err
}

func chatWait(ctx context.Context, sess *Session, in ChatInput) (ChatResult, error) {
	st := sess.State
	s, actor := sess.Store, sess.Actor
	ph, err := phase.Resolve(s, st, actor, in.Phase)
	if err != nil {
		return ChatResult{}, err
	}
	w, err := phase.WaitNew(ctx, s, st, actor, ph)
	if w == nil {
		return ChatResult{Phase: ph}, err
	}
	return chatResult(w.Phase, w.Fresh, w.Count), err
}

func chatResult(ph *store.Phase, lines [][]byte, count int) ChatResult {
	res := ChatResult{Phase: ph, Count: count, Messages: []store.Message{}}
	for _, raw := range lines {
		res.Lines = append(res.Lines, raw)
		if m, err := store.DecodeMessage(raw); err == nil && m.ID != "" {
			res.Messages = append(res.Messages, m)
		}
	}
	return res
}

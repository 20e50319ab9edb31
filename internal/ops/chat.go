package ops

import (
	"context"
	"encoding/json"

	"github.com/plasmodium/pm/internal/phase"
	"github.com/plasmodium/pm/internal/store"
)

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

package ops

import (
	"context"

	"github.com/plasmodium/pm/internal/phase"
	"github.com/plasmodium/pm/internal/store"
)

// SayInput is pm say.
type SayInput struct {
	Message string `json:"message" jsonschema:"the message, under 16 KiB"`
	Phase   string `json:"phase,omitempty" jsonschema:"ph-...; default: yours"`
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
	ph, msg, closed, err := phase.Post(sess.Store, sess.State, sess.Actor, sess.Fence, in.Phase, in.Message)
	if err != nil {
		return SayResult{}, err
	}
	return SayResult{Phase: ph, Message: msg, Closed: closed}, nil
}

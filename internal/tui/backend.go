package tui

import (
	"context"

	"github.com/plasmodium/pm/internal/bus"
	"github.com/plasmodium/pm/internal/ops"
	"github.com/plasmodium/pm/internal/request"
)

// Backend is everything the screens read and do. FromSession is the real
// one (internal/ops); tests inject their own.
type Backend struct {
	Inspect  func(ctx context.Context, po string) (ops.InspectResult, error)
	Send     func(ctx context.Context, po, text string, onDelta func(string)) (string, error)
	Requests func(ctx context.Context) ([]*request.Request, error)
	Answer   func(ctx context.Context, id, text string) error
	// History is the object's stored conversation, oldest first (its
	// transcript: user turns as inbox.Format wrote them).
	History func(ctx context.Context, po string) ([]ops.Turn, error)
	// Bus is where live events come from; nil: none (a frozen screen).
	Bus bus.Bus
}

// FromSession is the backend of a pm session: every call one ops function.
func FromSession(sess *ops.Session) Backend {
	return Backend{
		Inspect: func(ctx context.Context, po string) (ops.InspectResult, error) {
			return ops.InspectPO(ctx, sess, ops.InspectInput{PO: po})
		},
		Send: func(ctx context.Context, po, text string, onDelta func(string)) (string, error) {
			r, err := ops.Send(ctx, sess, ops.SendInput{PO: po, Message: text, OnDelta: onDelta})
			return r.Reply, err
		},
		Requests: func(ctx context.Context) ([]*request.Request, error) {
			return ops.Requests(ctx, sess, ops.RequestsInput{})
		},
		Answer: func(ctx context.Context, id, text string) error {
			_, err := ops.Answer(ctx, sess, ops.AnswerInput{ID: id, Text: text})
			return err
		},
		History: func(ctx context.Context, po string) ([]ops.Turn, error) {
			c, err := ops.Conversation(ctx, sess, ops.ConversationInput{PO: po, Limit: historyLimit})
			return c.Turns, err
		},
		Bus: sess.Store.Bus(),
	}
}

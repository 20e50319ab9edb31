package bus

import "context"

type causeKey struct{}

// WithCause marks ctx as work done for call id (an inbox request's
// correlation id). Publishers acting under it put the id in their
// payload's Cause (data.cause), so a follower nests what a call caused under that call (pm
// talk's message log) from ids, not from guesses about timing or names.
func WithCause(ctx context.Context, id string) context.Context {
	if id == "" {
		return ctx
	}
	return context.WithValue(ctx, causeKey{}, id)
}

// CauseOf is the call ctx works for, or "" outside any call.
func CauseOf(ctx context.Context) string {
	id, _ := ctx.Value(causeKey{}).(string)
	return id
}

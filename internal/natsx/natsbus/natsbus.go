// Package natsbus is pm's bus on JetStream: one stream, one subject, so
// every event has one place in one order, and a cursor is that place (the
// stream sequence). A follower on any machine resumes from a cursor.
//
// Invariants:
//   - Publish returns the event's cursor once the stream holds it (synced
//     on a single node, on two of three in a cluster).
//   - An event is published once by its id (Nats-Msg-Id): a publish
//     retried after a lost acknowledgement returns the first cursor.
//   - Follow(after) delivers every event with a cursor above after, in
//     cursor order, then each new one as it is stored, pushed by an
//     ordered consumer: nothing polls, nothing is skipped or repeated.
package natsbus

import (
	"context"

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"

	"github.com/plasmodium/pm/internal/natsx"
)

// Stream and Subject hold the bus.
const (
	Stream  = "PM_BUS"
	Subject = "pm.bus"
)

// Bus is the bus on one connection.
type Bus struct {
	c *natsx.Conn
	s jetstream.Stream
}

// Open makes sure the bus's stream exists.
func Open(ctx context.Context, c *natsx.Conn) (*Bus, error) {
	s, err := c.Stream(ctx, jetstream.StreamConfig{Name: Stream, Subjects: []string{Subject}})
	if err != nil {
		return nil, err
	}
	return &Bus{c: c, s: s}, nil
}

// Publish stores event data under id and returns its cursor.
func (b *Bus) Publish(ctx context.Context, id string, data []byte) (uint64, error) {
	op, cancel := natsx.Op(ctx)
	defer cancel()
	ack, err := b.c.JS.PublishMsg(op, &nats.Msg{Subject: Subject, Data: data}, jetstream.WithMsgID(id))
	if err != nil {
		return 0, err
	}
	return ack.Sequence, nil
}

// End is the cursor of the last event (0 when there is none): following
// from it delivers only what comes next.
func (b *Bus) End(ctx context.Context) (uint64, error) {
	op, cancel := natsx.Op(ctx)
	defer cancel()
	info, err := b.s.Info(op)
	if err != nil {
		return 0, err
	}
	return info.State.LastSeq, nil
}

// Follow calls fn with each event after cursor after, in order, and then
// with each new one, until fn returns natsx.ErrStop (nil), fails or ctx
// ends.
func (b *Bus) Follow(ctx context.Context, after uint64, fn func(cursor uint64, data []byte) error) error {
	return b.c.Follow(ctx, Stream, Subject, after+1, func(m jetstream.Msg) error {
		return fn(natsx.Seq(m), m.Data())
	})
}

// Package natsbus is pm's bus on JetStream: one stream and one subject per
// project (natsx.ProjectNames), so every event has one place in one order,
// and a cursor is that place (the stream sequence). A follower on any machine resumes from a cursor.
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

// Bus is one project's bus on one connection: its stream and subject are
// the project's (natsx.ProjectNames).
type Bus struct {
	c       *natsx.Conn
	s       jetstream.Stream
	stream  string
	subject string
}

// Open makes sure project's bus stream exists.
func Open(ctx context.Context, c *natsx.Conn, project string) (*Bus, error) {
	n, err := natsx.ProjectNames(project)
	if err != nil {
		return nil, err
	}
	s, err := c.Stream(ctx, jetstream.StreamConfig{Name: n.Bus, Subjects: []string{n.BusSubject}})
	if err != nil {
		return nil, err
	}
	return &Bus{c: c, s: s, stream: n.Bus, subject: n.BusSubject}, nil
}

// Publish stores event data under id and returns its cursor.
func (b *Bus) Publish(ctx context.Context, id string, data []byte) (uint64, error) {
	op, cancel := natsx.Op(ctx)
	defer cancel()
	ack, err := b.c.JS.PublishMsg(op, &nats.Msg{Subject: b.subject, Data: data}, jetstream.WithMsgID(id))
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
	return b.c.Follow(ctx, b.stream, b.subject, after+1, func(m jetstream.Msg) error {
		return fn(natsx.Seq(m), m.Data())
	})
}

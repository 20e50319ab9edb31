// Package room is a room on JetStream: an append-only log per room, one
// subject of the rooms' stream, that accepts exactly its limit of
// messages with writers on any number of connections and machines.
//
// Invariants:
//   - A message is accepted only as the room's next one: it carries its
//     index (Pm-Index, 1-based) and is published with the subject's last
//     sequence as it was read (Nats-Expected-Last-Subject-Sequence), so
//     the stream itself refuses every writer but one for each index. A
//     refused writer reads again and retries; the writer that reads the
//     room holding limit messages gets ErrFull. No lock of pm's own.
//   - An append is idempotent by its id (Nats-Msg-Id): retried after a
//     lost acknowledgement, it is found (a duplicate within the stream's
//     window, or among the room's messages) and reported once, never
//     stored twice.
//   - An append rides out a cluster's change of leader: each of its
//     requests is repeated while it fails transiently (natsx.Do, bounded
//     by natsx.RideOut), the publish with the same id and the same
//     expected sequence, so a repeat of one that landed is a duplicate or
//     a refusal, never a second message (after a refusal, an append whose
//     publish went unanswered looks for its id before it tries the next
//     index). Without a majority it fails.
//   - A room's count is the last message's index: one read, whatever the
//     room holds; that read is the last message itself (Last).
package room

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strconv"

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"

	"github.com/plasmodium/pm/internal/natsx"
)

// Stream is the rooms' stream; a room is the subject Prefix+name.
const (
	Stream = "PM_ROOMS"
	Prefix = "pm.room."
	// IndexHeader carries a message's 1-based place in its room.
	IndexHeader = "Pm-Index"
)

// ErrFull is an append to a room that holds its limit.
var ErrFull = errors.New("room: full")

// Rooms are the rooms on one connection.
type Rooms struct {
	c      *natsx.Conn
	s      jetstream.Stream
	stream string
	prefix string
	// fences: the stream also holds the subjects under this prefix (a
	// lease.Writer's fence marks: OpenFenced); batched: and it takes
	// atomic batches, so a message and a fence mark are stored together
	// or not at all.
	fences  string
	batched bool
}

// Open makes sure the rooms' stream exists (Stream, Prefix).
func Open(ctx context.Context, c *natsx.Conn) (*Rooms, error) {
	return OpenNamed(ctx, c, Stream, Prefix)
}

// OpenNamed is Open for rooms in stream under subject prefix (ending in
// a dot): one project's rooms apart from another's.
func OpenNamed(ctx context.Context, c *natsx.Conn, stream, prefix string) (*Rooms, error) {
	return OpenFenced(ctx, c, stream, prefix, "")
}

// OpenFenced is OpenNamed for rooms whose appends may carry a holder's
// fence mark (lease.Writer.AppendWith): a stream it makes also holds the
// subjects under fencePrefix (ending in a dot), takes atomic batches
// (AllowAtomicPublish) and rollups (a mark replaces its subject's earlier
// ones; room subjects never carry one). An existing stream is taken as it
// is, never reconfigured: Fences says whether it has them. fencePrefix ""
// is OpenNamed.
func OpenFenced(ctx context.Context, c *natsx.Conn, stream, prefix, fencePrefix string) (*Rooms, error) {
	cfg := jetstream.StreamConfig{Name: stream, Subjects: []string{prefix + ">"}}
	if fencePrefix != "" {
		cfg.Subjects = append(cfg.Subjects, fencePrefix+">")
		cfg.AllowAtomicPublish, cfg.AllowRollup = true, true
	}
	s, err := c.Stream(ctx, cfg)
	if err != nil {
		return nil, err
	}
	r := &Rooms{c: c, s: s, stream: stream, prefix: prefix}
	if cfg := s.CachedInfo().Config; fencePrefix != "" && holdsFences(cfg, fencePrefix) {
		r.fences, r.batched = fencePrefix, Batches(cfg, fencePrefix)
	}
	return r, nil
}

// holdsFences reports whether a rooms' stream of configuration cfg holds
// the fence subjects under fencePrefix (OpenFenced made it).
func holdsFences(cfg jetstream.StreamConfig, fencePrefix string) bool {
	return slices.Contains(cfg.Subjects, fencePrefix+">")
}

// Batches reports whether a rooms' stream of configuration cfg stores a
// room's message and a fence mark as one atomic batch: it holds the fence
// subjects and takes atomic batches (a server before 2.12 keeps no
// AllowAtomicPublish, and its rooms' appends are not fenced by it).
func Batches(cfg jetstream.StreamConfig, fencePrefix string) bool {
	return holdsFences(cfg, fencePrefix) && cfg.AllowAtomicPublish
}

// Fences is the prefix of the fence subjects the rooms' stream holds, ""
// when it holds none (a stream made before, or by OpenNamed).
func (r *Rooms) Fences() string { return r.fences }

// Batched reports whether a room's append can carry a fence mark in one
// atomic batch (Batches).
func (r *Rooms) Batched() bool { return r.batched }

// Publish stores m, a room's next message (its subject, data and headers
// set: its index, its message id, the room's last sequence as expected),
// and answers as a JetStream publish does: a repeat of a message that
// landed is acknowledged as a Duplicate, a room that moved on is refused
// with a wrong last sequence (natsx.WrongLast). Any other error ends the
// append as it is. It is repeated while it fails transiently (natsx.Do).
type Publish func(ctx context.Context, m *nats.Msg) (*jetstream.PubAck, error)

// Subject is the subject of room.
func (r *Rooms) Subject(room string) string { return r.prefix + room }

// Appended is an accepted message.
type Appended struct {
	Seq   uint64 // its stream sequence
	Index int    // its place in the room, 1-based
	// Closing: it is the limit-th message, the one that closes the room.
	Closing bool
	// Again: it had been accepted already (an append retried).
	Again bool
}

// Append adds data to room as message id, unless the room holds limit
// messages (ErrFull).
func (r *Rooms) Append(ctx context.Context, room, id string, data []byte, limit int) (Appended, error) {
	return r.AppendVia(ctx, room, id, data, limit, func(op context.Context, m *nats.Msg) (*jetstream.PubAck, error) {
		return r.c.JS.PublishMsg(op, m)
	})
}

// AppendVia is Append with each attempt stored by publish (a fenced
// writer's atomic batch): the room's invariants are Append's, whatever
// publish adds to them.
func (r *Rooms) AppendVia(ctx context.Context, room, id string, data []byte, limit int, publish Publish) (Appended, error) {
	subj := r.prefix + room
	maybeStored := false // a publish of this append went unanswered
	for {
		n, last, err := r.last(ctx, subj)
		if err != nil {
			return Appended{}, err
		}
		if n >= limit {
			if got, ok, err := r.find(ctx, room, id); err != nil || ok {
				got.Closing = got.Index == limit
				return got, err
			}
			return Appended{}, ErrFull
		}
		m := &nats.Msg{Subject: subj, Data: data, Header: nats.Header{}}
		m.Header.Set(IndexHeader, strconv.Itoa(n+1))
		m.Header.Set(jetstream.MsgIDHeader, id)
		m.Header.Set(jetstream.ExpectedLastSubjSeqHeader, strconv.FormatUint(last, 10))
		// Repeated while the cluster changes leaders: the id makes a
		// repeat of a publish that landed a duplicate, never a second copy.
		var ack *jetstream.PubAck
		err = natsx.Do(ctx, func(op context.Context) error {
			var err error
			ack, err = publish(op, m)
			maybeStored = maybeStored || natsx.Transient(err)
			return err
		})
		switch {
		case err == nil && ack.Duplicate:
			// Accepted before, maybe as another index: report the stored one.
			if got, ok, err := r.find(ctx, room, id); err != nil || ok {
				got.Closing = got.Index == limit
				return got, err
			}
			return Appended{}, fmt.Errorf("room %s: message %s acknowledged as a duplicate but not in the room", room, id)
		case err == nil:
			return Appended{Seq: ack.Sequence, Index: n + 1, Closing: n+1 == limit}, nil
		case natsx.WrongLast(err) && maybeStored:
			// A publish of ours went unanswered: it may be the message
			// that moved the room on (a duplicate the new leader did not
			// recognise would be refused here, not reported). Look first.
			if got, ok, err := r.find(ctx, room, id); err != nil || ok {
				got.Closing = got.Index == limit
				return got, err
			}
			continue
		case natsx.WrongLast(err):
			continue // another writer took index n+1: read again
		default:
			return Appended{}, err
		}
	}
}

// Count is how many messages room holds.
func (r *Rooms) Count(ctx context.Context, room string) (int, error) {
	n, _, err := r.last(ctx, r.prefix+room)
	return n, err
}

// last is the room's count and the sequence of its last message (0, 0
// for an empty room).
func (r *Rooms) last(ctx context.Context, subj string) (int, uint64, error) {
	m, err := r.lastMsg(ctx, subj)
	return m.Index, m.Seq, err
}

// Last is room's last message, the zero Message (Index 0) when it holds
// none: one read from the stream's leader, which a follower that is one
// message behind needs and nothing more (no consumer).
func (r *Rooms) Last(ctx context.Context, room string) (Message, error) {
	return r.lastMsg(ctx, r.prefix+room)
}

func (r *Rooms) lastMsg(ctx context.Context, subj string) (Message, error) {
	m, err := natsx.Last(ctx, r.s, subj)
	if err != nil || m == nil {
		return Message{}, err
	}
	n, err := strconv.Atoi(m.Header.Get(IndexHeader))
	if err != nil {
		return Message{}, fmt.Errorf("room %s: message %d has no index", subj, m.Sequence)
	}
	return Message{Seq: m.Sequence, Index: n, ID: m.Header.Get(jetstream.MsgIDHeader), Data: m.Data}, nil
}

// Message is one message of a room.
type Message struct {
	Seq   uint64
	Index int
	ID    string
	Data  []byte
}

// Read calls fn with each message room holds now, in order.
func (r *Rooms) Read(ctx context.Context, room string, fn func(Message) error) error {
	n, last, err := r.last(ctx, r.prefix+room)
	if err != nil || n == 0 {
		return err
	}
	return r.Follow(ctx, room, 0, func(m Message) error {
		if err := fn(m); err != nil {
			return err
		}
		if m.Seq >= last {
			return natsx.ErrStop
		}
		return nil
	})
}

// Follow calls fn with each message of room after index after, in order,
// then with each one accepted later, until fn returns natsx.ErrStop (nil),
// fails or ctx ends. Nothing polls: the stream pushes them.
func (r *Rooms) Follow(ctx context.Context, room string, after int, fn func(Message) error) error {
	return r.c.Follow(ctx, r.stream, r.prefix+room, 0, func(jm jetstream.Msg) error {
		m := Message{Seq: natsx.Seq(jm), ID: jm.Headers().Get(jetstream.MsgIDHeader), Data: jm.Data()}
		m.Index, _ = strconv.Atoi(jm.Headers().Get(IndexHeader))
		if m.Index <= after {
			return nil
		}
		return fn(m)
	})
}

// find looks for message id among room's messages.
func (r *Rooms) find(ctx context.Context, room, id string) (Appended, bool, error) {
	var got Appended
	found := false
	// Read's own requests ride out a change of leader (last, and the
	// ordered consumer, which resets itself); the reading is not bounded
	// by one request's deadline: a room may be long.
	err := r.Read(ctx, room, func(m Message) error {
		if m.ID == id {
			got, found = Appended{Seq: m.Seq, Index: m.Index, Again: true}, true
			return natsx.ErrStop
		}
		return nil
	})
	return got, found, err
}

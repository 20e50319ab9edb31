package natsstate

import (
	"context"
	"crypto/rand"
	"errors"

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"

	"github.com/plasmodium/pm/internal/natsx"
)

// The state's requests to the hub, each through natsx.Do: repeated while a
// cluster changes leaders (issue 24), which only a request safe to repeat
// may be. Reads are; a write is made so here: every write carries a
// message id of its own (a repeat of one that landed is a duplicate, not a
// second write) and, when it is a compare-and-set, the revision it expects
// (a repeat the stream refuses because its first attempt moved the key on
// is recognised as that attempt: its id is the key's last).

// do runs req through natsx.Do within the state's life.
func (s *State) do(req func(op context.Context) error) error { return natsx.Do(s.ctx, req) }

// kvOp is the header of a key-value bucket's delete marker (jetstream's
// own, which a raw write must set as kv.Delete does).
const (
	kvOp  = "KV-Operation"
	kvDel = "DEL"
)

// anyRev: write with no expected revision (a put).
const anyRev = natsx.AnyLast

// writeID is a message id no other write of any process takes: the
// stream's duplicate window (2 minutes) spans every writer, so an id
// drawn from the records' short ids could name another's write.
func writeID() string { return rand.Text() }

// write stores b as key's value (a delete marker when del), expecting the
// key's revision rev (0: the key has no entry; anyRev: whatever it has),
// and returns the revision written. A refusal (the key moved on) is
// natsx.WrongLast.
func (s *State) write(key string, b []byte, rev uint64, del bool) (uint64, error) {
	return s.c.Put(s.ctx, s.kvStream, s.msg(key, b, del), rev)
}

// msg is a write of b as key's value (a delete marker when del), with a
// message id of its own.
func (s *State) msg(key string, b []byte, del bool) *nats.Msg {
	m := &nats.Msg{Subject: s.kvPrefix + key, Data: b, Header: nats.Header{}}
	m.Header.Set(jetstream.MsgIDHeader, writeID())
	if del {
		m.Header.Set(kvOp, kvDel)
	}
	return m
}

// createKey writes key only when it has no value (none yet, or a delete
// or expiry marker: natsx.Create); false when it has one.
func (s *State) createKey(key string, b []byte) (bool, error) {
	_, err := s.c.Create(s.ctx, s.kvStream, s.msg(key, b, false))
	var has *natsx.HasValue
	if errors.As(err, &has) {
		return false, nil
	}
	return err == nil, err
}

// publish appends data to subject of a stream of the project, once: a
// repeat after it landed is a duplicate by its id.
func (s *State) publishOnce(subject string, data []byte) error {
	id := writeID()
	return s.do(func(op context.Context) error {
		_, err := s.c.JS.PublishMsg(op, &nats.Msg{Subject: subject, Data: data}, jetstream.WithMsgID(id))
		return err
	})
}

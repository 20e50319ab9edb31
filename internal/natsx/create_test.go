package natsx_test

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"

	"github.com/plasmodium/pm/internal/hub/hubtest"
	"github.com/plasmodium/pm/internal/natsx"
)

// Create writes a key only where it has no value (none yet, or a delete
// marker), and recognises its own write whose answer was lost (the
// connection cut right after it reached the hub) by its message id, on
// the first attempt (no message yet) and on the one over a marker: each
// is the key created at the sequence the key holds, not "has a value".
// A key with a value is refused with that value, and nothing is written.
func TestCreateWritesOnlyWhereNoValueIs(t *testing.T) {
	h := hubtest.Single(t)
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	p := h.ProxyTo(0)
	c := h.ConnectVia(p)
	kv, err := c.KeyValue(ctx, jetstream.KeyValueConfig{Bucket: "create"})
	if err != nil {
		t.Fatal(err)
	}
	st, err := c.JS.Stream(ctx, natsx.KVStream("create"))
	if err != nil {
		t.Fatal(err)
	}
	msg := func(key, value, id string) *nats.Msg {
		m := nats.NewMsg("$KV.create." + key)
		m.Data = []byte(value)
		m.Header.Set(jetstream.MsgIDHeader, id)
		return m
	}
	holds := func(key, value string, seq uint64) {
		t.Helper()
		e, err := kv.Get(ctx, key)
		if err != nil {
			t.Fatalf("%s: %v", key, err)
		}
		if string(e.Value()) != value || e.Revision() != seq {
			t.Fatalf("%s holds %q at %d, want %q at %d", key, e.Value(), e.Revision(), value, seq)
		}
	}
	cuts := int64(0)
	lose := func(s string) { p.LoseAnswerTo(s); cuts++ }
	cut := func(what string) {
		t.Helper()
		if p.Cuts() != cuts {
			t.Fatalf("%s: %d answers lost, want %d", what, p.Cuts(), cuts)
		}
	}

	// No message yet, the answer lost.
	lose("$KV.create.a")
	seq, err := c.Create(ctx, st, msg("a", "one", "id-a1"))
	cut("first create")
	if err != nil {
		t.Fatalf("a create whose answer was lost: %v, want it created", err)
	}
	holds("a", "one", seq)

	// A value there: refused, with it.
	_, err = c.Create(ctx, st, msg("a", "two", "id-a2"))
	var has *natsx.HasValue
	if !errors.As(err, &has) || has.Last == nil || string(has.Last.Data) != "one" {
		t.Fatalf("a create over a value: %v, want HasValue with the value", err)
	}
	holds("a", "one", seq)

	// Over a delete marker, the second attempt's answer lost.
	if err := kv.Delete(ctx, "a"); err != nil {
		t.Fatal(err)
	}
	lose("id-a3.over")
	seq, err = c.Create(ctx, st, msg("a", "three", "id-a3"))
	cut("create over a delete marker")
	if err != nil {
		t.Fatalf("a create over a delete marker whose answer was lost: %v, want it created", err)
	}
	holds("a", "three", seq)
}

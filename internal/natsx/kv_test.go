package natsx_test

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/nats-io/nats.go/jetstream"

	"github.com/plasmodium/pm/internal/hub/hubtest"
	"github.com/plasmodium/pm/internal/natsx"
)

// A bucket's write is acknowledged once two of three nodes hold it; the
// third may apply it a moment later. A read after the acknowledgement
// must see the write from whichever node the reader is connected to: a
// bucket that answers reads from any replica (a key-value bucket's
// default, direct gets) served a lagging replica's older revision, or no
// key at all (a project just made read as missing, a lease just taken as
// free). Each round writes the key from node 0 and reads it at once from
// every node; every read sees the revision written.
func TestKeyValueReadsItsLastWrite(t *testing.T) {
	h := hubtest.Three(t)
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	cfg := jetstream.KeyValueConfig{Bucket: "READS", History: 1, Replicas: 3, Storage: jetstream.FileStorage}
	var kvs []jetstream.KeyValue
	for i := range h.Len() {
		kv, err := h.Connect(i).KeyValue(ctx, cfg)
		if err != nil {
			t.Fatal(err)
		}
		kvs = append(kvs, kv)
	}
	// Bounded: rounds × (a write, three reads), a few seconds under -race.
	const rounds = 300
	for r := range rounds {
		key := fmt.Sprintf("k%d", r%10)
		var rev uint64
		if err := natsx.Do(ctx, func(op context.Context) (err error) {
			rev, err = kvs[0].Put(op, key, fmt.Appendf(nil, "%d", r))
			return err
		}); err != nil {
			t.Fatal(err)
		}
		for i, kv := range kvs {
			var e jetstream.KeyValueEntry
			err := natsx.Do(ctx, func(op context.Context) (err error) { e, err = kv.Get(op, key); return err })
			switch {
			case err != nil:
				t.Fatalf("round %d: node %d reads %s, written at revision %d: %v", r, i, key, rev, err)
			case e.Revision() != rev:
				t.Fatalf("round %d: node %d reads %s at revision %d, written at %d", r, i, key, e.Revision(), rev)
			}
		}
	}
}

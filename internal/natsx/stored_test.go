package natsx_test

import (
	"context"
	"os"
	"testing"
	"time"

	"github.com/nats-io/nats.go/jetstream"

	"github.com/plasmodium/pm/internal/hub/hubtest"
)

func TestMain(m *testing.M) { os.Exit(hubtest.Main(m)) }

// Stored waits for the leader to hold a sequence (a reader woken by a
// consumer on a replica reads the leader only then, issue 24): it does not
// return for a sequence not stored yet, and returns once it is.
func TestStoredWaitsForTheSequence(t *testing.T) {
	h := hubtest.Three(t)
	c := h.Connect(1)
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	if _, err := c.Stream(ctx, jetstream.StreamConfig{Name: "STORED", Subjects: []string{"stored"}}); err != nil {
		t.Fatal(err)
	}
	ack, err := c.JS.Publish(ctx, "stored", []byte("one"))
	if err != nil {
		t.Fatal(err)
	}
	if err := c.Stored(ctx, "STORED", ack.Sequence); err != nil {
		t.Fatalf("Stored(%d) after its publish: %v", ack.Sequence, err)
	}
	done := make(chan error, 1)
	go func() { done <- c.Stored(ctx, "STORED", ack.Sequence+1) }()
	select {
	case err := <-done: // no sequence+1 yet: only an error may end it
		t.Fatalf("Stored(%d) before its publish returned %v", ack.Sequence+1, err)
	default:
	}
	if _, err := c.JS.Publish(ctx, "stored", []byte("two")); err != nil {
		t.Fatal(err)
	}
	if err := <-done; err != nil {
		t.Fatalf("Stored(%d) after its publish: %v", ack.Sequence+1, err)
	}
}

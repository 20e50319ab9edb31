package room_test

import (
	"context"
	"fmt"
	"testing"

	"github.com/nats-io/nats.go/jetstream"

	"github.com/plasmodium/pm/internal/hub/hubtest"
	"github.com/plasmodium/pm/internal/natsx/room"
)

// BenchmarkAppend is one writer's append into a room (read the last
// message, publish with the expected sequence), against the floor: a plain
// acknowledged publish to a stream of the same hub. make bench runs it.
func BenchmarkAppend(b *testing.B) {
	for _, set := range hubtest.Sets() {
		b.Run(set.Name, func(b *testing.B) {
			h := set.Start(b)
			c := h.Connect(0)
			ctx := context.Background()
			r, err := room.Open(ctx, c)
			if err != nil {
				b.Fatal(err)
			}
			if _, err := c.Stream(ctx, jetstream.StreamConfig{Name: "FLOOR", Subjects: []string{"floor"}}); err != nil {
				b.Fatal(err)
			}
			b.Run("floor-publish", func(b *testing.B) {
				for i := 0; b.Loop(); i++ {
					if _, err := c.JS.Publish(ctx, "floor", []byte("hello")); err != nil {
						b.Fatal(err)
					}
				}
			})
			b.Run("room-append", func(b *testing.B) {
				for i := 0; b.Loop(); i++ {
					if _, err := r.Append(ctx, fmt.Sprintf("ph-b%d", i/50), fmt.Sprintf("m%d", i), []byte("hello"), 50); err != nil {
						b.Fatal(err)
					}
				}
			})
		})
	}
}

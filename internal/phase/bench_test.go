package phase

import (
	"encoding/json"
	"os"
	"strconv"
	"testing"
	"time"

	"github.com/plasmodium/pm/internal/lockedfile"
	"github.com/plasmodium/pm/internal/state/fsstate"
	"github.com/plasmodium/pm/internal/store"
)

// BenchmarkSay posts to a phase: lock, re-read phase.json, count, append,
// emit the event, and close on the last message. limit=50 is the default
// room, run from empty (0 to 49 messages, as in real use); limit=5000 is a
// raised limits.messages_per_phase with the room kept between 4,500 and
// 4,999 messages. When the phase closes it is reopened (untimed) as it
// started. These are the count mark's figures (docs/benchmarks.md, "Caches").
func BenchmarkSay(b *testing.B) {
	b.Run("limit=50", func(b *testing.B) { benchSay(b, 50, 0) })
	b.Run("limit=5000", func(b *testing.B) { benchSay(b, 5000, 4500) })
}

// benchSay says into a room of limit messages that starts, and is reopened,
// holding prefill messages.
func benchSay(b *testing.B, limit, prefill int) {
	root, _, err := store.Init(b.TempDir(), time.Now)
	if err != nil {
		b.Fatal(err)
	}
	s, err := store.Open(root)
	if err != nil {
		b.Fatal(err)
	}
	s.Config().Limits.MessagesPerPhase = limit
	t := &store.Task{ID: "tk-000001", Description: "bench", Owner: "cedar_0001", BlockedBy: []string{},
		Status: store.TaskActive, Runtime: "none", CreatedAt: time.Now()}
	if err := s.WriteTask(t); err != nil {
		b.Fatal(err)
	}
	ph, err := Create(s, fsstate.New(s), store.Human, Spec{TaskID: t.ID, Name: "Bench", Limit: limit, Roles: []string{"designer"}})
	if err != nil {
		b.Fatal(err)
	}
	var start []byte
	for i := range prefill {
		line, _ := json.Marshal(store.Message{ID: "msg-" + strconv.Itoa(100000+i), PhaseID: ph.ID, Author: "human",
			Content: "message " + strconv.Itoa(i) + ": the hero should lead with the benefit", Timestamp: time.Now().UTC()})
		start = append(append(start, line...), '\n')
	}
	reopen := func() {
		if err := os.WriteFile(s.MessagesPath(t.ID, ph.ID), start, 0o644); err != nil {
			b.Fatal(err)
		}
		p := s.PhasePath(t.ID, ph.ID)
		if err := lockedfile.With(p, func() error { return lockedfile.WriteJSON(p, ph) }); err != nil {
			b.Fatal(err)
		}
	}
	reopen()
	b.ReportAllocs()
	for i := 0; b.Loop(); i++ {
		_, closed, err := Say(s, fsstate.New(s), store.Human, t.ID, ph.ID, "message "+strconv.Itoa(i)+": the hero should lead with the benefit")
		if err != nil {
			b.Fatal(err)
		}
		if closed {
			b.StopTimer()
			reopen()
			b.StartTimer()
		}
	}
}

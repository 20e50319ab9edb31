package phase

import (
	"os"
	"strconv"
	"testing"
	"time"

	"github.com/plasmodium/pm/internal/lockedfile"
	"github.com/plasmodium/pm/internal/store"
)

// BenchmarkSay posts to a phase at the default limit of 50 messages: lock,
// re-read phase.json, count, append, emit the event, and close on the 50th.
// When the phase closes it is reopened empty (untimed), so every op runs
// against a room of 0 to 49 messages, as in real use.
func BenchmarkSay(b *testing.B) {
	root, _, err := store.Init(b.TempDir(), time.Now)
	if err != nil {
		b.Fatal(err)
	}
	s, err := store.Open(root)
	if err != nil {
		b.Fatal(err)
	}
	t := &store.Task{ID: "tk-000001", Description: "bench", Owner: "cedar_0001", BlockedBy: []string{},
		Status: store.TaskActive, Runtime: "none", CreatedAt: time.Now()}
	if err := s.WriteTask(t); err != nil {
		b.Fatal(err)
	}
	ph, err := Create(s, store.Human, Spec{TaskID: t.ID, Name: "Bench", Limit: 50, Roles: []string{"designer"}})
	if err != nil {
		b.Fatal(err)
	}
	reopen := func() {
		if err := os.WriteFile(s.MessagesPath(t.ID, ph.ID), nil, 0o644); err != nil {
			b.Fatal(err)
		}
		p := s.PhasePath(t.ID, ph.ID)
		if err := lockedfile.With(p, func() error { return lockedfile.WriteJSON(p, ph) }); err != nil {
			b.Fatal(err)
		}
	}
	b.ReportAllocs()
	for i := 0; b.Loop(); i++ {
		_, closed, err := Say(s, store.Human, t.ID, ph.ID, "message "+strconv.Itoa(i)+": the hero should lead with the benefit")
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

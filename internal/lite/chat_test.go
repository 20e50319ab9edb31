package lite_test

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"testing"
	"time"

	"github.com/plasmodium/pm/internal/lite"
	"github.com/plasmodium/pm/internal/phase"
	"github.com/plasmodium/pm/internal/state/fsstate"
	"github.com/plasmodium/pm/internal/store"
	"github.com/plasmodium/pm/internal/store/storetest"
)

// room makes a phase holding n messages as pm say writes them (escapes,
// a role, a timestamp a second apart in every few) and returns its id.
func room(t testing.TB, s *store.Store, n int) string {
	t.Helper()
	tk := &store.Task{ID: "tk-000001", Description: "chat", Owner: "cedar_0001", BlockedBy: []string{},
		Status: store.TaskActive, Runtime: "none", CreatedAt: time.Now()}
	if err := s.WriteTask(tk); err != nil {
		t.Fatal(err)
	}
	ph, err := phase.Create(s, fsstate.New(s), store.Human, phase.Spec{TaskID: tk.ID, Name: "Chat", Limit: 50, Roles: []string{"designer"}})
	if err != nil {
		t.Fatal(err)
	}
	var buf bytes.Buffer
	at := time.Date(2026, 3, 4, 5, 6, 7, 0, time.UTC)
	for i := range n {
		line, err := json.Marshal(store.Message{ID: fmt.Sprintf("msg-%06d", i), PhaseID: ph.ID, Author: "cedar_0001", Role: "designer",
			Content:   fmt.Sprintf("message %d: the hero should lead with the benefit, <b>not</b> the \"feature\"\nsecond line", i),
			Timestamp: at.Add(time.Duration(i) * 333_333_333)})
		if err != nil {
			t.Fatal(err)
		}
		buf.Write(append(line, '\n'))
	}
	if err := os.WriteFile(s.MessagesPath(tk.ID, ph.ID), buf.Bytes(), 0o644); err != nil {
		t.Fatal(err)
	}
	return ph.ID
}

// pm chat allocates nothing per message for the lines pm writes: the line
// is read in place, decoded into one view (its strings alias the line or a
// reused scratch buffer) and printed into the writer's buffer. Counted as
// the difference between a room of 2,000 and one of 100: what is left is
// the command's own (resolving the phase, the buffers, the seen mark).
func TestChatAllocatesNothingPerMessage(t *testing.T) {
	for _, asJSON := range []bool{false, true} {
		allocs := map[int]float64{}
		for _, n := range []int{100, 2000} {
			s := storetest.New(t)
			id := room(t, s, n)
			actor := store.Actor{Name: "cedar_0001"}
			var out bytes.Buffer
			if err := lite.Chat(&out, io.Discard, s, fsstate.New(s), actor, id, asJSON); err != nil {
				t.Fatal(err)
			}
			if lines := bytes.Count(out.Bytes(), []byte("\n")); !asJSON && lines != 2*n || asJSON && lines != n {
				t.Fatalf("pm chat (json %v) printed %d lines for %d messages", asJSON, lines, n)
			}
			allocs[n] = testing.AllocsPerRun(5, func() {
				if err := lite.Chat(io.Discard, io.Discard, s, fsstate.New(s), actor, id, asJSON); err != nil {
					t.Fatal(err)
				}
			})
		}
		if per := (allocs[2000] - allocs[100]) / 1900; per > 0.01 {
			t.Errorf("pm chat (json %v): %.3f allocations per message (%.0f for 100 messages, %.0f for 2,000), want 0",
				asJSON, per, allocs[100], allocs[2000])
		}
	}
}

// BenchmarkChat: pm chat over a room of 50,000 messages to io.Discard, per
// message (go test -bench Chat -run '^$' ./internal/lite).
func BenchmarkChat(b *testing.B) {
	const n = 50_000
	s := storetest.New(b)
	id := room(b, s, n)
	for _, asJSON := range []bool{false, true} {
		b.Run(fmt.Sprintf("json=%v", asJSON), func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				if err := lite.Chat(io.Discard, io.Discard, s, fsstate.New(s), store.Actor{Name: "cedar_0001"}, id, asJSON); err != nil {
					b.Fatal(err)
				}
			}
			b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N)/n, "ns/message")
		})
	}
}

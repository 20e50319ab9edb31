package store_test

import (
	"testing"

	"github.com/plasmodium/pm/internal/bench"
	"github.com/plasmodium/pm/internal/store"
)

// open10k generates a state with 10,000 tasks (one agent each) and opens it.
func open10k(b *testing.B) (*store.Store, *bench.State) {
	b.Helper()
	st, err := bench.Generate(b.TempDir(), bench.StateSpec{Tasks: 10_000})
	if err != nil {
		b.Fatal(err)
	}
	s, err := store.Open(st.Root)
	if err != nil {
		b.Fatal(err)
	}
	return s, st
}

// BenchmarkTasks reads every task of a state with 10,000 tasks (pm status).
func BenchmarkTasks(b *testing.B) {
	s, _ := open10k(b)
	b.ReportAllocs()
	for b.Loop() {
		ts, err := s.Tasks()
		if err != nil || len(ts) != 10_000 {
			b.Fatalf("%d tasks, %v", len(ts), err)
		}
	}
}

// BenchmarkAgents reads every agent record of the same state (pm status tk-..).
func BenchmarkAgents(b *testing.B) {
	s, _ := open10k(b)
	b.ReportAllocs()
	for b.Loop() {
		as, err := s.Agents()
		if err != nil || len(as) != 10_000 {
			b.Fatalf("%d agents, %v", len(as), err)
		}
	}
}

// BenchmarkAgentsOf finds the agents of one task among 10,000 (pm status tk-..).
func BenchmarkAgentsOf(b *testing.B) {
	s, st := open10k(b)
	b.ReportAllocs()
	for b.Loop() {
		as, err := s.AgentsOf(st.SomeTask)
		if err != nil || len(as) != 1 {
			b.Fatalf("%d agents, %v", len(as), err)
		}
	}
}

// BenchmarkLiveTasks finds the one live task among 10,000 (pm chat, pm say
// and owner commands run by the human).
func BenchmarkLiveTasks(b *testing.B) {
	s, _ := open10k(b)
	b.ReportAllocs()
	for b.Loop() {
		ts, err := s.LiveTasks()
		if err != nil || len(ts) != 1 {
			b.Fatalf("%d tasks, %v", len(ts), err)
		}
	}
}

// BenchmarkFindPhase finds a phase by its id alone (pm say/chat --phase) in
// a state with 10,000 tasks: the phase index's figure (docs/benchmarks.md,
// "Caches").
func BenchmarkFindPhase(b *testing.B) {
	s, st := open10k(b)
	if _, err := s.FindPhase(st.ActivePhase); err != nil { // Generate writes no index: the first lookup does
		b.Fatal(err)
	}
	b.ReportAllocs()
	for b.Loop() {
		if _, err := s.FindPhase(st.ActivePhase); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkOpenChecked opens a state as a short command does (pm say, pm
// chat): config.checked's figure (docs/benchmarks.md, "Caches").
func BenchmarkOpenChecked(b *testing.B) {
	root, _, err := store.Init(b.TempDir(), nil)
	if err != nil {
		b.Fatal(err)
	}
	s, err := store.OpenChecked(root)
	if err != nil {
		b.Fatal(err)
	}
	s.RecordConfigChecked() // as the first command that succeeded would
	b.ReportAllocs()
	for b.Loop() {
		if _, err := store.OpenChecked(root); err != nil {
			b.Fatal(err)
		}
	}
}

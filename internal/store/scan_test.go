package store

import (
	"bytes"
	"os"
	"testing"
	"time"
)

func scanStore(t *testing.T) *Store {
	t.Helper()
	root, _, err := Init(t.TempDir(), time.Now)
	if err != nil {
		t.Fatal(err)
	}
	s, err := Open(root)
	if err != nil {
		t.Fatal(err)
	}
	s.Warn = &bytes.Buffer{}
	return s
}

func TestLiveTasksMatchesTasks(t *testing.T) {
	s := scanStore(t)
	base := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	statuses := []TaskStatus{TaskDone, TaskActive, TaskKilled, TaskBlocked, TaskDone, TaskActive}
	for i, st := range []string{"tk-00000f", "tk-00000e", "tk-00000d", "tk-00000c", "tk-00000b", "tk-00000a"} {
		// Descriptions that mention a live status must not fool the filter.
		tk := &Task{ID: st, Description: "an active \"blocked\" description", Status: statuses[i], BlockedBy: []string{},
			CreatedAt: base.Add(time.Duration(i) * time.Hour)}
		if err := s.WriteTask(tk); err != nil {
			t.Fatal(err)
		}
	}
	// A malformed file is reported by both, not fatal.
	if err := os.MkdirAll(s.TaskDir("tk-000001"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(s.TaskPath("tk-000001"), []byte(`{"status": "active",`), 0o644); err != nil {
		t.Fatal(err)
	}
	all, err := s.Tasks()
	if err != nil {
		t.Fatal(err)
	}
	var want []string
	for _, tk := range all {
		if tk.Live() {
			want = append(want, tk.ID)
		}
	}
	live, err := s.LiveTasks()
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, tk := range live {
		got = append(got, tk.ID)
	}
	if len(want) != 3 || len(got) != len(want) {
		t.Fatalf("LiveTasks = %v, want %v", got, want)
	}
	for i := range want {
		if got[i] != want[i] {
			t.Fatalf("LiveTasks = %v, want %v (oldest first)", got, want)
		}
	}
	if !bytes.Contains(s.Warn.(*bytes.Buffer).Bytes(), []byte("skipped task tk-000001")) {
		t.Errorf("malformed task not reported: %q", s.Warn)
	}
}

func TestAgentsOf(t *testing.T) {
	s := scanStore(t)
	base := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	for i, a := range []Agent{
		{Name: "oak_0001", TaskID: "tk-aaaaaa"},
		{Name: "oak_0002", TaskID: "tk-bbbbbb", Reason: "mentions tk-aaaaaa but belongs elsewhere"},
		{Name: "oak_0003", TaskID: "tk-aaaaaa", Role: "designer"},
		{Name: "oak_0004"},
	} {
		a.CreatedAt = base.Add(time.Duration(-i) * time.Hour)
		if err := s.WriteAgent(&a); err != nil {
			t.Fatal(err)
		}
	}
	got, err := s.AgentsOf("tk-aaaaaa")
	if err != nil {
		t.Fatal(err)
	}
	if len(got) != 2 || got[0].Name != "oak_0003" || got[1].Name != "oak_0001" {
		t.Fatalf("AgentsOf = %+v", got)
	}
	all, err := s.Agents()
	if err != nil || len(all) != 4 {
		t.Fatalf("Agents = %d, %v", len(all), err)
	}
	if _, err := s.AgentsOf("nope"); err == nil {
		t.Error("AgentsOf accepted a bad id")
	}
}

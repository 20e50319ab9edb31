package store

import (
	"os"
	"slices"
	"strings"
	"testing"
	"time"
)

// fullCounts is what a full scan says: the truth the index must match.
func fullCounts(t *testing.T, s *Store) (live []string, counts map[TaskStatus]int) {
	t.Helper()
	all, err := s.Tasks()
	if err != nil {
		t.Fatal(err)
	}
	counts = map[TaskStatus]int{}
	for _, tk := range all {
		counts[tk.Status]++
		if tk.Live() {
			live = append(live, tk.ID)
		}
	}
	return live, counts
}

func taskIDs(tasks []*Task) []string {
	var out []string
	for _, t := range tasks {
		out = append(out, t.ID)
	}
	return out
}

// checkIndex asserts that every indexed read agrees with the full scan.
func checkIndex(t *testing.T, s *Store) {
	t.Helper()
	wantLive, wantCounts := fullCounts(t, s)
	live, err := s.LiveTasks()
	if err != nil {
		t.Fatal(err)
	}
	if got := taskIDs(live); !slices.Equal(got, wantLive) {
		t.Errorf("LiveTasks = %v, want %v", got, wantLive)
	}
	indexed, counts, ok, err := s.TaskCounts()
	if err != nil || !ok {
		t.Fatalf("TaskCounts: ok=%v err=%v", ok, err)
	}
	if got := taskIDs(indexed); !slices.Equal(got, wantLive) {
		t.Errorf("TaskCounts live = %v, want %v", got, wantLive)
	}
	for _, st := range []TaskStatus{TaskActive, TaskBlocked, TaskDone, TaskKilled} {
		if counts[st] != wantCounts[st] {
			t.Errorf("TaskCounts[%s] = %d, want %d", st, counts[st], wantCounts[st])
		}
	}
	held, err := s.LiveTasksHeld()
	if err != nil {
		t.Fatal(err)
	}
	if got := taskIDs(held); !slices.Equal(got, wantLive) {
		t.Errorf("LiveTasksHeld = %v, want %v", got, wantLive)
	}
}

func markerExists(s *Store, class, id string) bool {
	_, err := os.Lstat(s.indexMarker(class, id))
	return err == nil
}

func writeTestTask(t *testing.T, s *Store, id string, st TaskStatus, at int) {
	t.Helper()
	base := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	if err := s.WriteTask(&Task{ID: id, Description: id, Status: st, BlockedBy: []string{}, CreatedAt: base.Add(time.Duration(at) * time.Hour)}); err != nil {
		t.Fatal(err)
	}
}

func setStatus(t *testing.T, s *Store, id string, st TaskStatus) {
	t.Helper()
	if _, err := s.UpdateTask(id, func(x *Task) error { x.Status = st; return nil }); err != nil {
		t.Fatal(err)
	}
}

// The index follows every class change pm makes: create, block/unblock,
// done, kill, restart.
func TestTaskIndexFollowsStatusChanges(t *testing.T) {
	s := scanStore(t)
	checkIndex(t, s)
	steps := []struct {
		name string
		do   func()
	}{
		{"create three", func() {
			writeTestTask(t, s, "tk-00000a", TaskActive, 0)
			writeTestTask(t, s, "tk-00000b", TaskBlocked, 1)
			writeTestTask(t, s, "tk-00000c", TaskActive, 2)
		}},
		{"unblock", func() { setStatus(t, s, "tk-00000b", TaskActive) }},
		{"done", func() { setStatus(t, s, "tk-00000a", TaskDone) }},
		{"kill", func() { setStatus(t, s, "tk-00000c", TaskKilled) }},
		{"restart", func() { setStatus(t, s, "tk-00000c", TaskBlocked) }},
		{"kill again", func() { setStatus(t, s, "tk-00000c", TaskKilled) }},
	}
	for _, st := range steps {
		st.do()
		t.Run(st.name, func(t *testing.T) { checkIndex(t, s) })
	}
	if markerExists(s, indexLive, "tk-00000a") || !markerExists(s, string(TaskDone), "tk-00000a") {
		t.Error("a done task keeps a live marker or lacks its done marker")
	}
}

// A process killed between two steps of a class change leaves a second,
// stale marker (never a missing one); a creation killed before task.json
// leaves a live marker alone. Readers stay exact and repair the markers.
func TestTaskIndexStaleMarkers(t *testing.T) {
	cases := []struct {
		name      string
		status    TaskStatus // what the file says
		stale     string     // the extra marker a kill left
		noRecord  bool       // task.json never written
		repaired  bool       // the stale marker is gone after the reads
		keepClass string     // the marker that must remain
	}{
		{name: "done, live marker left", status: TaskDone, stale: indexLive, repaired: true, keepClass: string(TaskDone)},
		{name: "killed, live marker left", status: TaskKilled, stale: indexLive, repaired: true, keepClass: string(TaskKilled)},
		{name: "restarted, killed marker left", status: TaskActive, stale: string(TaskKilled), repaired: true, keepClass: indexLive},
		{name: "pm done killed before task.json, done marker left", status: TaskActive, stale: string(TaskDone), repaired: true, keepClass: indexLive},
		{name: "creation killed before task.json", noRecord: true, stale: indexLive, repaired: true},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			s := scanStore(t)
			writeTestTask(t, s, "tk-000001", TaskDone, 0)
			writeTestTask(t, s, "tk-000002", TaskActive, 1)
			if c.noRecord {
				if err := os.MkdirAll(s.TaskDir("tk-000003"), 0o755); err != nil {
					t.Fatal(err)
				}
			} else {
				writeTestTask(t, s, "tk-000003", c.status, 2)
			}
			if err := touch(s.indexMarker(c.stale, "tk-000003")); err != nil {
				t.Fatal(err)
			}
			checkIndex(t, s)
			if markerExists(s, c.stale, "tk-000003") == c.repaired {
				t.Errorf("stale %s marker present = %v after the reads", c.stale, !c.repaired)
			}
			if c.keepClass != "" && !markerExists(s, c.keepClass, "tk-000003") {
				t.Errorf("the %s marker is gone", c.keepClass)
			}
		})
	}
}

// A state from before the index (or a rebuild killed midway) has no
// complete mark: unlocked readers scan, a holder of tasks.lock rebuilds.
func TestTaskIndexRebuiltWhenIncomplete(t *testing.T) {
	s := scanStore(t)
	writeTestTask(t, s, "tk-000001", TaskDone, 0)
	writeTestTask(t, s, "tk-000002", TaskActive, 1)
	writeTestTask(t, s, "tk-000003", TaskKilled, 2)
	if err := os.RemoveAll(s.taskIndexDir()); err != nil {
		t.Fatal(err)
	}
	live, err := s.LiveTasks()
	if err != nil || !slices.Equal(taskIDs(live), []string{"tk-000002"}) {
		t.Fatalf("LiveTasks without index = %v, %v", taskIDs(live), err)
	}
	if _, _, ok, _ := s.TaskCounts(); ok {
		t.Fatal("TaskCounts trusted an incomplete index")
	}
	if _, err := s.LiveTasksHeld(); err != nil {
		t.Fatal(err)
	}
	if !s.taskIndexComplete() {
		t.Fatal("LiveTasksHeld did not rebuild the index")
	}
	checkIndex(t, s)
}

// A hand edit that makes a finished task live (no marker) is found by a
// full scan's repair.
func TestRepairTaskIndexFindsHandEdits(t *testing.T) {
	s := scanStore(t)
	writeTestTask(t, s, "tk-000001", TaskDone, 0)
	data, err := os.ReadFile(s.TaskPath("tk-000001"))
	if err != nil {
		t.Fatal(err)
	}
	edited := strings.Replace(string(data), `"done"`, `"active"`, 1)
	if err := os.WriteFile(s.TaskPath("tk-000001"), []byte(edited), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := s.RepairTaskIndex(); err != nil {
		t.Fatal(err)
	}
	checkIndex(t, s)
}

// Reset leaves a complete, empty index.
func TestResetEmptiesTaskIndex(t *testing.T) {
	s := scanStore(t)
	writeTestTask(t, s, "tk-000001", TaskActive, 0)
	if err := s.WithTasksLock(s.ResetStateHeld); err != nil {
		t.Fatal(err)
	}
	if !s.taskIndexComplete() {
		t.Fatal("no complete index after reset")
	}
	checkIndex(t, s)
}

// RepairTaskIndexHeld, what the tasks section runs on entry: an incomplete
// index is rebuilt, and a live marker whose task has no file is dropped
// while the markers of tasks that exist stay.
func TestRepairTaskIndexHeld(t *testing.T) {
	s := scanStore(t)
	writeTestTask(t, s, "tk-000001", TaskDone, 0)
	writeTestTask(t, s, "tk-000002", TaskActive, 1)
	if err := os.RemoveAll(s.taskIndexDir()); err != nil {
		t.Fatal(err)
	}
	if err := s.WithTasksLock(s.RepairTaskIndexHeld); err != nil {
		t.Fatal(err)
	}
	if !s.taskIndexComplete() {
		t.Fatal("an incomplete index was not rebuilt")
	}
	checkIndex(t, s)
	if err := touch(s.indexMarker(indexLive, "tk-000009")); err != nil { // a creation killed before its record
		t.Fatal(err)
	}
	if err := s.WithTasksLock(s.RepairTaskIndexHeld); err != nil {
		t.Fatal(err)
	}
	if markerExists(s, indexLive, "tk-000009") {
		t.Fatal("the live marker of a task with no file stayed")
	}
	if !markerExists(s, indexLive, "tk-000002") {
		t.Fatal("the live marker of a live task went")
	}
}

// pm doctor --check counts only what no reader derives: a missing marker
// (the index would hide the task) or one naming no task; a stale second
// marker is not a finding, and the first list of the live tasks (LiveTasks
// alone, as pm task's and Settle's) repairs it (stress trial 66).
func TestCheckTaskIndexCountsWhatIsNotDerived(t *testing.T) {
	for _, c := range []struct {
		name    string
		status  TaskStatus
		extra   string // a marker a kill left
		remove  string // a marker gone (never left by a kill)
		finding string
	}{
		{name: "clean", status: TaskActive},
		{name: "active, done marker left by a killed pm done", status: TaskActive, extra: string(TaskDone)},
		{name: "active, killed marker left by a killed restart", status: TaskActive, extra: string(TaskKilled)},
		{name: "done, live marker left", status: TaskDone, extra: indexLive},
		{name: "active, its live marker missing", status: TaskActive, remove: indexLive, finding: "tk-000003 is active but task-index/live/ does not list it"},
		{name: "done, its done marker missing", status: TaskDone, remove: string(TaskDone), finding: "tk-000003 is done but task-index/done/ does not list it"},
	} {
		t.Run(c.name, func(t *testing.T) {
			s := scanStore(t)
			writeTestTask(t, s, "tk-000003", c.status, 0)
			if c.extra != "" {
				if err := touch(s.indexMarker(c.extra, "tk-000003")); err != nil {
					t.Fatal(err)
				}
			}
			if c.remove != "" {
				if err := os.Remove(s.indexMarker(c.remove, "tk-000003")); err != nil {
					t.Fatal(err)
				}
			}
			found, err := s.CheckTaskIndex()
			if err != nil {
				t.Fatal(err)
			}
			if want := []string{c.finding}; (c.finding == "" && len(found) > 0) || (c.finding != "" && !slices.Equal(found, want)) {
				t.Fatalf("CheckTaskIndex = %q, want %q", found, c.finding)
			}
			if c.extra == "" || c.status != TaskActive {
				return
			}
			if _, err := s.LiveTasks(); err != nil {
				t.Fatal(err)
			}
			if markerExists(s, c.extra, "tk-000003") || !markerExists(s, indexLive, "tk-000003") {
				t.Errorf("after LiveTasks: %s marker present %v, live marker present %v", c.extra, markerExists(s, c.extra, "tk-000003"), markerExists(s, indexLive, "tk-000003"))
			}
		})
	}
}

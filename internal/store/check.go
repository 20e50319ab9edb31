package store

import (
	"os"
	"path/filepath"
	"sort"
)

// What pm doctor --check asks of the store: whether its caches (the count
// marks, the task index, the phase index) agree with the files they cache.
// Each answer reads the truth the way its repair does.

// CheckCount returns a phase's message count as a say takes it (the count
// mark, when the log trusts it, plus the lines after it) and as a count of
// the whole log gives it: the two differ only if the mark lies.
func (s *Store) CheckCount(taskID, phaseID string) (viaMark, whole int, err error) {
	f, err := os.Open(s.MessagesPath(taskID, phaseID))
	if os.IsNotExist(err) {
		return 0, 0, nil
	}
	if err != nil {
		return 0, 0, err
	}
	defer f.Close()
	if viaMark, _, err = s.countIn(taskID, phaseID, f); err != nil {
		return 0, 0, err
	}
	whole, err = s.MessageCount(taskID, phaseID)
	return viaMark, whole, err
}

// CheckTaskIndex lists where the task index, when marked complete,
// disagrees with the task records in a way no reader derives: a task
// without the marker of its status (the index would hide it), and a marker
// naming no task directory. A second, stale marker beside the right one is
// what a write killed between its steps leaves (taskindex.go): every reader
// takes the task file's word and repairs it where it sees it, so it is not
// a finding.
func (s *Store) CheckTaskIndex() ([]string, error) {
	if !s.taskIndexComplete() {
		return nil, nil
	}
	tasks, err := s.Tasks()
	if err != nil {
		return nil, err
	}
	var out []string
	known := map[string]bool{}
	classes := []string{indexLive, string(TaskDone), string(TaskKilled)}
	for _, t := range tasks {
		known[t.ID] = true
		want := indexClass(t.Status)
		if want == "" {
			continue
		}
		if _, err := os.Lstat(s.indexMarker(want, t.ID)); err != nil {
			out = append(out, t.ID+" is "+string(t.Status)+" but task-index/"+want+"/ does not list it")
		}
	}
	for _, c := range classes {
		names, err := indexNames(filepath.Join(s.taskIndexDir(), c))
		if err != nil {
			return nil, err
		}
		for _, id := range names {
			if !known[id] && !s.TaskDirExists(id) {
				out = append(out, "task-index/"+c+"/"+id+" names no task")
			}
		}
	}
	sort.Strings(out)
	return out, nil
}

// CheckPhaseIndex lists the phase-index entries that name a task which does
// not hold the phase (an entry missing is fine: it is written best effort).
func (s *Store) CheckPhaseIndex() ([]string, error) {
	ents, err := os.ReadDir(filepath.Join(s.Root, "phase-index"))
	if os.IsNotExist(err) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	var out []string
	for _, e := range ents {
		if filepath.Ext(e.Name()) != "" || e.IsDir() {
			continue
		}
		if _, err := os.ReadFile(s.PhaseIndexPath(e.Name())); err == nil && s.indexedTask(e.Name()) == "" {
			out = append(out, "phase-index/"+e.Name()+" names a task that does not hold it")
		}
	}
	return out, nil
}

package store

import (
	"bytes"
	"context"
	"errors"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"syscall"

	"github.com/plasmodium/pm/internal/errs"
	"github.com/plasmodium/pm/internal/ids"
	"github.com/plasmodium/pm/internal/lockedfile"
	"github.com/plasmodium/pm/internal/watch"
)

// Agent reads one agent record.
func (s *Store) Agent(name string) (*Agent, error) {
	if !ids.ValidAgentName(name) {
		return nil, errs.Usagef("agent names look like cedar_a1b2; see 'pm agents'", "%q is not a valid agent name", name)
	}
	var a Agent
	if err := lockedfile.ReadJSON(s.AgentPath(name), &a); err != nil {
		return nil, notFound(err, "see 'pm agents' for the agents that exist", "no agent %s", name)
	}
	return &a, nil
}

// WriteAgent creates an agent record.
func (s *Store) WriteAgent(a *Agent) error {
	fresh := !s.AgentDirExists(a.Name)
	if err := os.MkdirAll(s.AgentDir(a.Name), 0o755); err != nil {
		return err
	}
	p := s.AgentPath(a.Name)
	err := lockedfile.With(p, func() error { return lockedfile.WriteJSON(p, a) })
	if err != nil && fresh {
		s.dropStillborn(a.Name)
	}
	return err
}

// dropStillborn removes the directory a creation just made when its record
// could not be written (a full disk): an agents/NAME/ with no record is
// nobody, and would only be listed and skipped forever.
func (s *Store) dropStillborn(name string) {
	if _, err := os.Stat(s.AgentPath(name)); os.IsNotExist(err) {
		_ = os.RemoveAll(s.AgentDir(name))
	}
}

// CreateAgent writes a's record unless one exists, both under the agent's
// lock: of two creators racing, one writes and both then read the same
// record. created reports whether this call wrote it.
func (s *Store) CreateAgent(a *Agent) (created bool, err error) {
	fresh := !s.AgentDirExists(a.Name)
	defer func() {
		if err != nil && fresh {
			s.dropStillborn(a.Name)
		}
	}()
	// The lock is a sidecar in the agent's directory, so the directory comes first.
	if err := os.MkdirAll(s.AgentDir(a.Name), 0o755); err != nil {
		return false, err
	}
	p := s.AgentPath(a.Name)
	err = lockedfile.With(p, func() error {
		if _, err := os.Stat(p); err == nil {
			return nil // created meanwhile
		}
		created = true
		return lockedfile.WriteJSON(p, a)
	})
	return created, err
}

// ErrUnchanged, returned by an update function, leaves the record as it is:
// nothing is written and the update reports no error.
var ErrUnchanged = lockedfile.ErrUnchanged

// UpdateAgent runs fn on the agent record under its lock. When fn returns
// ErrUnchanged nothing is written (a read-check that usually finds nothing
// to do costs no rewrite).
func (s *Store) UpdateAgent(name string, fn func(a *Agent) error) (*Agent, error) {
	if _, err := s.Agent(name); err != nil {
		return nil, err
	}
	a, err := lockedfile.UpdateVia(s.AgentPath(name), s.AgentsDir(), recordTemp+name+".", false, fn)
	if err != nil {
		return nil, err
	}
	return &a, nil
}

// Agents reads every agent record, oldest first.
func (s *Store) Agents() ([]*Agent, error) { return s.agents("") }

// AgentsOf reads the records of every agent of task taskID (its owners,
// past and present, and its role agents), oldest first. It reads every
// record but decodes only those that mention taskID: pm writes records with
// encoding/json, which never escapes the characters of an id.
func (s *Store) AgentsOf(taskID string) ([]*Agent, error) {
	if err := ids.Parse(ids.Task, taskID); err != nil {
		return nil, errs.Usagef("task ids look like tk-a1b2c3; see 'pm status'", "%v", err)
	}
	all, err := s.agents(taskID)
	if err != nil {
		return nil, err
	}
	out := all[:0]
	for _, a := range all {
		if a.TaskID == taskID {
			out = append(out, a)
		}
	}
	return out, nil
}

// AgentsChecked is Agents that also names the records it could not read
// (there, but torn or corrupt): the supervisor stays on for them and
// reports them, pm doctor lists them.
func (s *Store) AgentsChecked() ([]*Agent, []string, error) { return s.agentsBad("") }

func (s *Store) agents(mention string) ([]*Agent, error) {
	out, _, err := s.agentsBad(mention)
	return out, err
}

func (s *Store) agentsBad(mention string) ([]*Agent, []string, error) {
	ents, err := os.ReadDir(s.AgentsDir())
	if err != nil {
		if os.IsNotExist(err) {
			return nil, nil, nil
		}
		return nil, nil, err
	}
	names := make([]string, 0, len(ents))
	for _, e := range ents {
		if e.IsDir() && ids.ValidAgentName(e.Name()) {
			names = append(names, e.Name())
		}
	}
	var keep func([]byte) bool
	if mention != "" {
		quoted := []byte(`"` + mention + `"`)
		keep = func(raw []byte) bool { return bytes.Contains(raw, quoted) }
	}
	out, bad := readRecordsBad[Agent](s, "agent", names, s.AgentPath, keep)
	sort.SliceStable(out, func(i, j int) bool { return out[i].CreatedAt.Before(out[j].CreatedAt) })
	return out, bad, nil
}

// OpenLog opens logs/NAME.log for appending, creating logs/ if needed: the
// output of an agent's host (NAME is the agent) or of the supervisor.
func (s *Store) OpenLog(name string) (*os.File, error) {
	if err := os.MkdirAll(filepath.Dir(s.LogPath(name)), 0o755); err != nil {
		return nil, err
	}
	return os.OpenFile(s.LogPath(name), os.O_WRONLY|os.O_APPEND|os.O_CREATE, 0o644)
}

// WritePromptFile writes agents/NAME/prompt.md, the agent's rendered prompt.
// Only the agent's own starter writes it, so it takes no lock.
func (s *Store) WritePromptFile(name, text string) error {
	return os.WriteFile(s.PromptFilePath(name), []byte(text), 0o644)
}

// AgentNames lists the agent directories, records or not (a creation killed
// before its record leaves a directory only).
func (s *Store) AgentNames() ([]string, error) {
	ents, err := os.ReadDir(s.AgentsDir())
	if err != nil {
		if os.IsNotExist(err) {
			return nil, nil
		}
		return nil, err
	}
	out := make([]string, 0, len(ents))
	for _, e := range ents {
		if e.IsDir() && ids.ValidAgentName(e.Name()) {
			out = append(out, e.Name())
		}
	}
	return out, nil
}

// RemoveAgent deletes the agent's directory under its lock, after fn saw
// the record as it is under that lock (nil when there is none). Launcher.Start
// spawns and records under the same lock, so no host it starts can be left
// running without a record: it is either in the record fn sees, or its
// start finds the record gone and spawns nothing.
func (s *Store) RemoveAgent(name string, fn func(a *Agent) error) error {
	p := s.AgentPath(name)
	return lockedfile.With(p, func() error {
		var a *Agent
		var rec Agent
		if err := lockedfile.ReadJSON(p, &rec); err == nil {
			a = &rec // an unreadable record cannot have been started either
		}
		if err := fn(a); err != nil {
			return err
		}
		err := os.RemoveAll(s.AgentDir(name))
		if errors.Is(err, syscall.ENOTEMPTY) {
			// A creator is writing into it right now: what it writes is
			// a record the caller's next listing finds.
			return nil
		}
		return err
	})
}

// recordTemp starts the name of an agent record's temp file, made in
// agents/ (not agents/NAME/) by UpdateAgent: "<recordTemp>NAME.<random>".
// Its rename into agents/NAME/agent.json is the write itself, and it is
// what WatchAgentRecords sees.
const recordTemp = ".agent-record-"

// WatchAgentRecords tells changed the name of every agent whose record
// UpdateAgent rewrites from now on ("" when the watcher lost events: look
// at every record), until ctx ends. The watch is in place when it returns:
// a start recorded after that is seen at the instant its record lands,
// even when the command that started it is killed before its agent.started
// event (the supervisor reads that agent then, not only before leaving).
// It fails, and tells nothing, when the agents directory cannot be watched
// (inotify used up: the error says so).
func (s *Store) WatchAgentRecords(ctx context.Context, changed func(name string)) error {
	if err := os.MkdirAll(s.AgentsDir(), 0o755); err != nil {
		return err
	}
	names, err := watch.Renames(ctx, s.AgentsDir())
	if err != nil {
		return err
	}
	go func() {
		for base := range names {
			if base == "" {
				changed("")
				continue
			}
			if name, ok := recordTempAgent(base); ok {
				changed(name)
			}
		}
	}()
	return nil
}

// recordTempAgent is the agent whose record a temp file named base (in
// agents/, recordTemp) was written for.
func recordTempAgent(base string) (string, bool) {
	rest, ok := strings.CutPrefix(base, recordTemp)
	i := strings.LastIndexByte(rest, '.') // the random part after the last dot has none
	if !ok || i <= 0 || !ids.ValidAgentName(rest[:i]) {
		return "", false
	}
	return rest[:i], true
}

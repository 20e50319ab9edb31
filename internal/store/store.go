package store

import (
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"time"

	"github.com/plasmodium/pm/internal/bus"
	"github.com/plasmodium/pm/internal/config"
	"github.com/plasmodium/pm/internal/errs"
	"github.com/plasmodium/pm/internal/ids"
	"github.com/plasmodium/pm/internal/jsonl"
	"github.com/plasmodium/pm/internal/lockedfile"
	"github.com/plasmodium/pm/internal/secret"
)

// DirName is the state directory pm init creates.
const DirName = config.DirName

// Store is an open state directory. It holds no file handles: every operation
// opens, locks and closes what it needs, so many processes can share one store.
type Store struct {
	Root string           // path of .plasmodium
	Now  func() time.Time // injectable clock
	IDs  ids.Source       // injectable id source
	Warn io.Writer        // where skipped lines are reported (stderr)
	// config is config.json over the defaults (Config), decoded on first use.
	config lazyConfig
	// Secrets are masked in the text and data of every event this process
	// publishes: the secret variables of its environment, and the API key a
	// host uses (internal/secret is the policy).
	Secrets secret.Set
	// EventBus, when set, replaces the file bus (tests use a bus.Mem).
	EventBus bus.Bus
	// BadConfig is why config.json did not load (OpenForConfig only).
	BadConfig error
}

// Open opens the state directory at root and loads its config.
func Open(root string) (*Store, error) { return open(root, false) }

// OpenChecked is Open for pm's short commands (internal/lite): a config.json
// this executable has already checked (config.checked holds its digest) is
// not parsed again, only decoded if something reads it (pm say and pm chat
// do not). A config.json that does not load is still refused, as by Open.
func OpenChecked(root string) (*Store, error) { return open(root, true) }

func open(root string, cached bool) (*Store, error) {
	st, err := os.Stat(root)
	if err != nil || !st.IsDir() {
		return nil, errs.NotFoundf("run 'pm init' in your project, or set PM_HOME to an existing .plasmodium", "no state directory at %s", root)
	}
	s := &Store{Root: root, Now: time.Now, IDs: ids.Default, Warn: io.Discard}
	if err := s.loadConfig(cached); err != nil {
		return nil, &errs.Error{Code: errs.Failure, Msg: "bad config", Err: err, Try: config.ConfigTry(err, s.ConfigPath())}
	}
	return s, nil
}

// OpenForConfig opens the state directory even when its config.json does
// not load, so pm config can repair it: Config then holds the defaults and
// BadConfig the load error.
func OpenForConfig(root string) (*Store, error) {
	s, err := Open(root)
	if err == nil || errs.CodeOf(err) == errs.NotFound {
		return s, err
	}
	s = &Store{Root: root, Now: time.Now, IDs: ids.Default, Warn: io.Discard}
	s.config.set(config.DefaultConfig())
	if _, s.BadConfig = config.LoadConfig(s.ConfigPath()); s.BadConfig == nil {
		s.BadConfig = err // it loads now: report what failed before
	}
	return s, nil
}

// Find locates the state directory: $PM_HOME if set, else the nearest
// .plasmodium walking up from dir, like git.
func Find(pmHome, dir string) (string, error) {
	if pmHome != "" {
		return filepath.Abs(pmHome)
	}
	dir, err := filepath.Abs(dir)
	if err != nil {
		return "", err
	}
	for d := dir; ; d = filepath.Dir(d) {
		cand := filepath.Join(d, DirName)
		if st, err := os.Stat(cand); err == nil && st.IsDir() {
			return cand, nil
		}
		if filepath.Dir(d) == d {
			break
		}
	}
	return "", errs.NotFoundf("run 'pm init' in your project directory, or set PM_HOME", "no %s found in %s or any parent", DirName, dir)
}

// Init creates the state directory under dir. It is idempotent: an existing
// store keeps its state and config.
func Init(dir string, now func() time.Time) (root string, created bool, err error) {
	root = filepath.Join(dir, DirName)
	if _, err := os.Stat(filepath.Join(root, "config.json")); err == nil {
		return root, false, nil
	}
	for _, sub := range []string{"tasks", "agents", "requests", "logs", "prompts"} {
		if err := os.MkdirAll(filepath.Join(root, sub), 0o755); err != nil {
			return root, false, err
		}
	}
	// Keep state out of the user's commits, for git and go-git alike.
	if err := os.WriteFile(filepath.Join(root, ".gitignore"), []byte("*\n"), 0o644); err != nil {
		return root, false, err
	}
	// No task yet: the (empty) task index is complete.
	if err := (&Store{Root: root}).writeTaskIndexComplete(); err != nil {
		return root, false, err
	}
	cfgPath := filepath.Join(root, "config.json")
	if err := lockedfile.With(cfgPath, func() error { return lockedfile.WriteJSON(cfgPath, config.DefaultConfig()) }); err != nil {
		return root, false, err
	}
	return root, true, nil
}

// ProjectDir is the directory that holds .plasmodium: the agents' workspace
// and the git work tree pm done commits.
func (s *Store) ProjectDir() string { return filepath.Dir(s.Root) }

func (s *Store) ConfigPath() string        { return filepath.Join(s.Root, "config.json") }
func (s *Store) EventsPath() string        { return filepath.Join(s.Root, "events.jsonl") }
func (s *Store) TasksDir() string          { return filepath.Join(s.Root, "tasks") }
func (s *Store) TaskDir(id string) string  { return filepath.Join(s.Root, "tasks", id) }
func (s *Store) TaskPath(id string) string { return filepath.Join(s.TaskDir(id), "task.json") }
func (s *Store) ContextPath(id string) string {
	return filepath.Join(s.TaskDir(id), "context.md")
}
func (s *Store) PhasesDir(taskID string) string { return filepath.Join(s.TaskDir(taskID), "phases") }
func (s *Store) PhaseDir(taskID, phaseID string) string {
	return filepath.Join(s.PhasesDir(taskID), phaseID)
}
func (s *Store) PhasePath(taskID, phaseID string) string {
	return filepath.Join(s.PhaseDir(taskID, phaseID), "phase.json")
}
func (s *Store) MessagesPath(taskID, phaseID string) string {
	return filepath.Join(s.PhaseDir(taskID, phaseID), "messages.jsonl")
}
func (s *Store) AgentsDir() string            { return filepath.Join(s.Root, "agents") }
func (s *Store) AgentDir(name string) string  { return filepath.Join(s.Root, "agents", name) }
func (s *Store) AgentPath(name string) string { return filepath.Join(s.AgentDir(name), "agent.json") }
func (s *Store) InboxPath(name string) string { return filepath.Join(s.AgentDir(name), "inbox.jsonl") }
func (s *Store) TranscriptPath(name string) string {
	return filepath.Join(s.AgentDir(name), "transcript.jsonl")
}
func (s *Store) PromptFilePath(name string) string {
	return filepath.Join(s.AgentDir(name), "prompt.md")
}
func (s *Store) LogsDir() string            { return filepath.Join(s.Root, "logs") }
func (s *Store) LogPath(name string) string { return filepath.Join(s.LogsDir(), name+".log") }
func (s *Store) RequestsDir() string        { return filepath.Join(s.Root, "requests") }
func (s *Store) RequestPath(id string) string {
	return filepath.Join(s.RequestsDir(), id+".json")
}
func (s *Store) PromptsDir() string { return filepath.Join(s.Root, "prompts") }

// PromptPath is prompts/NAME.md, a prompt object created in this project.
func (s *Store) PromptPath(name string) string { return filepath.Join(s.PromptsDir(), name+".md") }

// SupervisorLockPath is the file whose flock marks the live supervisor.
func (s *Store) SupervisorLockPath() string { return filepath.Join(s.Root, "supervisor") }

// Bus is the event bus of this store: EventBus when set (tests; the hub's,
// once stateopen.Open opened a hub project's records), else the file bus
// over events.jsonl, stamped with this store's clock and masking its
// secrets. A project on a hub whose records are not open has no bus here
// (bus.Unavailable): its events are on the hub, never in a local file.
func (s *Store) Bus() bus.Bus {
	if s.EventBus != nil {
		return s.EventBus
	}
	if s.OnHub() {
		return bus.Unavailable{Err: errs.Failf("report it: a command read the bus before opening the project's records (stateopen.Open)",
			"this project's events are on the hub %s, whose records this command has not opened", s.Config().Store.URL)}
	}
	return &bus.File{Path: s.EventsPath(), Now: s.Now, Secrets: s.Secrets, Bad: s.BadLine}
}

// Notify publishes an event that announces a record already kept elsewhere
// (task.json, agent.json, messages.jsonl, an inbox). The operation has
// happened, so a failed publish is reported on the warning stream rather
// than failing it (see the error policy in internal/bus).
func (s *Store) Notify(ev bus.Event) {
	if err := s.Bus().Publish(ev); err != nil {
		s.Warnf("event %s not recorded on the bus: %v", ev.Kind, err)
	}
}

// Warnf reports a recoverable problem (a skipped line) to the warning stream.
func (s *Store) Warnf(format string, args ...any) {
	if s.Warn != nil {
		fmt.Fprintf(s.Warn, "pm: warning: "+format+"\n", args...)
	}
}

// BadLine is the reporter handed to jsonl readers.
func (s *Store) BadLine(b jsonl.BadLine) { s.Warnf("%s", b.String()) }

// notFound turns a missing file into an exit-4 error; other errors pass through.
func notFound(err error, try, format string, args ...any) error {
	if errors.Is(err, os.ErrNotExist) {
		return errs.NotFoundf(try, format, args...)
	}
	return err
}

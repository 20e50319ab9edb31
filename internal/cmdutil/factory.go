package cmdutil

import (
	"context"
	"encoding/json"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"sync"
	"time"

	"github.com/plasmodium/pm/internal/agent"
	"github.com/plasmodium/pm/internal/ids"
	"github.com/plasmodium/pm/internal/lite"
	"github.com/plasmodium/pm/internal/ops"
	"github.com/plasmodium/pm/internal/request"
	"github.com/plasmodium/pm/internal/state"
	_ "github.com/plasmodium/pm/internal/state/hubopen" // pm-full opens projects on a hub (stateopen.RegisterHub)
	"github.com/plasmodium/pm/internal/state/stateopen"
	"github.com/plasmodium/pm/internal/store"
)

// IOStreams are the streams a command reads and writes; commands never touch
// os.Stdout directly so tests can capture them.
type IOStreams struct {
	In     io.Reader
	Out    io.Writer
	ErrOut io.Writer
}

// Factory carries everything a command needs from the outside world, so tests
// can inject clocks, ids, environment and streams.
type Factory struct {
	IO         IOStreams
	Context    context.Context
	Getenv     func(string) string
	Environ    func() []string
	Getwd      func() (string, error)
	Now        func() time.Time
	IDs        ids.Source
	Executable func() (string, error)
	// RunAsAgent runs a command line with a factory whose identity is an
	// agent (cli.RunAgent): how an exec agent's host runs the pm commands
	// its agent sends it (internal/broker).
	RunAsAgent func(f *Factory, args []string) int
	// MaskAlso are values every store this factory opens masks besides the
	// secrets of its environment: an exec host's broker token, for the
	// commands its agent sends it.
	MaskAlso []string
	// Halt is the sessions' Halt (ops.Session): an exec host's way to end
	// its agent's run from a command the agent sent it. nil elsewhere.
	Halt func(reason string)
	// Fence is the sessions' Fence (ops.Session): the exec host's hold on
	// its agent's lease, for the commands the agent sent it. nil elsewhere.
	Fence state.AgentLease

	// opened are the records this factory's command line opened (State),
	// closed when it ends (CloseState); cli.Run gives each command line
	// its own.
	opened *openedStates
}

// openedStates are records opened by one command line, to close at its end.
type openedStates struct {
	mu   sync.Mutex
	list []openedState
}

// openedState is one store's records, opened once per command line: a
// hub's are a connection, which every part of the command shares.
type openedState struct {
	s  *store.Store
	st *stateopen.Opened
}

// New returns the production factory.
func New(ctx context.Context, stdin io.Reader, stdout, stderr io.Writer) *Factory {
	return &Factory{
		IO:         IOStreams{In: stdin, Out: stdout, ErrOut: stderr},
		Context:    ctx,
		Getenv:     os.Getenv,
		Environ:    os.Environ,
		Getwd:      os.Getwd,
		Now:        time.Now,
		IDs:        ids.Default,
		Executable: selfPath,
	}
}

// selfPath is the pm binary to start agents with. When pm was invoked by a
// path or name ending in "pm" that path is kept (not resolved through
// symlinks), so a wrapper or test shim named pm stays in charge.
func selfPath() (string, error) {
	if len(os.Args) > 0 && filepath.Base(os.Args[0]) == "pm" {
		if p, err := exec.LookPath(os.Args[0]); err == nil {
			return filepath.Abs(p)
		}
	}
	return os.Executable()
}

// Store finds and opens the state directory ($PM_HOME, or walking up).
func (f *Factory) Store() (*store.Store, error) { return f.openStore(store.Open) }

// StoreForConfig is Store for pm config: it opens the state directory even
// when config.json does not load (s.BadConfig says why), so it can be repaired.
func (f *Factory) StoreForConfig() (*store.Store, error) { return f.openStore(store.OpenForConfig) }

func (f *Factory) openStore(open func(root string) (*store.Store, error)) (*store.Store, error) {
	s, err := f.opening().OpenStore(open)
	if err != nil {
		return nil, err
	}
	s.Now, s.IDs = f.Now, f.IDs
	return s, nil
}

// opening is what this factory opens sessions from: lite.Opening, the one
// opening pm's short commands use too.
func (f *Factory) opening() lite.Opening {
	return lite.Opening{Getenv: f.Getenv, Environ: f.Environ, Getwd: f.Getwd, Warn: f.IO.ErrOut, MaskAlso: f.MaskAlso}
}

// State opens the records of s (stateopen.Open, the one opener every
// surface uses), once per store in a command line: they are closed when
// the command line ends (CloseState).
func (f *Factory) State(s *store.Store) (state.State, error) {
	if f.opened != nil {
		f.opened.mu.Lock()
		defer f.opened.mu.Unlock()
		for _, o := range f.opened.list {
			if o.s == s {
				return o.st, nil
			}
		}
	}
	st, err := stateopen.Open(f.Context, s)
	if err != nil {
		return nil, err
	}
	if f.opened != nil {
		f.opened.list = append(f.opened.list, openedState{s, st})
	}
	return st, nil
}

// BeginStates makes the records this factory opens from now on its own,
// for CloseState to close: cli.Run calls it at the start of a command line.
func (f *Factory) BeginStates() { f.opened = &openedStates{} }

// CloseState closes the records opened since BeginStates, newest first.
func (f *Factory) CloseState() error {
	if f.opened == nil {
		return nil
	}
	f.opened.mu.Lock()
	list := f.opened.list
	f.opened.list = nil
	f.opened.mu.Unlock()
	var first error
	for i := len(list) - 1; i >= 0; i-- {
		if err := list[i].st.Close(); err != nil && first == nil {
			first = err
		}
	}
	return first
}

// Actor is who runs this command: the agent named by PM_AGENT (in st, the
// command's records), or the human.
func (f *Factory) Actor(st state.State) (store.Actor, error) { return f.opening().Actor(st) }

// Launcher returns the process launcher for agents of s (ops.NewLauncher
// with this process's binary and environment), with s's records opened
// (State): whatever holds the launcher reads records through l.State.
func (f *Factory) Launcher(s *store.Store) (*agent.Launcher, error) {
	exe, err := f.Executable()
	if err != nil {
		return nil, err
	}
	st, err := f.State(s)
	if err != nil {
		return nil, err
	}
	return ops.NewLauncher(s, st, exe, f.Environ(), f.Getenv), nil
}

// RaiseHuman returns how the supervisor files a request for the human: a
// real request (pm requests lists it, pm answer closes it), asked in the name
// of the agent it gave up on so it carries that agent's task. st is s's
// records.
func (f *Factory) RaiseHuman(s *store.Store, st state.State) func(agentName, text string) error {
	return func(agentName, text string) error {
		actor := store.Actor{Name: "supervisor"}
		if a, err := st.Agent(agentName); err == nil {
			actor.Agent = &store.Agent{Name: "supervisor", TaskID: a.TaskID}
		}
		_, err := request.CreateAbout(s, st, actor, agentName, text)
		return err
	}
}

// PrintJSON writes v as indented JSON.
func PrintJSON(w io.Writer, v any) error {
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	return enc.Encode(v)
}

// PrintJSONLine writes v as one compact JSON line (for streams).
func PrintJSONLine(w io.Writer, v any) error {
	return json.NewEncoder(w).Encode(v)
}

// Session opens the store and identifies who runs the command: the start of
// almost every command. The session can start agents as this process.
func (f *Factory) Session() (*ops.Session, error) {
	s, err := f.Store()
	if err != nil {
		return nil, err
	}
	l, err := f.Launcher(s)
	if err != nil {
		return nil, err
	}
	actor, err := f.Actor(l.State)
	if err != nil {
		return nil, err
	}
	ops.ReviveSupervisor(l, f.Getenv) // a supervisor that died is started again
	return &ops.Session{Store: s, State: l.State, Actor: actor, Launcher: l, Getenv: f.Getenv, Halt: f.Halt, Fence: f.Fence}, nil
}

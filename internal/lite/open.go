package lite

import (
	"context"
	"io"

	"github.com/plasmodium/pm/internal/errs"
	"github.com/plasmodium/pm/internal/secret"
	"github.com/plasmodium/pm/internal/state"
	"github.com/plasmodium/pm/internal/state/stateopen"
	"github.com/plasmodium/pm/internal/store"
)

// Opening is what a command's session is opened from: its environment,
// its working directory and its warning stream. Both executables open
// sessions through it (pm's short commands here, pm-full's through
// cmdutil.Factory), so how a command finds its state, what it masks and
// who it acts as cannot drift between them (TestOneSessionOpening).
type Opening struct {
	Getenv  func(string) string
	Environ func() []string
	Getwd   func() (string, error)
	Warn    io.Writer
	// MaskAlso are values masked besides the secrets of the environment
	// (an exec host's broker token, for the commands its agent sends it).
	MaskAlso []string
}

// OpenStore finds the state directory ($PM_HOME, or walking up from the
// working directory, like git), opens it with open (store.Open,
// store.OpenChecked, store.OpenForConfig) and sets what every process
// sets on it: the warning stream and the secrets it masks.
func (o Opening) OpenStore(open func(root string) (*store.Store, error)) (*store.Store, error) {
	wd, err := o.Getwd()
	if err != nil {
		return nil, err
	}
	root, err := store.Find(o.Getenv("PM_HOME"), wd)
	if err != nil {
		return nil, err
	}
	s, err := open(root)
	if err != nil {
		return nil, err
	}
	s.Warn = o.Warn
	s.Secrets = secret.FromEnv(o.Environ()).With(o.MaskAlso...) // every process masks the secrets it knows
	return s, nil
}

// NamesAgent reports whether PM_AGENT names an agent (else the command
// acts as the human, with no record to read).
func NamesAgent(getenv func(string) string) bool {
	name := getenv("PM_AGENT")
	return name != "" && name != "human"
}

// Actor is who runs the command: the agent PM_AGENT names, its record read
// from the project's records st, or the human.
func (o Opening) Actor(st state.State) (store.Actor, error) {
	if !NamesAgent(o.Getenv) {
		return store.Human, nil
	}
	name := o.Getenv("PM_AGENT")
	a, err := st.Agent(name)
	if err != nil {
		return store.Actor{}, &errs.Error{Code: errs.CodeOf(err), Msg: "PM_AGENT=" + name + " names no agent of this state directory",
			Try: "unset PM_AGENT to act as the human, or check PM_HOME"}
	}
	return store.Actor{Name: a.Name, Agent: a}, nil
}

// opening is what p's sessions are opened from.
func (p Process) opening() Opening {
	return Opening{Getenv: p.Getenv, Environ: p.Environ, Getwd: p.Getwd, Warn: p.Stderr}
}

// Open opens p's session as pm's short commands do: the state directory
// with its config checked once per content (store.OpenChecked), its
// records (stateopen.Open) and the actor. The records are the caller's to
// close.
func (p Process) Open() (*store.Store, *stateopen.Opened, store.Actor, error) {
	s, err := p.opening().OpenStore(store.OpenChecked)
	if err != nil {
		return nil, nil, store.Actor{}, err
	}
	return p.openRecords(s)
}

// openRecords opens s's records and reads the actor from them.
func (p Process) openRecords(s *store.Store) (*store.Store, *stateopen.Opened, store.Actor, error) {
	st, err := stateopen.Open(context.Background(), s)
	if err != nil {
		return nil, nil, store.Actor{}, err
	}
	actor, err := p.opening().Actor(st)
	if err != nil {
		st.Close()
		return nil, nil, store.Actor{}, err
	}
	return s, st, actor, nil
}

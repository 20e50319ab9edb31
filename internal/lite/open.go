package lite

import (
	"io"

	"github.com/plasmodium/pm/internal/errs"
	"github.com/plasmodium/pm/internal/secret"
	"github.com/plasmodium/pm/internal/state"
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

// Actor is who runs the command: the agent PM_AGENT names, read from the
// project's records (st: whichever backend holds them), or the human.
func (o Opening) Actor(st state.Agents) (store.Actor, error) {
	name := o.Getenv("PM_AGENT")
	if name == "" || name == "human" {
		return store.Human, nil
	}
	a, err := st.Agent(name)
	if err != nil {
		return store.Actor{}, &errs.Error{Code: errs.CodeOf(err), Msg: "PM_AGENT=" + name + " names no agent of this state directory",
			Try: "unset PM_AGENT to act as the human, or check PM_HOME"}
	}
	return store.Actor{Name: a.Name, Agent: a}, nil
}

// opening is how p opens its session (Opening).
func (p Process) opening() Opening {
	return Opening{Getenv: p.Getenv, Environ: p.Environ, Getwd: p.Getwd, Warn: p.Stderr}
}

// Open opens p's state directory as pm's short commands do: its config
// checked once per content (store.OpenChecked). The actor comes from the
// records (Opening.Actor), once they are open.
func (p Process) Open() (*store.Store, error) {
	return p.opening().OpenStore(store.OpenChecked)
}

package lite

import (
	"io"

	"github.com/plasmodium/pm/internal/secret"
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

// Actor is who runs the command: the agent PM_AGENT names, or the human.
func (o Opening) Actor(s *store.Store) (store.Actor, error) {
	return s.ActorNamed(o.Getenv("PM_AGENT"))
}

// Open opens p's session as pm's short commands do: the state with its
// config checked once per content (store.OpenChecked), and the actor.
func (p Process) Open() (*store.Store, store.Actor, error) {
	o := Opening{Getenv: p.Getenv, Environ: p.Environ, Getwd: p.Getwd, Warn: p.Stderr}
	s, err := o.OpenStore(store.OpenChecked)
	if err != nil {
		return nil, store.Actor{}, err
	}
	actor, err := o.Actor(s)
	if err != nil {
		return nil, store.Actor{}, err
	}
	return s, actor, nil
}

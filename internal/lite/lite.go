package lite

import (
	"context"
	_ "embed"
	"io"
	"os"
	"os/signal"
	"slices"
	"strings"
	"syscall"

	"github.com/plasmodium/pm/internal/broker/wire"
	"github.com/plasmodium/pm/internal/phase"
	"github.com/plasmodium/pm/internal/state/stateopen"
	"github.com/plasmodium/pm/internal/store"
)

// helpText is pm-full's `pm --help` (TestHelpText keeps it current).
//
//go:embed help.txt
var helpText string

// Process is what a command line reads and writes: the process's own in
// Main, a test's in tests.
type Process struct {
	Stdin          io.Reader
	Stdout, Stderr io.Writer
	Getenv         func(string) string
	Environ        func() []string
	Getwd          func() (string, error)
	// Full runs a command line lite does not run itself (cmd/pm: execve of
	// pm-full; it returns only when that fails).
	Full func(args []string) int
}

// Main runs one command line of the pm executable and returns its exit code.
func Main(args []string, full func(args []string) int) int {
	return Run(Process{Stdin: os.Stdin, Stdout: os.Stdout, Stderr: os.Stderr,
		Getenv: os.Getenv, Environ: os.Environ, Getwd: os.Getwd, Full: full}, args)
}

// Run runs args as p: what lite runs itself, else p.Full.
func Run(p Process, args []string) int {
	if sock, tok := p.Getenv(wire.SocketEnv), p.Getenv(wire.TokenEnv); sock != "" && tok != "" {
		if slices.ContainsFunc(args, func(a string) bool { return strings.HasPrefix(a, "--context-file") }) {
			return p.Full(args) // the file is read on this side by pm-full (cli.clientFiles)
		}
		ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
		defer stop()
		return Forward(ctx, sock, tok, args, p.Stdin, p.Stdout, p.Stderr)
	}
	switch {
	case len(args) == 0 || len(args) == 1 && (args[0] == "--help" || args[0] == "-h" || args[0] == "help"):
		io.WriteString(p.Stdout, helpText)
		return 0
	case args[0] == "say":
		if code, ok := p.say(args[1:]); ok {
			return code
		}
	case args[0] == "chat":
		if code, ok := p.chat(args[1:]); ok {
			return code
		}
	}
	return p.Full(args)
}

// say runs pm say when its arguments are ones lite knows; ok is false (and
// nothing done) otherwise.
func (p Process) say(args []string) (code int, ok bool) {
	c, ok := parseCmdLine(args)
	if !ok || len(c.args) < 1 {
		return 0, false
	}
	s, st, actor, ok, err := p.session()
	if !ok {
		return 0, false
	}
	if err == nil {
		var msg string
		if msg, err = MessageArg(context.Background(), c.args, c.dashAt, 0, p.Stdin, phase.MaxMessage); err == nil {
			err = Say(p.Stdout, s, st, actor, nil, c.phase, msg, c.asJSON) // no host here: an agent's pm goes through its host's broker
		}
	}
	return p.exit(s, st, err), true
}

// chat runs pm chat without --follow, --wait or --task (those stream or
// block: pm-full's).
func (p Process) chat(args []string) (code int, ok bool) {
	c, ok := parseCmdLine(args)
	if !ok || len(c.args) > 0 {
		return 0, false
	}
	s, st, actor, ok, err := p.session()
	if !ok {
		return 0, false
	}
	if err == nil {
		err = Chat(p.Stdout, p.Stderr, s, st, actor, c.phase, c.asJSON)
	}
	return p.exit(s, st, err), true
}

// session is Session, unless pm-full is to run the command: ok is then
// false, when a supervisor is to be revived (supervisor.Revive, then the
// command) or the records are on a hub (this executable links no NATS
// client; a cheap look at config.json, store.OnHub). exit closes the
// records.
func (p Process) session() (s *store.Store, st *stateopen.Opened, actor store.Actor, ok bool, err error) {
	if s, err = p.Open(); err != nil {
		return nil, nil, actor, true, err
	}
	if s.SupervisorDown() || s.OnHub() {
		return nil, nil, actor, false, nil
	}
	s, st, actor, err = p.records(s)
	return s, st, actor, true, err
}

// Session opens the state directory (Open), its records (stateopen.Open,
// the opener every surface uses) and the actor from them (Opening.Actor,
// which pm-full's commands share). The records are to be closed (also
// when err is not nil: they may be open).
func (p Process) Session() (s *store.Store, st *stateopen.Opened, actor store.Actor, err error) {
	if s, err = p.Open(); err != nil {
		return nil, nil, actor, err
	}
	return p.records(s)
}

// records opens s's records and reads the actor from them.
func (p Process) records(s *store.Store) (*store.Store, *stateopen.Opened, store.Actor, error) {
	st, err := stateopen.Open(context.Background(), s)
	if err != nil {
		return nil, nil, store.Actor{}, err
	}
	actor, err := p.opening().Actor(st)
	return s, st, actor, err
}

// exit is the command's exit code, once its records are closed. Only a
// command that succeeded records that config.json was checked: a refused
// one writes nothing.
func (p Process) exit(s *store.Store, st *stateopen.Opened, err error) int {
	if cerr := st.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		return Report(p.Stderr, err)
	}
	s.RecordConfigChecked()
	return 0
}

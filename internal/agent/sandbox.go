package agent

import (
	"log/slog"
	"os"
	"path/filepath"
	"syscall"

	"github.com/plasmodium/pm/internal/broker"
	"github.com/plasmodium/pm/internal/envlist"
	"github.com/plasmodium/pm/internal/errs"
	"github.com/plasmodium/pm/internal/sandbox"
	"github.com/plasmodium/pm/internal/store"
)

// execSandbox is how an exec agent's CLI is confined when
// runtime.exec.sandbox asks for it: like run_command (internal/sandbox),
// writing only the workspace, its private TMPDIR and sandbox.writable,
// never seeing the state directory nor the hosts' sockets (broker.RunDir).
// Its pm commands reach pm through its own host's broker, a pathname
// socket, which Landlock does not block: in a private mount namespace,
// where the sockets' directory is covered, its host's socket directory is
// bound (read-only) into its private TMPDIR, and socket names it there;
// without one, it keeps its path, which the agent cannot list its way to.
type execSandbox struct {
	policy sandbox.Policy
	tmp    string
	socket string // the host's socket as the agent reaches it; "" to keep the broker's path
}

// newExecSandbox makes the private TMPDIR; nil when the config does not
// ask for a sandbox. brk is the host's broker (nil: none).
func newExecSandbox(s *store.Store, log *slog.Logger, brk *broker.Server) (*execSandbox, error) {
	if !s.Config().Runtime.Exec.Sandbox {
		return nil, nil
	}
	mode := sandbox.Available()
	if err := sandboxRefusal(mode, sandbox.Why()); err != nil {
		return nil, err
	}
	tmp, err := os.MkdirTemp("", "pm-agent-")
	if err != nil {
		return nil, err
	}
	cfg := s.Config().Sandbox
	p := sandbox.Policy{Workspace: realPath(s.ProjectDir()), TempDir: realPath(tmp), Hide: broker.Hidden(realPath(s.Root))}.Configured(cfg.Network, cfg.Writable)
	x := &execSandbox{policy: p, tmp: tmp}
	if brk != nil && mode == sandbox.ModeLandlockNS {
		if err := x.showSocket(brk.Path); err != nil {
			x.close()
			return nil, err
		}
	}
	log.Info("sandbox", "mode", mode)
	return x, nil
}

// showSocket binds the directory of the host's socket into the private
// TMPDIR, inside the agent's mount namespace only (where broker.RunDir is
// covered): the agent reaches its own host there, and no other.
func (x *execSandbox) showSocket(sock string) error {
	at := filepath.Join(x.tmp, "broker")
	x.socket = filepath.Join(at, filepath.Base(sock))
	if len(x.socket) > 107 {
		return errs.Failf("set TMPDIR to a shorter directory", "the agent's socket path %s is over the 107 bytes a unix socket's address holds", x.socket)
	}
	if err := os.Mkdir(at, 0o700); err != nil {
		return err
	}
	x.policy.Overlay = append(x.policy.Overlay, sandbox.Overlay{Target: realPath(at), Source: realPath(filepath.Dir(sock))})
	return nil
}

// sandboxRefusal: an exec agent the config asks to sandbox is not started
// unconfined where the kernel offers no sandbox (it ran with only a warning
// in its log before): its host ends it failed, with the reason.
func sandboxRefusal(mode sandbox.Mode, why string) error {
	if mode != sandbox.ModeNone {
		return nil
	}
	return errs.Statef("run it where the kernel has Landlock, or unset runtime.exec.sandbox to run it unconfined (trusted agents only)",
		"runtime.exec.sandbox is set but this machine cannot sandbox the agent (%s); not started", why)
}

// wrap returns the argv and process attributes of a confined start; a nil
// sandbox leaves argv as it is.
func (x *execSandbox) wrap(argv []string) ([]string, *syscall.SysProcAttr) {
	if x == nil {
		return argv, &syscall.SysProcAttr{}
	}
	argv, attr, _ := sandbox.Wrap(x.policy, argv)
	return argv, attr
}

// env points TMPDIR at the private temp dir, and the broker's variable at
// the socket as the agent reaches it.
func (x *execSandbox) env(env []string) []string {
	if x == nil {
		return env
	}
	if x.socket != "" {
		env = envlist.Set(env, broker.SocketEnv, x.socket)
	}
	return envlist.Set(env, "TMPDIR", x.tmp)
}

// close removes the private temp dir.
func (x *execSandbox) close() {
	if x != nil {
		os.RemoveAll(x.tmp)
	}
}

func realPath(p string) string {
	if r, err := filepath.EvalSymlinks(p); err == nil {
		return r
	}
	return p
}

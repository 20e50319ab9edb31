package agent

import (
	"log/slog"
	"os"
	"path/filepath"
	"syscall"

	"github.com/plasmodium/pm/internal/envlist"

	"github.com/plasmodium/pm/internal/errs"
	"github.com/plasmodium/pm/internal/sandbox"
	"github.com/plasmodium/pm/internal/store"
)

// execSandbox is how an exec agent's CLI is confined when
// runtime.exec.sandbox asks for it: like run_command (internal/sandbox),
// writing only the workspace, its private TMPDIR and sandbox.writable,
// never seeing the state directory. Its pm commands reach pm through its
// host's broker, which the sandbox does not block (a pathname socket).
type execSandbox struct {
	policy sandbox.Policy
	tmp    string
}

// newExecSandbox makes the private TMPDIR; nil when the config does not
// ask for a sandbox.
func newExecSandbox(s *store.Store, log *slog.Logger) (*execSandbox, error) {
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
	p := sandbox.New(realPath(s.ProjectDir()), realPath(tmp), realPath(s.Root)).Configured(cfg.Network, cfg.Writable)
	log.Info("sandbox", "mode", mode)
	return &execSandbox{policy: p, tmp: tmp}, nil
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

// env points TMPDIR at the private temp dir.
func (x *execSandbox) env(env []string) []string {
	if x == nil {
		return env
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

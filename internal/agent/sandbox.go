package agent

import (
	"errors"
	"io/fs"
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"syscall"

	"github.com/plasmodium/pm/internal/broker"
	"github.com/plasmodium/pm/internal/envlist"

	"github.com/plasmodium/pm/internal/errs"
	"github.com/plasmodium/pm/internal/sandbox"
	"github.com/plasmodium/pm/internal/store"
)

// execSandbox is how an exec agent's CLI is confined (runtime.exec.sandbox,
// on unless the config says false): like run_command (internal/sandbox),
// writing only the workspace (not .git nor prompts/), its private TMPDIR,
// sandbox.writable and the CLI's own config paths, never seeing the state
// directory nor the hosts' sockets (broker.RunDir). Its pm commands reach pm
// through its own host's broker, a pathname socket, which Landlock does not
// block: in a private mount namespace, where the sockets' directory is
// covered, its host's socket directory is bound (read-only) into its
// private TMPDIR, and socket names it there; without one, it keeps its
// path, which the agent cannot list its way to.
type execSandbox struct {
	policy sandbox.Policy
	tmp    string
	socket string // the host's socket as the agent reaches it; "" to keep the broker's path
}

// newExecSandbox makes the private TMPDIR; nil when the config turns the
// sandbox off, or when it is on by default and the kernel has none (the
// agent runs unconfined, as its log, pm agents and pm doctor say). brk is
// the host's broker (nil: none).
func newExecSandbox(s *store.Store, workspace string, log *slog.Logger, env []string, brk *broker.Server) (*execSandbox, error) {
	x := s.Config().Runtime.Exec
	if !x.Sandboxed() {
		log.Info("sandbox", "mode", SandboxExecOff)
		return nil, nil
	}
	mode := sandbox.Available()
	if mode == sandbox.ModeNone && !x.SandboxRequired() {
		log.Warn("sandbox", "mode", SandboxNoKernel, "why", sandbox.Why())
		return nil, nil
	}
	if err := sandboxRefusal(mode, sandbox.Why()); err != nil {
		return nil, err
	}
	tmp, err := os.MkdirTemp("", "pm-agent-")
	if err != nil {
		return nil, err
	}
	cfg := s.Config().Sandbox
	writable := append(configPaths(x.ConfigPaths, envlist.Get(env, "HOME"), log), cfg.Writable...)
	p := sandbox.New(realPath(workspace), realPath(tmp), broker.Hidden(realPath(s.Root))...).Configured(cfg.Network, writable)
	sb := &execSandbox{policy: p, tmp: tmp}
	if brk != nil && mode == sandbox.ModeLandlockNS {
		if err := sb.showSocket(brk.Path); err != nil {
			sb.close()
			return nil, err
		}
	}
	log.Info("sandbox", "mode", mode, "writable", p.Writable)
	return sb, nil
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

// configPaths expands "~/" in the CLI's config paths to home, and makes
// what is missing: a path that does not exist when the sandbox is made
// grants nothing, and the CLI could not create it (its parent, $HOME, is
// not writable). A directory is made empty; a file (a path ending in
// ".json") holding {}, an empty JSON object. A path that cannot be expanded
// is left out, and said.
func configPaths(paths []string, home string, log *slog.Logger) []string {
	var out []string
	for _, p := range paths {
		if rest, ok := strings.CutPrefix(p, "~/"); ok {
			if home == "" || !filepath.IsAbs(home) {
				log.Warn("sandbox: no $HOME for a config path", "path", p)
				continue
			}
			p = filepath.Join(home, rest)
		}
		if !filepath.IsAbs(p) {
			log.Warn("sandbox: config path is not absolute", "path", p)
			continue
		}
		if err := makeConfigPath(p); err != nil {
			log.Warn("sandbox: cannot make config path", "path", p, "err", err)
		}
		out = append(out, p)
	}
	return out
}

// makeConfigPath makes p when it is missing (see configPaths); never
// touches one that exists.
func makeConfigPath(p string) error {
	if !strings.HasSuffix(p, ".json") {
		return os.MkdirAll(p, 0o700)
	}
	if err := os.MkdirAll(filepath.Dir(p), 0o700); err != nil {
		return err
	}
	f, err := os.OpenFile(p, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o600)
	if errors.Is(err, fs.ErrExist) {
		return nil
	}
	if err != nil {
		return err
	}
	_, err = f.WriteString("{}\n")
	return errors.Join(err, f.Close())
}

// sandboxRefusal: an exec agent the config asks to sandbox in so many
// words is not started unconfined where the kernel offers no sandbox: its
// host ends it failed, with the reason.
func sandboxRefusal(mode sandbox.Mode, why string) error {
	if mode != sandbox.ModeNone {
		return nil
	}
	return errs.Statef("run it where the kernel has Landlock, or set runtime.exec.sandbox false to run it unconfined (trusted agents only)",
		"runtime.exec.sandbox is true but this machine cannot sandbox the agent (%s); not started", why)
}

// wrap returns the argv and process attributes of a confined start. A nil
// sandbox (runtime.exec.sandbox false, or no Landlock here) runs argv
// unconfined, but in a PID namespace of its own where the kernel allows
// one (sandbox.Contain), as the sandbox would: what the CLI starts ends
// with its host, killed -9 or not.
func (x *execSandbox) wrap(argv []string) ([]string, *syscall.SysProcAttr) {
	if x == nil {
		argv, attr, _ := sandbox.Contain(argv)
		return argv, attr
	}
	argv, attr, _ := sandbox.Wrap(x.policy, argv)
	return argv, attr
}

// env points TMPDIR at the private temp dir, the broker's variable at the
// socket as the agent reaches it, and PM_PROMPT_FILE at a copy of the
// prompt there (the original is in the state directory, which the sandbox
// hides).
func (x *execSandbox) env(env []string) ([]string, error) {
	if x == nil {
		return env, nil
	}
	env = envlist.Set(env, "TMPDIR", x.tmp)
	if x.socket != "" {
		env = envlist.Set(env, broker.SocketEnv, x.socket)
	}
	if p := envlist.Get(env, "PM_PROMPT_FILE"); p != "" {
		v, err := x.visible(p)
		if err != nil {
			return nil, err
		}
		env = envlist.Set(env, "PM_PROMPT_FILE", v)
	}
	return env, nil
}

// visible is where the sandboxed CLI reads file, one of the agent's files
// in the state directory (prompt.md, nudge.md): a copy, made now, in its
// private temp dir. A nil sandbox sees the state: file itself.
func (x *execSandbox) visible(file string) (string, error) {
	if x == nil {
		return file, nil
	}
	data, err := os.ReadFile(file)
	if err != nil {
		return "", err
	}
	v := filepath.Join(x.tmp, filepath.Base(file))
	return v, os.WriteFile(v, data, 0o600)
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

package ops

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"time"

	"github.com/plasmodium/pm/internal/broker"
	"github.com/plasmodium/pm/internal/design"
	"github.com/plasmodium/pm/internal/driver"
	"github.com/plasmodium/pm/internal/errs"
	"github.com/plasmodium/pm/internal/render"
	"github.com/plasmodium/pm/internal/sandbox"
	"github.com/plasmodium/pm/internal/secret"
)

const (
	// maxTestOutput bounds the test tool's output the supervisor reads.
	maxTestOutput = 16 << 10
	// testTimeout bounds one run of the test tool, as goTest's.
	testTimeout = 5 * time.Minute
)

// designTools are the tools a design's supervisor may call: test, when the
// design has a test command.
func designTools(s *Session, st *design.State) map[string]design.Tool {
	if strings.TrimSpace(st.TestCommand) == "" {
		return nil
	}
	return map[string]design.Tool{"test": designTestTool(s, st.SourceFile, st.TestCommand)}
}

// designTestTool runs line in the project as if file (relative to the
// project) had the candidate content: the candidate is bind-mounted over
// the file inside the sandbox's private mount namespace, so the real file
// is never touched and no other process sees the candidate.
func designTestTool(s *Session, file, line string) design.Tool {
	return func(ctx context.Context, code string, _ map[string]any) (string, error) {
		if err := testRefusal(s.Store.Config().Sandbox.Off, sandbox.Available()); err != nil {
			return "", err
		}
		project := realPath(s.Store.ProjectDir())
		target, err := filepath.EvalSymlinks(filepath.Join(project, file))
		if err != nil {
			return "", err
		}
		dir, err := os.MkdirTemp("", "pm-design-test-")
		if err != nil {
			return "", err
		}
		defer os.RemoveAll(dir)
		candidate, tmp := filepath.Join(dir, "candidate"), filepath.Join(dir, "tmp")
		if err := os.WriteFile(candidate, []byte(code), 0o644); err != nil {
			return "", err
		}
		if err := os.Mkdir(tmp, 0o700); err != nil {
			return "", err
		}
		ctx, cancel := context.WithTimeout(ctx, testTimeout)
		defer cancel()
		p := confinedPolicy(ctx, s, project, tmp)
		p.Overlay = []sandbox.Overlay{{Target: target, Source: candidate}}
		cmd, _ := sandbox.Command(ctx, p, line)
		return runBounded(ctx, cmd, project, tmp, confinedGoEnv(tmp)...)
	}
}

// testRefusal says why the test tool may not run here: only a private
// mount namespace can show the candidate to the command alone, and the
// tool never runs against the real file changed in place.
func testRefusal(off bool, mode sandbox.Mode) error {
	const try = "run pm design where the sandbox has a mount namespace (sandbox.off false, unprivileged user namespaces enabled), or without --test"
	switch {
	case off:
		return errs.Statef(try, "the test tool needs the sandbox, and config sets sandbox.off")
	case mode != sandbox.ModeLandlockNS:
		return errs.Statef(try, "the test tool needs the sandbox's private mount namespace, and this machine offers %q", string(mode))
	}
	return nil
}

// confinedPolicy is the sandbox of a command pm runs on code the models
// wrote (goTest, the test tool): like run_command's, with the config's
// sandbox settings, writing only dir, tmp and pm's own Go build cache
// (confinedGoCache), never seeing pm's state.
func confinedPolicy(ctx context.Context, s *Session, dir, tmp string) sandbox.Policy {
	cfg := s.Store.Config().Sandbox
	p := sandbox.New(dir, tmp, broker.Hidden(realPath(s.Store.Root))...)
	writable := cfg.Writable
	if d := confinedGoCache(); d != "" {
		writable = append(append([]string(nil), writable...), d)
	}
	return p.Configured(cfg.Network, writable)
}

// confinedGoCache is the Go build cache of the commands pm runs on models'
// code: pm's own ($XDG_CACHE_HOME/pm/go-build), never the user's GOCACHE,
// which Go trusts, so an entry planted there would reach the user's own
// builds. "" when there is no user cache directory (then tmp holds it).
func confinedGoCache() string {
	d, err := os.UserCacheDir()
	if err != nil {
		return ""
	}
	d = filepath.Join(d, "pm", "go-build")
	if os.MkdirAll(d, 0o700) != nil {
		return ""
	}
	return d
}

// confinedGoEnv points Go at confinedGoCache (or at tmp without one).
func confinedGoEnv(tmp string) []string {
	d := confinedGoCache()
	if d == "" {
		d = filepath.Join(tmp, "go-build")
	}
	return []string{"GOCACHE=" + d}
}

// runBounded runs cmd in dir with TMPDIR tmp and the secrets out of its
// environment, killing its process group at the deadline, and returns its
// exit code and output (at most maxTestOutput). What it started ends with
// it, setsid'ed or not.
func runBounded(ctx context.Context, cmd *exec.Cmd, dir, tmp string, env ...string) (string, error) {
	cmd.Dir = dir
	cmd.Env = append(append(secret.FilterEnv(os.Environ()), "TMPDIR="+tmp), env...)
	out := &render.HeadTail{Max: maxTestOutput}
	cmd.Stdout, cmd.Stderr = out, out
	cmd.Cancel = func() error { return syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL) }
	cmd.WaitDelay = 2 * time.Second
	// Its whole tree ends with it, as run_command's (driver.StartTree).
	end, err := driver.StartTree(cmd)
	if err == nil {
		err = cmd.Wait()
	}
	end()
	var exitErr *exec.ExitError
	var head string
	switch {
	case errors.Is(ctx.Err(), context.DeadlineExceeded):
		head = "timed out: the command and everything it started were killed"
	case ctx.Err() != nil:
		return "", ctx.Err()
	case err == nil:
		head = "exit code 0"
	case errors.As(err, &exitErr):
		head = fmt.Sprintf("exit code %d", exitErr.ExitCode())
	case errors.Is(err, exec.ErrWaitDelay):
		head = "exit code 0 (output cut off: a background process kept it open)"
	default:
		return "", err
	}
	return head + "\n" + out.String(), nil
}

// realPath is p with its symlinks resolved (p itself when that fails): the
// sandbox's policy wants real paths.
func realPath(p string) string {
	if r, err := filepath.EvalSymlinks(p); err == nil {
		return r
	}
	return p
}

package bench

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"time"
)

// CmdTimeout bounds every process the harness starts.
const CmdTimeout = 60 * time.Second

// Build builds ./cmd/pm and, beside it, ./cmd/pm-full of the module at
// modDir into outDir and returns pm's path. Static (CGO_ENABLED=0), as make
// build does.
func Build(ctx context.Context, modDir, outDir string) (string, error) {
	bin := filepath.Join(outDir, "pm")
	if err := goBuild(ctx, modDir, bin, "./cmd/pm"); err != nil {
		return "", err
	}
	return bin, goBuild(ctx, modDir, filepath.Join(outDir, "pm-full"), "./cmd/pm-full")
}

func goBuild(ctx context.Context, modDir, bin, pkg string) error {
	cmd := exec.CommandContext(ctx, "go", "build", "-o", bin, pkg)
	cmd.Dir = modDir
	cmd.Env = append(os.Environ(), "CGO_ENABLED=0")
	if out, err := cmd.CombinedOutput(); err != nil {
		return fmt.Errorf("go build %s: %v\n%s", pkg, err, out)
	}
	return nil
}

// ModuleDir finds the root of the pm module from the working directory.
func ModuleDir(ctx context.Context) (string, error) {
	out, err := exec.CommandContext(ctx, "go", "env", "GOMOD").Output()
	if err != nil {
		return "", fmt.Errorf("go env GOMOD: %v", err)
	}
	mod := strings.TrimSpace(string(out))
	if mod == "" || mod == os.DevNull {
		return "", fmt.Errorf("run pmbench inside the pm module, or pass -pm BINARY")
	}
	return filepath.Dir(mod), nil
}

// PM runs the pm binary against one state directory.
type PM struct {
	Bin  string
	Dir  string   // working directory (the project, which holds .plasmodium)
	Env  []string // base environment; PM_HOME and PM_AGENT are added per call
	Home string   // PM_HOME
}

// Env returns a clean environment for pm processes: PATH, HOME, TMPDIR and
// git identity only, so the user's PM_* variables never leak in.
func Env(home string) []string {
	env := []string{"HOME=" + home, "GIT_AUTHOR_NAME=pmbench", "GIT_AUTHOR_EMAIL=pmbench@localhost",
		"GIT_COMMITTER_NAME=pmbench", "GIT_COMMITTER_EMAIL=pmbench@localhost", "GIT_CONFIG_NOSYSTEM=1"}
	for _, k := range []string{"PATH", "TMPDIR"} {
		if v := os.Getenv(k); v != "" {
			env = append(env, k+"="+v)
		}
	}
	return env
}

// Command returns a pm command acting as agent ("" for the human).
func (p *PM) Command(ctx context.Context, agent string, args ...string) *exec.Cmd {
	cmd := exec.CommandContext(ctx, p.Bin, args...)
	cmd.Dir = p.Dir
	cmd.Env = append(append([]string{}, p.Env...), "PM_HOME="+p.Home)
	if agent != "" {
		cmd.Env = append(cmd.Env, "PM_AGENT="+agent)
	}
	cmd.WaitDelay = time.Second
	return cmd
}

// Run runs pm to completion and returns its stdout and wall time (from just
// before the process starts to just after it has exited and been reaped).
func (p *PM) Run(ctx context.Context, agent string, args ...string) (string, time.Duration, error) {
	ctx, cancel := context.WithTimeout(ctx, CmdTimeout)
	defer cancel()
	cmd := p.Command(ctx, agent, args...)
	var out, errb bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errb
	start := time.Now()
	err := cmd.Run()
	d := time.Since(start)
	if err != nil {
		return out.String(), d, fmt.Errorf("pm %s: %w\n%s", strings.Join(args, " "), err, errb.String())
	}
	return out.String(), d, nil
}

// Time runs pm n times and returns the wall time of each run.
func (p *PM) Time(ctx context.Context, n int, agent string, args ...string) (Durations, error) {
	var ds Durations
	for range n {
		_, d, err := p.Run(ctx, agent, args...)
		if err != nil {
			return ds, err
		}
		ds = append(ds, d)
	}
	return ds, nil
}

// Git runs git in dir.
func Git(ctx context.Context, dir string, env []string, args ...string) (time.Duration, error) {
	ctx, cancel := context.WithTimeout(ctx, CmdTimeout)
	defer cancel()
	cmd := exec.CommandContext(ctx, "git", args...)
	cmd.Dir, cmd.Env = dir, env
	start := time.Now()
	out, err := cmd.CombinedOutput()
	d := time.Since(start)
	if err != nil {
		return d, fmt.Errorf("git %s: %v\n%s", strings.Join(args, " "), err, out)
	}
	return d, nil
}

// gnuTime measures a process's own peak RSS. The harness cannot read it
// from the child's rusage: Go starts children with vfork, and at execve the
// kernel records the shared (harness's) memory as the child's peak.
const gnuTime = "/usr/bin/time"

// PeakRSS runs cmd once under GNU time, stdout drained, and returns its peak
// RSS in KiB; 0 (and no error) when there is no /usr/bin/time. dir holds
// the report.
func PeakRSS(ctx context.Context, cmd *exec.Cmd, dir string) (int64, error) {
	if _, err := os.Stat(gnuTime); err != nil {
		return 0, nil
	}
	report := filepath.Join(dir, "rss")
	args := cmd.Args
	if len(args) == 0 {
		args = []string{cmd.Path}
	}
	cmd.Args = append([]string{gnuTime, "-f", "%M", "-o", report, cmd.Path}, args[1:]...)
	cmd.Path = gnuTime
	if _, err := drained(ctx, cmd); err != nil {
		return 0, fmt.Errorf("under %s: %w", gnuTime, err)
	}
	data, err := os.ReadFile(report)
	if err != nil {
		return 0, err
	}
	kib, err := strconv.ParseInt(strings.TrimSpace(string(data)), 10, 64)
	if err != nil {
		return 0, fmt.Errorf("%s: %q: %v", gnuTime, data, err)
	}
	return kib, nil
}

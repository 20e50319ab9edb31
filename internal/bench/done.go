package bench

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"github.com/plasmodium/pm/internal/render"
)

// DoneResult compares pm done with git add -A && git commit.
type DoneResult struct {
	PM, Git Durations
}

// Done makes a git repository of files files (in 100 directories, one
// commit), runs pm init in it, then for each of rounds rounds: creates a task
// (untimed), changes changed files, times `pm done`; changes changed other
// files and times `git add -A && git commit`. Both see the same repository
// size and the same kind of change.
func Done(ctx context.Context, bin, dir string, files, changed, rounds int) (*DoneResult, error) {
	env := Env(dir)
	git := func(args ...string) error { _, err := Git(ctx, dir, env, args...); return err }
	if err := git("init", "-q"); err != nil {
		return nil, err
	}
	for _, kv := range [][2]string{{"user.name", "pmbench"}, {"user.email", "pmbench@localhost"}, {"gc.auto", "0"}, {"commit.gpgsign", "false"}} {
		if err := git("config", kv[0], kv[1]); err != nil {
			return nil, err
		}
	}
	path := func(i int) string {
		return filepath.Join(dir, fmt.Sprintf("pkg%02d", i%100), fmt.Sprintf("file%05d.go", i))
	}
	for i := range files {
		if i < 100 {
			if err := os.MkdirAll(filepath.Dir(path(i)), 0o755); err != nil {
				return nil, err
			}
		}
		body := fmt.Sprintf("package pkg%02d\n\n// File %d is a realistic little source file.\nconst Name%d = %q\n", i%100, i, i, strings.Repeat("x", 100))
		if err := os.WriteFile(path(i), []byte(body), 0o644); err != nil {
			return nil, err
		}
	}
	if err := git("add", "-A"); err != nil {
		return nil, err
	}
	if err := git("commit", "-q", "-m", "initial"); err != nil {
		return nil, err
	}
	p, err := NewProject(ctx, bin, dir, 50)
	if err != nil {
		return nil, err
	}
	touch := func(round, salt int) error {
		for k := range changed {
			i := (round*2*changed + salt*changed + k*997) % files
			if err := os.WriteFile(path(i), fmt.Appendf(nil, "package pkg%02d\n// changed in round %d.%d\n", i%100, round, salt), 0o644); err != nil {
				return err
			}
		}
		return nil
	}
	res := &DoneResult{}
	for r := range rounds {
		t, err := p.Task(ctx, fmt.Sprintf("round %d", r))
		if err != nil {
			return nil, err
		}
		if err := touch(r, 0); err != nil {
			return nil, err
		}
		out, d, err := p.Run(ctx, t.Owner, "done")
		if err != nil {
			return nil, err
		}
		if !strings.Contains(out, "("+render.Plural(changed, "file")+")") {
			return nil, fmt.Errorf("pm done committed something else than %d files: %q", changed, out)
		}
		res.PM = append(res.PM, d)
		if err := touch(r, 1); err != nil {
			return nil, err
		}
		d1, err := Git(ctx, dir, env, "add", "-A")
		if err != nil {
			return nil, err
		}
		d2, err := Git(ctx, dir, env, "commit", "-q", "-m", fmt.Sprintf("git round %d", r))
		if err != nil {
			return nil, err
		}
		res.Git = append(res.Git, d1+d2)
	}
	return res, nil
}

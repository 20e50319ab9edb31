package gitx

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"syscall"
	"time"

	"github.com/go-git/go-git/v5/plumbing/cache"
	"github.com/go-git/go-git/v5/storage/filesystem"

	"github.com/plasmodium/pm/internal/gitx/pin"
)

// Pin is the record of the repository a task's work is committed to.
type Pin = pin.Repo

// Locate pins the repository whose work tree holds dir now: the nearest
// .git up from dir, what it is (a directory, a gitdir: file, a symbolic
// link), and the real git and common directories behind it. No repository:
// the zero Pin.
func Locate(dir string) (Pin, error) {
	root, err := findWorkTree(dir)
	if errors.Is(err, errNoRepo) {
		return Pin{}, nil
	}
	if err != nil {
		return Pin{}, err
	}
	if root, err = filepath.EvalSymlinks(root); err != nil {
		return Pin{}, err
	}
	p := Pin{WorkTree: root}
	dot := filepath.Join(root, ".git")
	fi, err := os.Lstat(dot)
	if err != nil {
		return Pin{}, err
	}
	var gitDir string
	switch {
	case fi.Mode()&os.ModeSymlink != 0:
		p.DotGit, gitDir = "symlink", dot
	case fi.IsDir():
		p.DotGit, gitDir = "dir", dot
	case fi.Mode().IsRegular():
		p.DotGit = "file"
		if gitDir, err = readGitdirFile(dot); err != nil {
			return Pin{}, fmt.Errorf("%s: %w", dot, err)
		}
		if !filepath.IsAbs(gitDir) {
			gitDir = filepath.Join(root, gitDir)
		}
	default:
		return Pin{}, fmt.Errorf("%s is neither a directory, a gitdir: file nor a symbolic link", dot)
	}
	if p.GitDir, err = filepath.EvalSymlinks(gitDir); err != nil {
		return Pin{}, err
	}
	var st syscall.Stat_t
	if err := syscall.Stat(p.GitDir, &st); err != nil {
		return Pin{}, err
	}
	if st.Mode&syscall.S_IFMT != syscall.S_IFDIR {
		return Pin{}, fmt.Errorf("%s is not a directory", p.GitDir)
	}
	p.Dev, p.Ino = uint64(st.Dev), st.Ino
	common, err := commonDir(p.GitDir)
	if err != nil {
		return Pin{}, err
	}
	if common != "" {
		if p.CommonDir, err = filepath.EvalSymlinks(common); err != nil {
			return Pin{}, err
		}
	}
	return p, nil
}

// MovedError is a repository that is no longer the pinned one: pm done
// commits nowhere else.
type MovedError struct {
	Pinned, Now Pin
	Reason      string
}

func (e *MovedError) Error() string {
	return "gitx: the repository changed since the task was created: " + e.Reason
}

// Try says what puts the pinned repository back.
func (e *MovedError) Try() string {
	if e.Pinned.WorkTree == "" {
		return "remove " + filepath.Join(e.Now.WorkTree, ".git") + " (no repository held the project when the task was created)"
	}
	return fmt.Sprintf("put back %s as it was (%s, leading to %s)", filepath.Join(e.Pinned.WorkTree, ".git"), dotGitWord(e.Pinned.DotGit), e.Pinned.GitDir)
}

func dotGitWord(kind string) string {
	switch kind {
	case "file":
		return "a gitdir: file"
	case "symlink":
		return "a symbolic link"
	}
	return "a directory"
}

// moved says how now differs from the pinned repository ("" when it does
// not). A project pinned without a repository accepts one only if it is a
// repository of its own (.git a directory, no commondir): committing there
// writes nothing outside it.
func moved(pinned, now Pin) string {
	switch {
	case pinned.WorkTree == "" && now.WorkTree == "":
		return ""
	case pinned.WorkTree == "":
		if now.DotGit == "dir" && now.CommonDir == "" {
			return ""
		}
		return fmt.Sprintf("%s/.git is %s leading to %s; no repository held the project when the task was created", now.WorkTree, dotGitWord(now.DotGit), now.GitDir)
	case now.WorkTree == "":
		return fmt.Sprintf("no .git holds the project any more (pinned: %s)", pinned.GitDir)
	case now.WorkTree != pinned.WorkTree:
		return fmt.Sprintf("a .git appeared at %s, nearer the project than the pinned work tree %s", now.WorkTree, pinned.WorkTree)
	case now.DotGit != pinned.DotGit:
		return fmt.Sprintf("%s/.git became %s (it was %s)", now.WorkTree, dotGitWord(now.DotGit), dotGitWord(pinned.DotGit))
	case now.GitDir != pinned.GitDir:
		return fmt.Sprintf("%s/.git leads to %s, not the pinned %s", now.WorkTree, now.GitDir, pinned.GitDir)
	case now.Dev != pinned.Dev || now.Ino != pinned.Ino:
		return fmt.Sprintf("%s was replaced by another directory", pinned.GitDir)
	case now.CommonDir != pinned.CommonDir:
		return fmt.Sprintf("the common dir of %s is now %q (pinned: %q)", pinned.GitDir, now.CommonDir, pinned.CommonDir)
	}
	return ""
}

// CommitPinned is CommitWith into the pinned repository only: the
// repository that holds dir now must be the pinned one (else a
// *MovedError, nothing written), and the commit opens the pinned git and
// common directories by their recorded paths, not by following .git again.
// A nil pin (a task recorded before pins) commits where CommitWith does.
func CommitPinned(dir string, pinned *Pin, stateDir, msg string, now time.Time, opt Options) (Result, error) {
	if pinned == nil {
		return CommitWith(dir, stateDir, msg, now, opt)
	}
	cur, err := Locate(dir)
	if err != nil {
		return Result{}, fmt.Errorf("gitx: locate the repository of %s: %w", dir, err)
	}
	if why := moved(*pinned, cur); why != "" {
		return Result{}, &MovedError{Pinned: *pinned, Now: cur, Reason: why}
	}
	if cur.WorkTree == "" {
		return finishResult(Result{NoRepo: true}, nil)
	}
	use := *pinned
	if pinned.WorkTree == "" {
		use = cur // a repository of the project's own, made since
	}
	return commitIn(use, stateDir, msg, now, opt)
}

// commitIn commits into the repository at p's directories.
func commitIn(p Pin, stateDir, msg string, now time.Time, opt Options) (Result, error) {
	dirs := repoDirs{git: p.GitDir, common: p.CommonDir}
	open := func(string) (*filesystem.Storage, string, repoDirs, error) {
		st, err := openDirs(dirs, cache.NewObjectLRUDefault(), filesystem.Options{})
		return st, p.WorkTree, dirs, err
	}
	return commitWithOpen(open, p.WorkTree, stateDir, msg, now, opt)
}

package gitx

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// CommitPinned commits into the pinned repository or nowhere: every way
// the project's .git can come to lead elsewhere is refused with the reason,
// and neither repository changes.
func TestCommitPinned(t *testing.T) {
	needGit(t)
	tests := []struct {
		name    string
		sub     bool                                    // the project is a subdirectory of the work tree
		noRepo  bool                                    // no repository when pinned
		change  func(t *testing.T, proj, victim string) // what happens between the pin and the commit
		reason  string                                  // "" : the commit is made
		noRepoR bool                                    // the result is NoRepo
	}{
		{name: "unchanged"},
		{name: "gitdir file to another repository", change: func(t *testing.T, proj, victim string) {
			must(t, os.Rename(filepath.Join(proj, ".git"), filepath.Join(proj, ".git-real")))
			write(t, proj, ".git", "gitdir: "+filepath.Join(victim, ".git")+"\n")
		}, reason: "became a gitdir: file (it was a directory)"},
		{name: "symbolic link to another repository", change: func(t *testing.T, proj, victim string) {
			must(t, os.Rename(filepath.Join(proj, ".git"), filepath.Join(proj, ".git-real")))
			must(t, os.Symlink(filepath.Join(victim, ".git"), filepath.Join(proj, ".git")))
		}, reason: "became a symbolic link"},
		{name: "another repository at the same path", change: func(t *testing.T, proj, victim string) {
			must(t, os.Rename(filepath.Join(proj, ".git"), filepath.Join(proj, "..", "moved-git")))
			initRepo(t, proj)
		}, reason: "was replaced by another directory"},
		{name: "a commondir added", change: func(t *testing.T, proj, victim string) {
			write(t, proj, ".git/commondir", filepath.Join(victim, ".git")+"\n")
		}, reason: "the common dir of"},
		{name: "a nearer .git in the project", sub: true, change: func(t *testing.T, proj, victim string) {
			write(t, proj, ".git", "gitdir: "+filepath.Join(victim, ".git")+"\n")
		}, reason: "a .git appeared at"},
		{name: "the repository removed", change: func(t *testing.T, proj, victim string) {
			must(t, os.RemoveAll(filepath.Join(proj, ".git")))
		}, reason: "no .git holds the project any more"},
		{name: "none pinned, none now", noRepo: true, noRepoR: true},
		{name: "none pinned, a repository of its own made since", noRepo: true, change: func(t *testing.T, proj, victim string) {
			initRepo(t, proj)
			write(t, proj, "first.txt", "x")
			commitAll(t, proj)
			write(t, proj, "more.txt", "work made after")
		}},
		{name: "none pinned, a gitdir file to another repository", noRepo: true, change: func(t *testing.T, proj, victim string) {
			write(t, proj, ".git", "gitdir: "+filepath.Join(victim, ".git")+"\n")
		}, reason: "no repository held the project when the task was created"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			isolate(t)
			base := t.TempDir()
			victim := filepath.Join(base, "victim")
			must(t, os.MkdirAll(victim, 0o755))
			initRepo(t, victim)
			write(t, victim, "mine.txt", "the human's")
			commitAll(t, victim)
			victimHead := run(t, victim, "rev-parse", "HEAD")
			top := filepath.Join(base, "proj")
			proj := top
			if tt.sub {
				proj = filepath.Join(top, "app")
			}
			if tt.noRepo {
				must(t, os.MkdirAll(proj, 0o755))
			} else {
				must(t, os.MkdirAll(proj, 0o755))
				initRepo(t, top)
				write(t, top, "README", "x")
				commitAll(t, top)
			}
			p, err := Locate(proj)
			if err != nil {
				t.Fatal(err)
			}
			if (p.WorkTree == "") != tt.noRepo {
				t.Fatalf("Locate = %+v", p)
			}
			write(t, proj, "work.txt", "work")
			if tt.change != nil {
				tt.change(t, proj, victim)
			}
			res, err := CommitPinned(proj, &p, stateDir, "work", testNow, Options{})
			if tt.reason != "" {
				var me *MovedError
				if !errors.As(err, &me) || !strings.Contains(err.Error(), tt.reason) {
					t.Fatalf("CommitPinned = %+v, %v; want a MovedError saying %q", res, err, tt.reason)
				}
				if strings.Count(err.Error(), "gitx:") != 1 || me.Try() == "" {
					t.Errorf("error %q, Try %q", err, me.Try())
				}
			} else if err != nil {
				t.Fatalf("CommitPinned: %v", err)
			} else if res.NoRepo != tt.noRepoR || !tt.noRepoR && res.Hash == "" {
				t.Fatalf("CommitPinned = %+v", res)
			}
			if got := run(t, victim, "rev-parse", "HEAD"); got != victimHead {
				t.Fatalf("the other repository's HEAD moved: %s", got)
			}
			if st := run(t, victim, "status", "--porcelain"); st != "" {
				t.Fatalf("the other repository changed:\n%s", st)
			}
		})
	}
}

// A nil pin (a task recorded before pins) commits where CommitWith does.
func TestCommitPinnedNil(t *testing.T) {
	needGit(t)
	isolate(t)
	dir := t.TempDir()
	initRepo(t, dir)
	write(t, dir, "a.txt", "a")
	res, err := CommitPinned(dir, nil, stateDir, "work", testNow, Options{})
	if err != nil || res.Hash == "" {
		t.Fatalf("CommitPinned(nil) = %+v, %v", res, err)
	}
}

func must(t *testing.T, err error) {
	t.Helper()
	if err != nil {
		t.Fatal(err)
	}
}

package gitx

import (
	"os"
	"path/filepath"
	"slices"
	"testing"
	"time"
)

// A worktree made from a spare is the same as one checked out whole: git
// sees it clean on its branch at its base, whatever changed between the
// spare's commit and the base (files changed, added, removed, a file
// turned into a directory and back, a mode change), and a spare that was
// written to after it was made is thrown away, never taken.
func TestWorktreeFromSpare(t *testing.T) {
	for _, c := range []struct {
		name   string
		change func(t *testing.T, dir string) // between the spare and the task
		tamper func(t *testing.T, spare string)
		taken  bool // the spare is used (its inode reused)
	}{
		{name: "same commit", taken: true},
		{name: "files changed, added, removed, moved into a directory", taken: true, change: func(t *testing.T, dir string) {
			write(t, dir, "a.txt", "a changed\n")
			write(t, dir, "new/deep/n.txt", "n\n")
			must(t, os.Remove(filepath.Join(dir, "sub/b.txt")))
			must(t, os.Remove(filepath.Join(dir, "f")))
			write(t, dir, "f/inside.txt", "f is a directory now\n")
			must(t, os.Chmod(filepath.Join(dir, "x.sh"), 0o644))
			commitAll(t, dir)
		}},
		{name: "a directory turned into a file", taken: true, change: func(t *testing.T, dir string) {
			must(t, os.RemoveAll(filepath.Join(dir, "sub")))
			write(t, dir, "sub", "sub is a file now\n")
			commitAll(t, dir)
		}},
		{name: "a file rewritten with its mtime put back", tamper: func(t *testing.T, spare string) {
			p := filepath.Join(spare, "a.txt")
			fi, err := os.Stat(p)
			must(t, err)
			must(t, os.WriteFile(p, []byte("A\n"), 0o644))
			must(t, os.Chtimes(p, fi.ModTime(), fi.ModTime()))
		}},
		{name: "a file added", tamper: func(t *testing.T, spare string) {
			write(t, spare, "planted.txt", "not in the commit\n")
		}},
		{name: "a file removed", tamper: func(t *testing.T, spare string) {
			must(t, os.Remove(filepath.Join(spare, "sub/b.txt")))
		}},
	} {
		t.Run(c.name, func(t *testing.T) {
			dir, p := newProject(t, map[string]string{"a.txt": "a\n", "sub/b.txt": "b\n", "sub/c.txt": "c\n", "x.sh": "#!/bin/sh\n", "f": "f\n"})
			must(t, os.Chmod(filepath.Join(dir, "x.sh"), 0o755))
			commitAll(t, dir)
			wdir := filepath.Join(dir, ".pm-worktrees")
			must(t, PrepareSpare(p, wdir, run(t, dir, "rev-parse", "HEAD")))
			if SpareCommit(wdir) == "" {
				t.Fatal("no spare made")
			}
			spareIno := inode(t, filepath.Join(wdir, spareName))
			// Held open, the spare's directory keeps its inode number even
			// when thrown away, so a fresh one cannot look taken.
			held, err := os.Open(filepath.Join(wdir, spareName))
			must(t, err)
			defer held.Close()
			if c.change != nil {
				c.change(t, dir)
			}
			if c.tamper != nil {
				time.Sleep(10 * time.Millisecond) // a ctime the file system tells apart (not synchronisation)
				c.tamper(t, filepath.Join(wdir, spareName))
			}
			w := addTask(t, dir, p, "tk-aaaaaa", "")
			if got := run(t, w.Path, "status", "--porcelain", "--untracked-files=all", "--ignored"); got != "" {
				t.Fatalf("git status in the worktree: %q", got)
			}
			if got, want := run(t, w.Path, "ls-files", "-s"), run(t, dir, "ls-files", "-s"); got != want {
				t.Fatalf("index:\n%s\nwant\n%s", got, want)
			}
			if got := run(t, w.Path, "rev-parse", "HEAD"); got != run(t, dir, "rev-parse", "HEAD") {
				t.Fatalf("worktree at %s", got)
			}
			if got := run(t, w.Path, "diff", "HEAD", "--stat"); got != "" {
				t.Fatalf("worktree differs from HEAD: %s", got)
			}
			if taken := inode(t, w.Path) == spareIno; taken != c.taken {
				t.Fatalf("spare taken: %v, want %v", taken, c.taken)
			}
			if got := checkRepo(t, dir); !slices.Equal(got, []string{dir, w.Path}) {
				t.Fatalf("git worktree list: %v", got)
			}
			for _, name := range []string{spareName, spareIndexName, spareCommitName} {
				if _, err := os.Lstat(filepath.Join(wdir, name)); !os.IsNotExist(err) {
					t.Fatalf("%s left after the spare was taken or thrown away: %v", name, err)
				}
			}
		})
	}
}

// Prune never takes a spare for a stray worktree; RemoveSpare (pm reset)
// removes it, and one in the making of a process that is gone.
func TestSpareAndPrune(t *testing.T) {
	dir, p := newProject(t, map[string]string{"a.txt": "a\n"})
	wdir := filepath.Join(dir, ".pm-worktrees")
	must(t, PrepareSpare(p, wdir, run(t, dir, "rev-parse", "HEAD")))
	removed, err := PruneWorktrees(p, wdir, func(string) bool { return false }, func(string) string { return "" })
	must(t, err)
	if len(removed) != 0 || SpareCommit(wdir) == "" {
		t.Fatalf("prune removed %v, spare %q", removed, SpareCommit(wdir))
	}
	// A spare in the making whose maker is gone (pid 2^22+1 is beyond pid_max's default).
	must(t, os.Mkdir(filepath.Join(wdir, spareTmpPrefix+"4194305"), 0o777))
	must(t, RemoveSpare(p, wdir))
	ents, err := os.ReadDir(wdir)
	must(t, err)
	var left []string
	for _, e := range ents {
		left = append(left, e.Name())
	}
	if !slices.Equal(left, []string{".gitignore"}) {
		t.Fatalf("left after RemoveSpare: %v", left)
	}
}

func inode(t *testing.T, path string) uint32 {
	t.Helper()
	fi, err := os.Lstat(path)
	must(t, err)
	s, _ := sysStat(fi)
	return s.ino
}

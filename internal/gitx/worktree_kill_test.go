package gitx

import (
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

// TestHelperWorktree is the process the worktree kill tests kill: one
// AddWorktree or Merge, as GITX_HELPER_WT says (JSON: op, pin, worktree).
func TestHelperWorktree(t *testing.T) {
	spec := os.Getenv("GITX_HELPER_WT")
	if spec == "" {
		t.Skip("helper process")
	}
	var in struct {
		Op string
		P  Pin
		W  Worktree
	}
	if err := json.Unmarshal([]byte(spec), &in); err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(2)
	}
	var err error
	switch in.Op {
	case "add":
		err = AddWorktree(in.P, in.W)
	case "merge":
		_, err = Merge(in.P, in.W.Branch, in.W.Into, stateDir, "merge", testNow, FavorNone)
	}
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	os.Exit(0)
}

// killedAt runs op on w in a helper process that pm's crash point point
// kills (SIGKILL of itself, as kill -9 would).
func killedAt(t *testing.T, op string, p Pin, w Worktree, point string) {
	t.Helper()
	b, _ := json.Marshal(map[string]any{"Op": op, "P": p, "W": w})
	cmd := exec.Command(os.Args[0], "-test.run=^TestHelperWorktree$", "-test.count=1")
	cmd.Env = append(os.Environ(), "GITX_HELPER_WT="+string(b), "PM_TEST_CRASH_AT="+point)
	out, err := cmd.CombinedOutput()
	if err == nil {
		t.Fatalf("the helper was not killed at %s: %s", point, out)
	}
}

// A worktree creation killed at each step is made whole by the next
// AddWorktree, or removed whole by PruneWorktrees: no prunable or locked
// worktree, no stray branch, no lock file.
func TestAddWorktreeKilled(t *testing.T) {
	for _, point := range []string{"gitx.worktree.admin", "gitx.commit.ref", "gitx.worktree.branch", "gitx.worktree.files"} {
		for _, then := range []string{"redo", "prune"} {
			t.Run(point+"/"+then, func(t *testing.T) {
				dir, p := newProject(t, map[string]string{"a.txt": "a\n", "d/b.txt": "b\n"})
				branch, tip, err := StartPoint(p, "")
				must(t, err)
				w := Worktree{Path: filepath.Join(dir, ".pm-worktrees", "tk-kkkkkk"), Branch: BranchPrefix + "tk-kkkkkk", Base: tip, Into: branch}
				killedAt(t, "add", p, w, point)
				if then == "redo" {
					must(t, AddWorktree(p, w))
					if got := checkRepo(t, dir); !slices.Equal(got, []string{dir, w.Path}) {
						t.Fatalf("worktrees %v", got)
					}
					if st := run(t, w.Path, "status", "--porcelain", "--untracked-files=all"); st != "" {
						t.Fatalf("git status in the remade worktree: %s", st)
					}
				} else {
					removed, err := PruneWorktrees(p, filepath.Join(dir, ".pm-worktrees"), func(string) bool { return false }, func(string) string { return w.Branch })
					must(t, err)
					if len(removed) != 1 {
						t.Fatalf("pruned %v", removed)
					}
					if got := checkRepo(t, dir); !slices.Equal(got, []string{dir}) {
						t.Fatalf("worktrees after the prune %v", got)
					}
					if b := run(t, dir, "branch", "--list", "pm/*"); b != "" {
						t.Fatalf("branch left: %s", b)
					}
				}
				assertNoLocks(t, filepath.Join(dir, ".git"))
				if st := run(t, dir, "status", "--porcelain", "--untracked-files=all"); st != "" {
					t.Fatalf("git status in the checkout: %s", st)
				}
			})
		}
	}
}

// A merge killed at each step is finished by the next Merge: the merged
// files in the checkout, the branch moved once, the user's own edit kept,
// no lock left.
func TestMergeKilled(t *testing.T) {
	for _, point := range []string{"gitx.merge.commit", "gitx.merge.files", "gitx.merge.index", "gitx.commit.ref"} {
		t.Run(point, func(t *testing.T) {
			dir, p := newProject(t, map[string]string{"a.txt": text, "b.txt": text, "mine.txt": "mine\n"})
			w1 := addTask(t, dir, p, "tk-111111", "")
			w2 := addTask(t, dir, p, "tk-222222", "")
			write(t, w1.Path, "a.txt", "one\n")
			write(t, w2.Path, "b.txt", "two\n")
			write(t, w2.Path, "new/c.txt", "three\n")
			doneTask(t, p, w1, "t1")
			doneTask(t, p, w2, "t2")
			mergeTask(t, p, w1, FavorNone)
			write(t, dir, "mine.txt", "my edit\n")
			killedAt(t, "merge", p, w2, point)
			m := mergeTask(t, p, w2, FavorNone)
			if m.Hash == "" && !m.UpToDate {
				t.Fatalf("merge after the kill: %+v", m)
			}
			for f, want := range map[string]string{"a.txt": "one\n", "b.txt": "two\n", "new/c.txt": "three\n", "mine.txt": "my edit\n"} {
				if got := readFile(t, dir, f); got != want {
					t.Fatalf("%s = %q, want %q", f, got, want)
				}
			}
			if got := pending(t, dir); !slices.Equal(got, []string{" M mine.txt"}) {
				t.Fatalf("git status: %v", got)
			}
			if n := run(t, dir, "rev-list", "--count", "--merges", "main"); n != "1" {
				t.Fatalf("%s merge commits", n)
			}
			assertNoLocks(t, filepath.Join(dir, ".git"))
			for _, e := range mustReadDir(t, dir) {
				if strings.HasPrefix(e, ".pm-merge-") {
					t.Fatalf("left %s", e)
				}
			}
			checkRepo(t, dir)
		})
	}
}

func mustReadDir(t *testing.T, dir string) []string {
	t.Helper()
	es, err := os.ReadDir(dir)
	must(t, err)
	var out []string
	for _, e := range es {
		out = append(out, e.Name())
	}
	return out
}

package gitx

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"sync"
	"testing"
	"time"
)

// Worktrees on the 10,000-file repository of benchRepo (docs/benchmarks.md,
// "Worktrees"): pm's way against the git binary's by hand.

func benchPin(b *testing.B, dir string) Pin {
	b.Helper()
	p, err := Locate(dir)
	if err != nil {
		b.Fatal(err)
	}
	return p
}

func gitRun(b *testing.B, dir string, args ...string) {
	b.Helper()
	cmd := exec.Command("git", args...)
	cmd.Dir = dir
	if out, err := cmd.CombinedOutput(); err != nil {
		b.Fatalf("git %v: %v\n%s", args, err, out)
	}
}

// BenchmarkAddWorktree10k: AddWorktree (branch, admin files, the 10,000
// files and the index), then its removal (untimed).
func BenchmarkAddWorktree10k(b *testing.B) {
	dir := benchRepo(b)
	p := benchPin(b, dir)
	_, tip, err := StartPoint(p, "")
	if err != nil {
		b.Fatal(err)
	}
	b.ResetTimer()
	for n := 0; n < b.N; n++ {
		w := Worktree{Path: filepath.Join(dir, ".pm-worktrees", "tk-"+strconv.Itoa(n)), Branch: BranchPrefix + "tk-" + strconv.Itoa(n), Base: tip, Into: "refs/heads/main"}
		if err := AddWorktree(p, w); err != nil {
			b.Fatal(err)
		}
		b.StopTimer()
		if err := RemoveWorktree(p, w, false); err != nil {
			b.Fatal(err)
		}
		b.StartTimer()
	}
}

// BenchmarkAddWorktree10kFromSpare: AddWorktree taking a spare made ahead
// (PrepareSpare, untimed, as the supervisor makes it off the command's
// path) of the commit before main moved by benchChanged files: the
// spare's check (every file's stat), the rename, the changed files and
// the index.
func BenchmarkAddWorktree10kFromSpare(b *testing.B) {
	dir := benchRepo(b)
	p := benchPin(b, dir)
	wdir := filepath.Join(dir, ".pm-worktrees")
	b.ResetTimer()
	for n := 0; n < b.N; n++ {
		b.StopTimer()
		_, old, err := StartPoint(p, "")
		if err != nil {
			b.Fatal(err)
		}
		if err := PrepareSpare(p, wdir, old); err != nil {
			b.Fatal(err)
		}
		touch(b, dir, 2*n)
		gitRun(b, dir, "add", "-A")
		gitRun(b, dir, "commit", "-q", "-m", "main "+strconv.Itoa(n))
		_, tip, err := StartPoint(p, "")
		if err != nil {
			b.Fatal(err)
		}
		w := Worktree{Path: filepath.Join(wdir, "tk-"+strconv.Itoa(n)), Branch: BranchPrefix + "tk-" + strconv.Itoa(n), Base: tip, Into: "refs/heads/main"}
		b.StartTimer()
		if err := AddWorktree(p, w); err != nil {
			b.Fatal(err)
		}
		b.StopTimer()
		if SpareCommit(wdir) != "" {
			b.Fatal("the spare was not taken")
		}
		if err := RemoveWorktree(p, w, false); err != nil {
			b.Fatal(err)
		}
		b.StartTimer()
	}
}

// BenchmarkGitWorktreeAdd10k is the baseline: `git worktree add -b`.
func BenchmarkGitWorktreeAdd10k(b *testing.B) {
	dir := benchRepo(b)
	b.ResetTimer()
	for n := 0; n < b.N; n++ {
		path := filepath.Join(dir, ".pm-worktrees", "g-"+strconv.Itoa(n))
		gitRun(b, dir, "worktree", "add", "-q", "-b", "g/"+strconv.Itoa(n), path)
		b.StopTimer()
		gitRun(b, dir, "worktree", "remove", "--force", path)
		gitRun(b, dir, "branch", "-q", "-D", "g/"+strconv.Itoa(n))
		b.StartTimer()
	}
}

// benchTask makes a worktree with benchChanged files changed in it, and,
// so that the merge is a real three-way one, main moved by another commit.
func benchTask(b *testing.B, dir string, p Pin, n int) Worktree {
	b.Helper()
	_, tip, err := StartPoint(p, "")
	if err != nil {
		b.Fatal(err)
	}
	w := Worktree{Path: filepath.Join(dir, ".pm-worktrees", "tk-"+strconv.Itoa(n)), Branch: BranchPrefix + "tk-" + strconv.Itoa(n), Base: tip, Into: "refs/heads/main"}
	if err := AddWorktree(p, w); err != nil {
		b.Fatal(err)
	}
	touch(b, w.Path, 2*n)
	write(b, dir, fmt.Sprintf("main-%d.txt", n), "main moved\n")
	gitRun(b, dir, "add", "-A")
	gitRun(b, dir, "commit", "-q", "-m", "main "+strconv.Itoa(n))
	return w
}

// BenchmarkDoneMerge10k: what pm done does with a worktree: commit its 10
// changed files on its branch, then the three-way merge into main with the
// checkout's files updated.
func BenchmarkDoneMerge10k(b *testing.B) {
	dir := benchRepo(b)
	p := benchPin(b, dir)
	now := time.Now()
	b.ResetTimer()
	for n := 0; n < b.N; n++ {
		b.StopTimer()
		w := benchTask(b, dir, p, n)
		wp, err := WorktreePin(p, w)
		if err != nil {
			b.Fatal(err)
		}
		b.StartTimer()
		res, err := CommitPinned(w.Path, &wp, stateDir, "task "+strconv.Itoa(n), now, Options{})
		if err != nil || res.Files != benchChanged {
			b.Fatalf("commit: %+v %v", res, err)
		}
		m, err := Merge(p, w.Branch, w.Into, stateDir, "merge "+strconv.Itoa(n), now, FavorNone)
		if err != nil || m.FastForward || len(m.Merged) != benchChanged {
			b.Fatalf("merge: %+v %v", m, err)
		}
		b.StopTimer()
		if err := RemoveWorktree(p, w, false); err != nil {
			b.Fatal(err)
		}
		b.StartTimer()
	}
}

// BenchmarkGitCommitMerge10k is the baseline: `git add -A && git commit`
// in the worktree, then `git merge --no-edit` in the checkout.
func BenchmarkGitCommitMerge10k(b *testing.B) {
	dir := benchRepo(b)
	p := benchPin(b, dir)
	b.ResetTimer()
	for n := 0; n < b.N; n++ {
		b.StopTimer()
		w := benchTask(b, dir, p, n)
		b.StartTimer()
		gitRun(b, w.Path, "add", "-A")
		gitRun(b, w.Path, "commit", "-q", "-m", "task "+strconv.Itoa(n))
		gitRun(b, dir, "merge", "-q", "--no-edit", "pm/tk-"+strconv.Itoa(n))
		b.StopTimer()
		if err := RemoveWorktree(p, w, false); err != nil {
			b.Fatal(err)
		}
		b.StartTimer()
	}
}

// BenchmarkWriteFiles10kFloor is the floor under both: the same 10,000
// files (the same directories and bytes as benchRepo) created with
// os.WriteFile by as many writers as a checkout uses, and nothing else (no
// object read, no index, no branch). What a checkout costs above it is
// pm's; what it costs at all is the file system's.
func BenchmarkWriteFiles10kFloor(b *testing.B) {
	for n := 0; n < b.N; n++ {
		b.StopTimer()
		dir := b.TempDir()
		b.StartTimer()
		for d := range benchDirs {
			if err := os.Mkdir(filepath.Join(dir, "pkg"+strconv.Itoa(d)), 0o777); err != nil {
				b.Fatal(err)
			}
		}
		var wg sync.WaitGroup
		next := make(chan int)
		for range checkoutWorkers {
			wg.Go(func() {
				for i := range next {
					data := fmt.Sprintf("file %d\n%s\n", i, "some content to make it a realistic little source file")
					if err := os.WriteFile(filepath.Join(dir, benchPath(i)), []byte(data), 0o666); err != nil {
						b.Error(err)
					}
				}
			})
		}
		for i := range benchFiles {
			next <- i
		}
		close(next)
		wg.Wait()
	}
}

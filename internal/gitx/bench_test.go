package gitx

import (
	"fmt"
	"os/exec"
	"path/filepath"
	"strconv"
	"testing"
	"time"
)

const (
	benchFiles   = 10_000
	benchDirs    = 100
	benchChanged = 10
)

// benchRepo makes a repository with benchFiles committed files spread over
// benchDirs directories, plus an ignored state directory.
func benchRepo(b *testing.B) string {
	b.Helper()
	needGit(b)
	isolate(b)
	dir := b.TempDir()
	initRepo(b, dir)
	run(b, dir, "config", "user.name", "Bench")
	run(b, dir, "config", "user.email", "bench@example.com")
	// No background `git gc --auto` racing with the measurements.
	run(b, dir, "config", "gc.auto", "0")
	for i := range benchFiles {
		write(b, dir, benchPath(i), fmt.Sprintf("file %d\n%s\n", i, "some content to make it a realistic little source file"))
	}
	// pm writes this; the git binary needs it to leave the state alone.
	write(b, dir, stateDir+"/.gitignore", "*\n")
	write(b, dir, stateDir+"/store.jsonl", "{}\n")
	commitAll(b, dir)
	return dir
}

func benchPath(i int) string {
	return filepath.Join("pkg"+strconv.Itoa(i%benchDirs), "file"+strconv.Itoa(i)+".go")
}

// touch changes benchChanged files (spread over directories) for round n.
func touch(b *testing.B, dir string, n int) {
	for k := range benchChanged {
		i := (n*benchChanged + k*997) % benchFiles
		write(b, dir, benchPath(i), fmt.Sprintf("file %d changed in round %d\n", i, n))
	}
	write(b, dir, stateDir+"/store.jsonl", fmt.Sprintf("{\"round\":%d}\n", n))
}

// BenchmarkCommit10k measures Commit on a 10,000-file repository in which
// 10 files changed.
func BenchmarkCommit10k(b *testing.B) {
	dir := benchRepo(b)
	now := time.Now()
	b.ResetTimer()
	for n := 0; n < b.N; n++ {
		b.StopTimer()
		touch(b, dir, n)
		b.StartTimer()
		res, err := Commit(dir, stateDir, "bench "+strconv.Itoa(n), now)
		if err != nil {
			b.Fatal(err)
		}
		if res.Hash == "" || res.Files != benchChanged {
			b.Fatalf("round %d: %+v", n, res)
		}
	}
}

// BenchmarkGitCLI10k is the baseline: `git add -A && git commit` with the
// git binary on the same repository and changes.
func BenchmarkGitCLI10k(b *testing.B) {
	dir := benchRepo(b)
	b.ResetTimer()
	for n := 0; n < b.N; n++ {
		b.StopTimer()
		touch(b, dir, n)
		b.StartTimer()
		for _, args := range [][]string{{"add", "-A"}, {"commit", "-q", "-m", "bench " + strconv.Itoa(n)}} {
			cmd := exec.Command("git", args...)
			cmd.Dir = dir
			if out, err := cmd.CombinedOutput(); err != nil {
				b.Fatalf("git %v: %v\n%s", args, err, out)
			}
		}
	}
}

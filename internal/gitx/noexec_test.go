package gitx

import (
	"os"
	"path/filepath"
	"testing"
)

// gitx runs no command a repository names: no git binary (one first on
// PATH is never started), no hook, no fsmonitor, no filter or textconv.
// The markers stay absent through a commit, a pinned commit and a summary.
func TestRunsNothingTheRepositoryNames(t *testing.T) {
	needGit(t)
	isolate(t)
	dir := t.TempDir()
	initRepo(t, dir)
	write(t, dir, "README", "x")
	commitAll(t, dir)
	mark := t.TempDir()
	bin := filepath.Join(mark, "bin")
	write(t, bin, "git", "#!/bin/sh\ntouch "+mark+"/PWNED-gitbinary\nexit 1\n")
	must(t, os.Chmod(filepath.Join(bin, "git"), 0o755))
	t.Setenv("PATH", bin+string(os.PathListSeparator)+os.Getenv("PATH"))
	f, err := os.OpenFile(filepath.Join(dir, ".git", "config"), os.O_APPEND|os.O_WRONLY, 0)
	must(t, err)
	_, err = f.WriteString("[core]\n\tfsmonitor = \"touch " + mark + "/PWNED-fsmonitor\"\n\tsshCommand = \"touch " + mark + "/PWNED-ssh\"\n" +
		"[filter \"evil\"]\n\tclean = \"touch " + mark + "/PWNED-clean; cat\"\n\tprocess = \"touch " + mark + "/PWNED-process\"\n" +
		"[diff \"evil\"]\n\ttextconv = \"touch " + mark + "/PWNED-textconv\"\n")
	must(t, err)
	must(t, f.Close())
	write(t, dir, ".gitattributes", "* filter=evil diff=evil\n")
	for _, h := range []string{"pre-commit", "commit-msg", "post-commit", "post-index-change", "reference-transaction"} {
		write(t, dir, ".git/hooks/"+h, "#!/bin/sh\ntouch "+mark+"/PWNED-hook-"+h+"\n")
		must(t, os.Chmod(filepath.Join(dir, ".git", "hooks", h), 0o755))
	}
	write(t, dir, "work.txt", "work")
	if res, err := Commit(dir, stateDir, "work", testNow); err != nil || res.Hash == "" {
		t.Fatalf("Commit = %+v, %v", res, err)
	}
	p, err := Locate(dir)
	must(t, err)
	write(t, dir, "more.txt", "more")
	if res, err := CommitPinned(dir, &p, stateDir, "more", testNow, Options{}); err != nil || res.Hash == "" {
		t.Fatalf("CommitPinned = %+v, %v", res, err)
	}
	if _, err := LastCommit(dir); err != nil {
		t.Fatal(err)
	}
	ents, err := os.ReadDir(mark)
	must(t, err)
	for _, e := range ents {
		if e.Name() != "bin" {
			t.Errorf("ran a command the repository names: %s", e.Name())
		}
	}
}

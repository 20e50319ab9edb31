package gitx

import (
	"slices"
	"testing"
)

var secretPatterns = []string{".env*", "*.pem", "*.key", "id_*"}

func TestCommitExcludesSecrets(t *testing.T) {
	needGit(t)
	tests := []struct {
		name      string
		tracked   map[string]string // committed before, then changed to "v2"
		untracked []string
		exclude   []string
		committed []string
		excluded  []string
		noChanges bool
	}{
		{
			name:      "secrets left out, the rest committed",
			untracked: []string{"app.go", ".env", ".env.local", "certs/server.pem", "tls.key", "home/.ssh/id_rsa", "id_ed25519.pub", "docs/identity.md"},
			exclude:   secretPatterns,
			committed: []string{"app.go", "docs/identity.md"},
			excluded:  []string{".env", ".env.local", "certs/server.pem", "home/.ssh/id_rsa", "id_ed25519.pub", "tls.key"},
		},
		{
			name:      "only a secret: nothing to commit, still named",
			untracked: []string{".env"},
			exclude:   secretPatterns,
			noChanges: true,
			excluded:  []string{".env"},
		},
		{
			name:      "tracked files are committed even when they match",
			tracked:   map[string]string{".env.example": "v1", "README.md": "v1"},
			untracked: []string{".env"},
			exclude:   secretPatterns,
			committed: []string{".env.example", "README.md"},
			excluded:  []string{".env"},
		},
		{
			name:      "no patterns: everything untracked is committed",
			untracked: []string{".env", "a.txt"},
			committed: []string{".env", "a.txt"},
		},
		{
			name:      "a pattern with a slash anchors at the root",
			untracked: []string{"secrets/a.txt", "x/secrets/b.txt"},
			exclude:   []string{"/secrets/*"},
			committed: []string{"x/secrets/b.txt"},
			excluded:  []string{"secrets/a.txt"},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			isolate(t)
			dir := t.TempDir()
			initRepo(t, dir)
			write(t, dir, "base.txt", "base")
			for p, c := range tt.tracked {
				write(t, dir, p, c)
			}
			commitAll(t, dir)
			for p := range tt.tracked {
				write(t, dir, p, "v2")
			}
			for _, p := range tt.untracked {
				write(t, dir, p, "SECRET=sk-test-0000 or content of "+p)
			}
			res, err := CommitWith(dir, stateDir, "work", testNow, Options{Exclude: tt.exclude})
			if err != nil {
				t.Fatal(err)
			}
			if res.NoChanges != tt.noChanges {
				t.Fatalf("NoChanges = %v; want %v", res.NoChanges, tt.noChanges)
			}
			want := tt.committed
			if want == nil {
				want = []string{}
			}
			if !slices.Equal(res.Committed, want) || res.Files != len(want) {
				t.Errorf("Committed = %q (%d files); want %q", res.Committed, res.Files, want)
			}
			wantEx := tt.excluded
			if wantEx == nil {
				wantEx = []string{}
			}
			if !slices.Equal(res.Excluded, wantEx) {
				t.Errorf("Excluded = %q; want %q", res.Excluded, wantEx)
			}
			if tt.noChanges {
				return
			}
			head := run(t, dir, "ls-tree", "-r", "--name-only", "--full-tree", "HEAD")
			for _, p := range wantEx {
				if slices.Contains(lines(head), p) {
					t.Errorf("%s was committed", p)
				}
			}
		})
	}
}

// Committed lists deletions and modifications as well as additions.
func TestCommitListsPaths(t *testing.T) {
	needGit(t)
	isolate(t)
	dir := t.TempDir()
	initRepo(t, dir)
	write(t, dir, "old.txt", "old")
	write(t, dir, "keep.txt", "v1")
	write(t, dir, "d/gone.txt", "x")
	commitAll(t, dir)
	remove(t, dir, "old.txt")
	remove(t, dir, "d")
	write(t, dir, "keep.txt", "v2")
	write(t, dir, "new/a.txt", "a")
	res, err := CommitWith(dir, stateDir, "work", testNow, Options{})
	if err != nil {
		t.Fatal(err)
	}
	want := []string{"d/gone.txt", "keep.txt", "new/a.txt", "old.txt"}
	if !slices.Equal(res.Committed, want) || res.Files != 4 {
		t.Fatalf("Committed = %q (%d); want %q", res.Committed, res.Files, want)
	}
}

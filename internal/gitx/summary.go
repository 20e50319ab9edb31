package gitx

import (
	"bytes"
	"io"
	"path/filepath"
	"sort"
	"strings"

	"github.com/go-git/go-billy/v5/osfs"
	"github.com/go-git/go-git/v5/config"
	"github.com/go-git/go-git/v5/plumbing"
	"github.com/go-git/go-git/v5/plumbing/cache"
	"github.com/go-git/go-git/v5/plumbing/storer"
	"github.com/go-git/go-git/v5/storage/filesystem"
)

// InitRepository makes dir a git repository (default branch master) unless
// dir already is one (pm demo).
func InitRepository(dir string) error {
	if _, err := openAt(dir); err == nil {
		return nil
	}
	st := filesystem.NewStorage(osfs.New(filepath.Join(dir, ".git")), cache.NewObjectLRUDefault())
	if err := st.Init(); err != nil {
		return err
	}
	cfg := config.NewConfig()
	cfg.Core.IsBare = false
	if err := st.SetConfig(cfg); err != nil {
		return err
	}
	return st.SetReference(plumbing.NewSymbolicReference(plumbing.HEAD, plumbing.Master))
}

// CommitSummary is a commit with the files it changed against its first
// parent and the lines each gained.
type CommitSummary struct {
	Hash    string
	Message string
	Files   []FileChange
}

// FileChange is one changed file: Added counts the lines of the new version
// that the old one did not hold (as a multiset of lines: a line moved within
// the file is not counted).
type FileChange struct {
	Name  string
	Added int
}

// LastCommit summarises the HEAD commit of the repository at dir (pm demo's
// closing lines).
func LastCommit(dir string) (CommitSummary, error) {
	st, err := openAt(dir)
	if err != nil {
		return CommitSummary{}, err
	}
	ref, err := storer.ResolveReference(st, plumbing.HEAD)
	if err != nil {
		return CommitSummary{}, err
	}
	c, err := readCommit(st, ref.Hash())
	if err != nil {
		return CommitSummary{}, err
	}
	newFiles, err := filesOf(st, c.Tree)
	if err != nil {
		return CommitSummary{}, err
	}
	oldFiles := map[string]plumbing.Hash{}
	if len(c.Parents) > 0 {
		pc, err := readCommit(st, c.Parents[0])
		if err != nil {
			return CommitSummary{}, err
		}
		if oldFiles, err = filesOf(st, pc.Tree); err != nil {
			return CommitSummary{}, err
		}
	}
	sum := CommitSummary{Hash: ref.Hash().String(), Message: c.Message}
	for name, h := range newFiles {
		old, had := oldFiles[name]
		if had && old == h {
			continue
		}
		added, err := addedLines(st, old, h, had)
		if err != nil {
			return CommitSummary{}, err
		}
		sum.Files = append(sum.Files, FileChange{Name: name, Added: added})
	}
	for name := range oldFiles {
		if _, ok := newFiles[name]; !ok {
			sum.Files = append(sum.Files, FileChange{Name: name})
		}
	}
	sort.Slice(sum.Files, func(i, j int) bool { return sum.Files[i].Name < sum.Files[j].Name })
	return sum, nil
}

func filesOf(st storer.EncodedObjectStorer, tree plumbing.Hash) (map[string]plumbing.Hash, error) {
	out := map[string]plumbing.Hash{}
	err := walkFiles(st, tree, "", func(name string, e treeEntry) { out[name] = e.Hash })
	return out, err
}

func addedLines(st storer.EncodedObjectStorer, old, cur plumbing.Hash, had bool) (int, error) {
	have := map[string]int{}
	if had {
		lines, err := blobLines(st, old)
		if err != nil {
			return 0, err
		}
		for _, l := range lines {
			have[l]++
		}
	}
	lines, err := blobLines(st, cur)
	if err != nil {
		return 0, err
	}
	n := 0
	for _, l := range lines {
		if have[l] > 0 {
			have[l]--
			continue
		}
		n++
	}
	return n, nil
}

func blobLines(st storer.EncodedObjectStorer, h plumbing.Hash) (_ []string, err error) {
	rd, err := openObject(st, plumbing.BlobObject, h)
	if err != nil {
		return nil, err
	}
	defer closeInto(rd, &err)
	data, err := io.ReadAll(rd)
	if err != nil || len(data) == 0 {
		return nil, err
	}
	return strings.Split(string(bytes.TrimSuffix(data, []byte("\n"))), "\n"), nil
}

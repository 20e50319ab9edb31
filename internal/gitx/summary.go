package gitx

import (
	"bufio"
	"errors"
	"hash/maphash"
	"io"
	"path/filepath"
	"slices"
	"sort"

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

// streamedBlob is the size above which LastCommit streams a blob.
const streamedBlob = 256 << 10

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
	// Blobs over streamedBlob are read from disk as they are used, not
	// loaded whole (go-git's default), and only a little is cached: each
	// object is read once.
	st, err := openAtWith(dir, cache.NewObjectLRU(cache.MiByte), filesystem.Options{LargeObjectThreshold: streamedBlob})
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

// addedLines counts the lines of cur that old (when had) did not hold, as
// multisets of lines. The blobs stream by and only a 64-bit hash of each
// line of old is kept (lineMultiset: about 12 bytes a line, whatever its
// length), so memory grows with old's number of lines, not with either
// file's bytes. The hash is seeded anew on each call: two different lines
// count as one only if their hashes collide.
func addedLines(st storer.EncodedObjectStorer, old, cur plumbing.Hash, had bool) (int, error) {
	seed := maphash.MakeSeed()
	var have lineMultiset
	if had {
		var err error
		if have, err = hashLines(st, old, seed); err != nil {
			return 0, err
		}
	}
	added := 0
	err := eachLineHash(st, cur, seed, func(h uint64) {
		if !have.take(h) {
			added++
		}
	})
	return added, err
}

// lineMultiset is a blob's lines as their sorted distinct hashes, each with
// how many of its lines are left to take.
type lineMultiset struct {
	hashes []uint64
	counts []uint32
}

// hashLines is the lineMultiset of blob h. It reads the blob twice, to
// count its lines and then to hash them into a slice of exactly that size
// (a blob never changes), rather than growing one.
func hashLines(st storer.EncodedObjectStorer, h plumbing.Hash, seed maphash.Seed) (lineMultiset, error) {
	n := 0
	if err := eachLineHash(st, h, seed, func(uint64) { n++ }); err != nil {
		return lineMultiset{}, err
	}
	all := make([]uint64, 0, n)
	if err := eachLineHash(st, h, seed, func(x uint64) { all = append(all, x) }); err != nil {
		return lineMultiset{}, err
	}
	slices.Sort(all)
	distinct := 0
	for i := range all {
		if i == 0 || all[i] != all[i-1] {
			distinct++
		}
	}
	m := lineMultiset{hashes: all[:0], counts: make([]uint32, 0, distinct)}
	for _, x := range all {
		if last := len(m.hashes) - 1; last >= 0 && m.hashes[last] == x {
			m.counts[last]++
			continue
		}
		m.hashes = append(m.hashes, x) // in place, behind the reading
		m.counts = append(m.counts, 1)
	}
	return m, nil
}

// take removes one line hashed h, reporting whether there was one.
func (m *lineMultiset) take(h uint64) bool {
	i, found := slices.BinarySearch(m.hashes, h)
	if !found || m.counts[i] == 0 {
		return false
	}
	m.counts[i]--
	return true
}

// eachLineHash calls fn with the hash of each line of blob h, streamed: the
// lines are those split at "\n" after dropping one final "\n" (an empty
// blob has none), however long.
func eachLineHash(st storer.EncodedObjectStorer, h plumbing.Hash, seed maphash.Seed, fn func(uint64)) (err error) {
	rd, err := openObject(st, plumbing.BlobObject, h)
	if err != nil {
		return err
	}
	defer closeInto(rd, &err)
	br := bufio.NewReaderSize(rd, 64<<10)
	var line maphash.Hash
	line.SetSeed(seed)
	started := false // bytes of the current line were hashed
	for {
		frag, err := br.ReadSlice('\n')
		switch {
		case err == nil:
			line.Write(frag[:len(frag)-1])
			fn(line.Sum64())
			line.Reset()
			started = false
		case errors.Is(err, bufio.ErrBufferFull):
			line.Write(frag)
			started = true
		case errors.Is(err, io.EOF):
			if started || len(frag) > 0 {
				line.Write(frag)
				fn(line.Sum64())
			}
			return nil
		default:
			return err
		}
	}
}

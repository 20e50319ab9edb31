package gitx

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"sync"
	"syscall"

	"github.com/go-git/go-git/v5/plumbing"
	"github.com/go-git/go-git/v5/plumbing/filemode"
	"github.com/go-git/go-git/v5/plumbing/format/index"
	"github.com/go-git/go-git/v5/plumbing/storer"

	"github.com/plasmodium/pm/internal/crashpoint"
)

// A spare is a checkout made ahead of need, beside the worktrees (in the
// directory that holds them): the files of one commit in dir/.spare, their
// index entries (with stat data) in dir/.spare.index, and that commit's
// hash in dir/.spare.commit, written last: a spare without it is a
// leftover. AddWorktree takes it (one rename) instead of writing every
// file, then writes only the files that differ between the spare's commit
// and the worktree's, so a worktree of 10,000 files costs what its
// changed files cost. Creating files is the file system's floor, paid by
// PrepareSpare in the background (the supervisor), not by pm task.
//
// A spare is trusted only as far as it is checked when taken: every file
// in it must be an entry of its index with the same size, mtime, ctime
// and inode (a write, even one that restores the mtime, changes the
// ctime), and nothing else may be there; otherwise it is thrown away and
// the worktree checked out whole.
const (
	spareName       = ".spare"
	spareIndexName  = ".spare.index"
	spareCommitName = ".spare.commit"
	spareTmpPrefix  = ".spare-tmp-"
)

// IsSpare reports whether name (an entry of the worktrees directory) is
// part of a spare, made or in the making: never a worktree.
func IsSpare(name string) bool {
	return name == spareName || name == spareIndexName || name == spareCommitName || strings.HasPrefix(name, spareTmpPrefix)
}

// SpareCommit is the commit of the complete spare in dir, or "".
func SpareCommit(dir string) string {
	b, err := readSmallFile(filepath.Join(dir, spareCommitName), 128)
	if err != nil {
		return ""
	}
	return strings.TrimSpace(string(b))
}

// PrepareSpare makes a spare of commit at in dir (the worktrees
// directory) unless one is there. The files are written outside the
// repository's lock, into a directory of this process's own; only the
// renames that make them the spare hold it.
func PrepareSpare(p Pin, dir, at string) error {
	if SpareCommit(dir) != "" {
		return nil
	}
	if err := ignoreAll(dir); err != nil {
		return err
	}
	sweepSpareTemps(dir)
	st, _, err := openPin(p)
	if err != nil {
		return err
	}
	head, err := readCommit(st, plumbing.NewHash(at))
	if err != nil {
		return fmt.Errorf("gitx: spare: read %s: %w", at, err)
	}
	tmp := filepath.Join(dir, spareTmpPrefix+strconv.Itoa(os.Getpid()))
	if err := os.RemoveAll(tmp); err != nil {
		return fmt.Errorf("gitx: spare: %w", err)
	}
	defer os.RemoveAll(tmp)
	defer os.Remove(tmp + ".index")
	if err := os.Mkdir(tmp, 0o777); err != nil {
		return fmt.Errorf("gitx: spare: %w", err)
	}
	entries, err := checkoutTree(st, tmp, head.Tree)
	if err != nil {
		return err
	}
	if err := writeIndexFile(tmp+".index", entries); err != nil {
		return err
	}
	unlock, err := lockRepository(common(p))
	if err != nil {
		return err
	}
	defer unlock()
	if SpareCommit(dir) != "" {
		return nil // another made one meanwhile
	}
	if err := removeSpare(dir); err != nil {
		return err
	}
	if err := os.Rename(tmp, filepath.Join(dir, spareName)); err != nil {
		return fmt.Errorf("gitx: spare: %w", err)
	}
	if err := os.Rename(tmp+".index", filepath.Join(dir, spareIndexName)); err != nil {
		return fmt.Errorf("gitx: spare: %w", err)
	}
	crashpoint.Hit("gitx.spare.files")
	return writeAtomic(filepath.Join(dir, spareCommitName), []byte(at+"\n"))
}

// RemoveSpare removes dir's spare, whole or left half-made (pm reset).
func RemoveSpare(p Pin, dir string) error {
	unlock, err := lockRepository(common(p))
	if err != nil {
		return err
	}
	defer unlock()
	sweepSpareTemps(dir)
	return removeSpare(dir)
}

// removeSpare removes the spare's marker first (so a crash leaves a
// leftover, never a spare with missing files), then its files.
func removeSpare(dir string) error {
	for _, name := range []string{spareCommitName, spareIndexName, spareName} {
		if err := os.RemoveAll(filepath.Join(dir, name)); err != nil {
			return fmt.Errorf("gitx: spare: %w", err)
		}
	}
	return nil
}

// sweepSpareTemps removes the spares in the making of processes that are
// gone (a PrepareSpare killed part-way).
func sweepSpareTemps(dir string) {
	ents, _ := os.ReadDir(dir)
	for _, e := range ents {
		rest, ok := strings.CutPrefix(e.Name(), spareTmpPrefix)
		if !ok {
			continue
		}
		pid, err := strconv.Atoi(strings.TrimSuffix(rest, ".index"))
		if err != nil || pid != os.Getpid() && syscall.Kill(pid, 0) == syscall.ESRCH {
			os.RemoveAll(filepath.Join(dir, e.Name()))
		}
	}
}

// writeIndexFile writes entries as a git index file at name.
func writeIndexFile(name string, entries []*index.Entry) error {
	f, err := os.Create(name)
	if err != nil {
		return fmt.Errorf("gitx: spare: %w", err)
	}
	c := &committer{idx: &index.Index{Version: 2}}
	err = c.writeIndex(f, entries)
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	return err
}

// takeSpare moves dir's spare to path (which must not exist) and turns it
// into a checkout of tree, returning its index entries; ok is false (and
// nothing is left at path) when there is no spare or it is not what its
// index says. The caller holds the repository's lock.
func takeSpare(st storer.EncodedObjectStorer, dir, path string, tree plumbing.Hash) (entries []*index.Entry, ok bool, err error) {
	at := SpareCommit(dir)
	if at == "" {
		return nil, false, removeSpare(dir) // a leftover, if anything
	}
	old, err := readCommit(st, plumbing.NewHash(at))
	if err != nil {
		return nil, false, removeSpare(dir)
	}
	idx, err := readIndexFile(filepath.Join(dir, spareIndexName))
	if err != nil {
		return nil, false, removeSpare(dir)
	}
	// The marker goes first: from here the spare is this worktree's.
	if err := os.Remove(filepath.Join(dir, spareCommitName)); err != nil {
		return nil, false, fmt.Errorf("gitx: spare: %w", err)
	}
	if err := os.Rename(filepath.Join(dir, spareName), path); err != nil {
		return nil, false, removeSpare(dir)
	}
	os.Remove(filepath.Join(dir, spareIndexName))
	crashpoint.Hit("gitx.spare.taken")
	if !spareIntact(path, idx.Entries) {
		return nil, false, os.RemoveAll(path)
	}
	entries, err = switchTree(st, path, idx.Entries, old.Tree, tree)
	if err != nil {
		if rerr := os.RemoveAll(path); rerr != nil {
			return nil, false, rerr
		}
		return nil, false, nil // checked out whole instead
	}
	return entries, true, nil
}

// readIndexFile reads a git index file.
func readIndexFile(name string) (*index.Index, error) {
	f, err := os.Open(name)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	idx := &index.Index{}
	if err := index.NewDecoder(f).Decode(idx); err != nil {
		return nil, err
	}
	return idx, nil
}

// spareIntact reports whether the files under root are exactly entries,
// each unchanged since it was written (size, mtime, ctime and inode).
func spareIntact(root string, entries []*index.Entry) bool {
	want := make(map[string]*index.Entry, len(entries))
	for _, e := range entries {
		if e.Mode == filemode.Submodule {
			return false // a directory: not checked here, so not taken
		}
		want[e.Name] = e
	}
	seen := 0
	err := filepath.WalkDir(root, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() {
			return nil
		}
		rel, _ := filepath.Rel(root, p)
		e := want[filepath.ToSlash(rel)]
		if e == nil {
			return errors.New("not in the index")
		}
		fi, err := d.Info()
		if err != nil {
			return err
		}
		got := &index.Entry{}
		fillStat(got, fi)
		if got.Size != e.Size || !got.ModifiedAt.Equal(e.ModifiedAt) || !got.CreatedAt.Equal(e.CreatedAt) || got.Inode != e.Inode {
			return errors.New("changed")
		}
		seen++
		return nil
	})
	return err == nil && seen == len(want)
}

// switchTree turns root, a checkout of tree from whose index entries are
// entries, into a checkout of tree to: the files that differ are removed
// and written again (a file in the way of a directory, or an emptied
// directory in the way of a file, goes first). It returns to's entries.
func switchTree(st storer.EncodedObjectStorer, root string, entries []*index.Entry, from, to plumbing.Hash) ([]*index.Entry, error) {
	if from == to {
		return entries, nil
	}
	want := map[string]treeEntry{}
	if !to.IsZero() {
		if err := walkFiles(st, to, "", func(name string, e treeEntry) { want[name] = e }); err != nil {
			return nil, err
		}
	}
	r, err := os.OpenRoot(root)
	if err != nil {
		return nil, err
	}
	defer r.Close()
	kept := make([]*index.Entry, 0, len(want))
	have := map[string]bool{}
	dirs := map[string]bool{}
	for _, e := range entries {
		if w, ok := want[e.Name]; ok && w.Hash == e.Hash && w.Mode == e.Mode {
			kept = append(kept, e)
			have[e.Name] = true
			continue
		}
		if err := r.Remove(e.Name); err != nil && !errors.Is(err, fs.ErrNotExist) {
			return nil, err
		}
		for d := filepathDir(e.Name); d != ""; d = filepathDir(d) {
			dirs[d] = true
		}
	}
	// Emptied directories go, deepest first (one may stand where a file
	// is to be written).
	var emptied []string
	for d := range dirs {
		emptied = append(emptied, d)
	}
	sort.Slice(emptied, func(i, j int) bool { return len(emptied[i]) > len(emptied[j]) })
	for _, d := range emptied {
		_ = r.Remove(d) // fails while it still holds something: kept
	}
	var files []checkoutFile
	for name, e := range want {
		if !have[name] {
			if err := checkName(name); err != nil {
				return nil, err
			}
			files = append(files, checkoutFile{name, e})
		}
	}
	sort.Slice(files, func(i, j int) bool { return files[i].name < files[j].name })
	made := map[string]bool{"": true}
	var buf []byte
	var mu sync.Mutex // writeEntryLocked's, uncontended here
	for _, f := range files {
		if err := mkdirs(r, made, f.name); err != nil {
			return nil, err
		}
		var fi os.FileInfo
		if buf, fi, err = writeEntryLocked(st, &mu, r, f.name, f.e, buf); err != nil {
			return nil, err
		}
		e := &index.Entry{Name: f.name, Hash: f.e.Hash, Mode: f.e.Mode}
		if fi != nil {
			fillStat(e, fi)
		}
		kept = append(kept, e)
	}
	sort.Slice(kept, func(i, j int) bool { return kept[i].Name < kept[j].Name })
	return kept, nil
}

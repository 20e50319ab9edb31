package gitx

import (
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"sync"
	"syscall"

	"github.com/go-git/go-git/v5/plumbing"
	"github.com/go-git/go-git/v5/plumbing/cache"
	"github.com/go-git/go-git/v5/plumbing/filemode"
	"github.com/go-git/go-git/v5/plumbing/format/index"
	"github.com/go-git/go-git/v5/plumbing/storer"
	"github.com/go-git/go-git/v5/storage/filesystem"

	"github.com/plasmodium/pm/internal/crashpoint"
	"github.com/plasmodium/pm/internal/gitx/pin"
)

// Worktree is a task's linked work tree as its task records it.
type Worktree = pin.Worktree

// ErrDetached: HEAD names no branch, so a task has nothing to merge into.
var ErrDetached = errors.New("HEAD is detached: no branch to merge a task into")

// BranchPrefix is the prefix of every task branch (refs/heads/pm/tk-ID).
const BranchPrefix = "refs/heads/pm/"

// common is the directory that holds p's objects, refs and worktrees/.
func common(p Pin) string {
	if p.CommonDir != "" {
		return p.CommonDir
	}
	return p.GitDir
}

// openPin opens the repository at p's recorded directories.
func openPin(p Pin) (*filesystem.Storage, repoDirs, error) {
	dirs := repoDirs{git: p.GitDir, common: p.CommonDir}
	st, err := openDirs(dirs, cache.NewObjectLRUDefault(), filesystem.Options{})
	return st, dirs, err
}

// refHash is the commit branch points at (zero: the branch does not
// exist, an unborn branch).
func refHash(st storer.ReferenceStorer, branch string) (plumbing.Hash, error) {
	ref, err := storer.ResolveReference(st, plumbing.ReferenceName(branch))
	if errors.Is(err, plumbing.ErrReferenceNotFound) {
		return plumbing.ZeroHash, nil
	}
	if err != nil {
		return plumbing.ZeroHash, err
	}
	return ref.Hash(), nil
}

// StartPoint is where a task's worktree starts: into's tip, or, for into
// "", the branch p's HEAD names (ErrDetached when it names none) and its
// tip. The tip is "" on an unborn branch (a repository without commits).
func StartPoint(p Pin, into string) (branch, tip string, err error) {
	st, _, err := openPin(p)
	if err != nil {
		return "", "", err
	}
	if into == "" {
		head, err := st.Reference(plumbing.HEAD)
		if err != nil {
			return "", "", err
		}
		if head.Type() != plumbing.SymbolicReference {
			return "", "", ErrDetached
		}
		into = head.Target().String()
	}
	h, err := refHash(st, into)
	if err != nil {
		return "", "", err
	}
	if h.IsZero() {
		return into, "", nil
	}
	return into, h.String(), nil
}

// WorktreePin is the Pin of w, a worktree of p, as AddWorktree made it:
// its own git dir under p's common dir. Committing through it (CommitPinned)
// refuses a worktree whose .git was since pointed elsewhere.
func WorktreePin(p Pin, w Worktree) (Pin, error) {
	admin := filepath.Join(common(p), "worktrees", filepath.Base(w.Path))
	wp := Pin{WorkTree: w.Path, DotGit: "file", GitDir: admin, CommonDir: common(p)}
	var st syscall.Stat_t
	if err := syscall.Stat(admin, &st); err != nil {
		return Pin{}, err
	}
	wp.Dev, wp.Ino = uint64(st.Dev), st.Ino
	return wp, nil
}

// AddWorktree makes w, a linked work tree of p (git's layout: an admin dir
// <common>/worktrees/NAME with gitdir, commondir, HEAD and index, and a
// .git file in w.Path naming it) on branch w.Branch, made at w.Base if it
// does not exist, with its files and index checked out. It is idempotent:
// a complete worktree is left as it is, and what a killed run left
// half-made is removed and made again. The directory holding w.Path gets a
// .gitignore of "*", so neither git nor a commit of the main checkout sees
// the worktrees. The steps go so that every crash leaves what
// `git worktree prune` removes (the admin dir names a .git that does not
// exist until the last step).
func AddWorktree(p Pin, w Worktree) error {
	if !strings.HasPrefix(w.Branch, "refs/heads/") || !filepath.IsAbs(w.Path) {
		return fmt.Errorf("gitx: worktree %s on %q: not an absolute path and a branch", w.Path, w.Branch)
	}
	admin := filepath.Join(common(p), "worktrees", filepath.Base(w.Path))
	if worktreeComplete(admin, w.Path) {
		return nil // without the lock: run for every live task by pm's commands
	}
	unlock, err := lockRepository(common(p))
	if err != nil {
		return err
	}
	defer unlock()
	if worktreeComplete(admin, w.Path) {
		return nil
	}
	if err := removeWorktreeFiles(admin, w.Path); err != nil {
		return err
	}
	if err := ignoreAll(filepath.Dir(w.Path)); err != nil {
		return err
	}
	st, dirs, err := openPin(p)
	if err != nil {
		return err
	}
	if err := os.MkdirAll(admin, 0o777); err != nil {
		return fmt.Errorf("gitx: worktree: %w", err)
	}
	for _, f := range []struct{ name, text string }{
		{"gitdir", filepath.Join(w.Path, ".git")},
		{"commondir", "../.."},
		{"HEAD", "ref: " + w.Branch},
	} {
		if err := os.WriteFile(filepath.Join(admin, f.name), []byte(f.text+"\n"), 0o666); err != nil {
			return fmt.Errorf("gitx: worktree: %w", err)
		}
	}
	crashpoint.Hit("gitx.worktree.admin")
	tip, err := refHash(st, w.Branch)
	if err != nil {
		return err
	}
	if tip.IsZero() && w.Base != "" {
		tip = plumbing.NewHash(w.Base)
		c := &committer{st: st, dotfs: st.Filesystem(), dirs: dirs}
		if err := c.updateRef(plumbing.ReferenceName(w.Branch), plumbing.ZeroHash, tip); err != nil {
			return err
		}
	}
	crashpoint.Hit("gitx.worktree.branch")
	var tree plumbing.Hash
	if !tip.IsZero() {
		head, err := readCommit(st, tip)
		if err != nil {
			return fmt.Errorf("gitx: worktree: read %s: %w", tip, err)
		}
		tree = head.Tree
	}
	// A spare made ahead (PrepareSpare) is taken when there is one: only
	// the files that differ from its commit are written.
	entries, took, err := takeSpare(st, filepath.Dir(w.Path), w.Path, tree)
	if err != nil {
		return err
	}
	if !took {
		if err := os.MkdirAll(w.Path, 0o777); err != nil {
			return fmt.Errorf("gitx: worktree: %w", err)
		}
		if entries, err = checkoutTree(st, w.Path, tree); err != nil {
			return err
		}
	}
	wdirs := repoDirs{git: admin, common: common(p)}
	c := &committer{st: st, idx: &index.Index{Version: 2}}
	lock, err := takeLock(wdirs.path("index"))
	if err != nil {
		return err
	}
	if err := c.writeIndex(lock.f, entries); err != nil {
		lock.abort()
		return err
	}
	if err := lock.commit(); err != nil {
		return fmt.Errorf("gitx: worktree index: %w", err)
	}
	crashpoint.Hit("gitx.worktree.files")
	return writeAtomic(filepath.Join(w.Path, ".git"), []byte("gitdir: "+admin+"\n"))
}

// worktreeComplete reports whether the worktree at path is whole: its .git
// file (written last) names admin, and admin names it back.
func worktreeComplete(admin, path string) bool {
	g, err := readGitdirFile(filepath.Join(path, ".git"))
	if err != nil || g != admin {
		return false
	}
	b, err := readSmallFile(filepath.Join(admin, "gitdir"), 64<<10)
	return err == nil && strings.TrimSpace(string(b)) == filepath.Join(path, ".git")
}

// RemoveWorktree removes w (its .git file first, so that a crash leaves an
// incomplete worktree, then its admin dir and its files) and, unless
// keepBranch, its branch. What is already gone is not an error.
func RemoveWorktree(p Pin, w Worktree, keepBranch bool) error {
	unlock, err := lockRepository(common(p))
	if err != nil {
		return err
	}
	defer unlock()
	admin := filepath.Join(common(p), "worktrees", filepath.Base(w.Path))
	if err := removeWorktreeFiles(admin, w.Path); err != nil {
		return err
	}
	crashpoint.Hit("gitx.worktree.removed")
	if keepBranch {
		return nil
	}
	return deleteBranch(p, w.Branch)
}

// removeWorktreeFiles removes a worktree's .git file, admin dir and files.
func removeWorktreeFiles(admin, path string) error {
	if err := os.Remove(filepath.Join(path, ".git")); err != nil && !errors.Is(err, fs.ErrNotExist) && !isNotDir(err) {
		return fmt.Errorf("gitx: remove worktree: %w", err)
	}
	for _, p := range []string{admin, path} {
		if err := os.RemoveAll(p); err != nil {
			return fmt.Errorf("gitx: remove worktree: %w", err)
		}
	}
	return nil
}

// deleteBranch removes branch (loose or packed) and its reflog.
func deleteBranch(p Pin, branch string) error {
	if !strings.HasPrefix(branch, BranchPrefix) {
		return fmt.Errorf("gitx: %s is not a task branch", branch)
	}
	st, dirs, err := openPin(p)
	if err != nil {
		return err
	}
	// A lock on the branch a killed pm left (its creation, or a commit on
	// it) goes first; another git process's is an error.
	if err := breakStale(dirs.path(branch)); err != nil {
		return err
	}
	if err := st.RemoveReference(plumbing.ReferenceName(branch)); err != nil && !errors.Is(err, plumbing.ErrReferenceNotFound) {
		return fmt.Errorf("gitx: delete %s: %w", branch, err)
	}
	os.Remove(dirs.path("logs/" + branch))
	return nil
}

// PruneWorktrees removes the worktrees under dir (the directory pm keeps
// them in) that keep does not want, as `git worktree prune` would once
// their files are gone: admin dirs whose gitdir lies under dir, and
// entries of dir, with their branches when deleteBranch says so. It
// returns the paths removed.
func PruneWorktrees(p Pin, dir string, keep func(path string) bool, dropBranch func(path string) string) ([]string, error) {
	var removed []string
	adminRoot := filepath.Join(common(p), "worktrees")
	ents, err := os.ReadDir(adminRoot)
	if err != nil && !errors.Is(err, fs.ErrNotExist) {
		return nil, err
	}
	seen := map[string]bool{}
	for _, e := range ents {
		b, err := readSmallFile(filepath.Join(adminRoot, e.Name(), "gitdir"), 64<<10)
		if err != nil {
			continue
		}
		path := filepath.Dir(strings.TrimSpace(string(b)))
		if filepath.Dir(path) != dir || keep(path) {
			continue
		}
		seen[path] = true
		removed = append(removed, path)
	}
	des, err := os.ReadDir(dir)
	if err != nil && !errors.Is(err, fs.ErrNotExist) {
		return nil, err
	}
	for _, e := range des {
		path := filepath.Join(dir, e.Name())
		if e.Name() == ".gitignore" || IsSpare(e.Name()) || seen[path] || keep(path) {
			continue
		}
		removed = append(removed, path)
	}
	sort.Strings(removed)
	for _, path := range removed {
		if err := RemoveWorktree(p, Worktree{Path: path, Branch: dropBranch(path)}, dropBranch(path) == ""); err != nil {
			return removed, err
		}
	}
	return removed, nil
}

// ignoreAll makes dir with a .gitignore of "*": nothing in it is seen by
// git status or committed from the checkout that holds it.
func ignoreAll(dir string) error {
	if err := os.MkdirAll(dir, 0o777); err != nil {
		return fmt.Errorf("gitx: worktree: %w", err)
	}
	p := filepath.Join(dir, ".gitignore")
	if _, err := os.Lstat(p); err == nil {
		return nil
	}
	return writeAtomic(p, []byte("*\n"))
}

// writeAtomic writes name whole or not at all (temp file, fsync, rename).
func writeAtomic(name string, data []byte) error {
	f, err := os.CreateTemp(filepath.Dir(name), ".pm-tmp-*")
	if err != nil {
		return fmt.Errorf("gitx: write %s: %w", name, err)
	}
	_, err = f.Write(data)
	if err == nil {
		err = f.Sync()
	}
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err == nil {
		err = os.Rename(f.Name(), name)
	}
	if err != nil {
		os.Remove(f.Name())
		return fmt.Errorf("gitx: write %s: %w", name, err)
	}
	return nil
}

// checkoutFile is one file of a tree to write into a work tree.
type checkoutFile struct {
	name string
	e    treeEntry
}

// checkoutTree writes every file of tree (zero: none) into root, which
// must hold none of them, through an os.Root (a name never leads out of
// root), and returns their index entries with stat data, sorted.
func checkoutTree(st storer.EncodedObjectStorer, root string, tree plumbing.Hash) ([]*index.Entry, error) {
	var files []checkoutFile
	if !tree.IsZero() {
		if err := walkFiles(st, tree, "", func(name string, e treeEntry) {
			files = append(files, checkoutFile{name, e})
		}); err != nil {
			return nil, fmt.Errorf("gitx: checkout: %w", err)
		}
	}
	r, err := os.OpenRoot(root)
	if err != nil {
		return nil, fmt.Errorf("gitx: checkout: %w", err)
	}
	defer r.Close()
	made := map[string]bool{"": true}
	for _, f := range files {
		if err := checkName(f.name); err != nil {
			return nil, err
		}
		if err := mkdirs(r, made, f.name); err != nil {
			return nil, err
		}
	}
	// The files are written by a few workers (a checkout waits on the
	// file system more than on the CPU), a run of one directory's files at
	// a time: the directory is opened once per run, so each file costs one
	// openat of its own name instead of a walk from the top (and its stat
	// is an fstat of the open file). The object store is read by one
	// worker at a time (go-git's storage is not safe for concurrent reads).
	entries := make([]*index.Entry, len(files))
	var mu sync.Mutex
	var wg sync.WaitGroup
	errc := make(chan error, checkoutWorkers)
	next := make(chan checkoutRun)
	for range checkoutWorkers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			var buf []byte
			for run := range next {
				var err error
				if buf, err = writeRun(st, &mu, r, files, entries, run, buf); err != nil {
					errc <- err
					return
				}
			}
		}()
	}
	var werr error
feed:
	for _, run := range checkoutRuns(files) {
		select {
		case next <- run:
		case werr = <-errc:
			break feed
		}
	}
	close(next)
	wg.Wait()
	if werr == nil {
		select {
		case werr = <-errc:
		default:
		}
	}
	if werr != nil {
		return nil, werr
	}
	sort.Slice(entries, func(i, j int) bool { return entries[i].Name < entries[j].Name })
	return entries, nil
}

// checkoutRun is files[from:to], all in directory dir.
type checkoutRun struct {
	dir      string
	from, to int
}

// checkoutRunLen bounds a run, so one large directory is still shared
// between the workers.
const checkoutRunLen = 64

// checkoutRuns splits files into runs of consecutive files of one
// directory, at most checkoutRunLen long.
func checkoutRuns(files []checkoutFile) []checkoutRun {
	var runs []checkoutRun
	for i, f := range files {
		dir := filepathDir(f.name)
		if n := len(runs); n > 0 && runs[n-1].dir == dir && runs[n-1].to == i && i-runs[n-1].from < checkoutRunLen {
			runs[n-1].to++
			continue
		}
		runs = append(runs, checkoutRun{dir: dir, from: i, to: i + 1})
	}
	return runs
}

// writeRun writes one run's files through their directory, opened once
// under r (so still never leading out of it), and sets their entries.
func writeRun(st storer.EncodedObjectStorer, mu *sync.Mutex, r *os.Root, files []checkoutFile, entries []*index.Entry, run checkoutRun, buf []byte) ([]byte, error) {
	d := r
	if run.dir != "" {
		var err error
		if d, err = r.OpenRoot(run.dir); err != nil {
			return buf, fmt.Errorf("gitx: checkout: %w", err)
		}
		defer d.Close()
	}
	for i := run.from; i < run.to; i++ {
		f := files[i]
		base := f.name[len(run.dir):]
		if run.dir != "" {
			base = base[1:]
		}
		e := &index.Entry{Name: f.name, Hash: f.e.Hash, Mode: f.e.Mode}
		var fi os.FileInfo
		var err error
		if buf, fi, err = writeEntryLocked(st, mu, d, base, f.e, buf); err != nil {
			if run.dir != "" {
				err = fmt.Errorf("%w (in %s)", err, run.dir)
			}
			return buf, err
		}
		if f.e.Mode != filemode.Submodule {
			fillStat(e, fi)
		}
		entries[i] = e
	}
	return buf, nil
}

// checkoutWorkers is how many files a checkout writes at once.
const checkoutWorkers = 4

// writeEntryLocked creates name under r as writeEntry does, with the
// object read under mu, and returns what it wrote's stat (nil for a
// submodule's directory).
func writeEntryLocked(st storer.EncodedObjectStorer, mu *sync.Mutex, r *os.Root, name string, e treeEntry, buf []byte) ([]byte, os.FileInfo, error) {
	if e.Mode == filemode.Submodule {
		buf, err := writeEntry(st, r, name, e, buf)
		return buf, nil, err
	}
	mu.Lock()
	data, err := readBlob(st, e.Hash, buf[:0])
	mu.Unlock()
	if err != nil {
		return buf, nil, fmt.Errorf("gitx: checkout %s: %w", name, err)
	}
	fi, err := writeDataStat(r, name, e.Mode, data)
	return data, fi, err
}

// checkName refuses a tree path git itself would not check out: an empty,
// "." or ".." component, or .git in any case.
func checkName(name string) error {
	for _, c := range strings.Split(name, "/") {
		if c == "" || c == "." || c == ".." || strings.EqualFold(c, ".git") {
			return fmt.Errorf("gitx: refusing to check out %q", name)
		}
	}
	return nil
}

// mkdirs makes name's parent directories under r (made memoises them).
func mkdirs(r *os.Root, made map[string]bool, name string) error {
	dir := filepathDir(name)
	if made[dir] {
		return nil
	}
	if err := mkdirs(r, made, dir); err != nil {
		return err
	}
	if err := r.Mkdir(dir, 0o777); err != nil && !errors.Is(err, fs.ErrExist) {
		return fmt.Errorf("gitx: checkout: %w", err)
	}
	made[dir] = true
	return nil
}

// filepathDir is the slash-separated parent of name ("" at the top).
func filepathDir(name string) string {
	i := strings.LastIndexByte(name, '/')
	if i < 0 {
		return ""
	}
	return name[:i]
}

// writeEntry creates name under r as e says: a file with its blob's bytes
// (executable or not), a symbolic link to them, or an empty directory for
// a submodule. buf is reused between calls.
func writeEntry(st storer.EncodedObjectStorer, r *os.Root, name string, e treeEntry, buf []byte) ([]byte, error) {
	if e.Mode == filemode.Submodule {
		if err := r.Mkdir(name, 0o777); err != nil && !errors.Is(err, fs.ErrExist) {
			return buf, fmt.Errorf("gitx: checkout: %w", err)
		}
		return buf, nil
	}
	data, err := readBlob(st, e.Hash, buf[:0])
	if err != nil {
		return buf, fmt.Errorf("gitx: checkout %s: %w", name, err)
	}
	return data, writeData(r, name, e.Mode, data)
}

// writeData creates name under r holding data: a symbolic link to it, or
// a file (executable or not).
func writeData(r *os.Root, name string, mode filemode.FileMode, data []byte) error {
	_, err := writeDataStat(r, name, mode, data)
	return err
}

// writeDataStat is writeData, returning the stat of what it made (taken
// from the open file, after its last write).
func writeDataStat(r *os.Root, name string, mode filemode.FileMode, data []byte) (os.FileInfo, error) {
	if mode == filemode.Symlink {
		if err := r.Symlink(string(data), name); err != nil {
			return nil, fmt.Errorf("gitx: checkout: %w", err)
		}
		fi, err := r.Lstat(name)
		if err != nil {
			return nil, fmt.Errorf("gitx: checkout: %w", err)
		}
		return fi, nil
	}
	perm := os.FileMode(0o666)
	if mode == filemode.Executable {
		perm = 0o777
	}
	f, err := r.OpenFile(name, os.O_CREATE|os.O_EXCL|os.O_WRONLY, perm)
	if err != nil {
		return nil, fmt.Errorf("gitx: checkout: %w", err)
	}
	_, err = f.Write(data)
	var fi os.FileInfo
	if err == nil {
		fi, err = f.Stat()
	}
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		return nil, fmt.Errorf("gitx: checkout %s: %w", name, err)
	}
	return fi, nil
}

// readBlob appends blob h's bytes to buf.
func readBlob(st storer.EncodedObjectStorer, h plumbing.Hash, buf []byte) (_ []byte, err error) {
	rd, err := openObject(st, plumbing.BlobObject, h)
	if err != nil {
		return buf, err
	}
	defer closeInto(rd, &err)
	w := sliceWriter{buf}
	_, err = io.Copy(&w, rd)
	return w.b, err
}

type sliceWriter struct{ b []byte }

func (w *sliceWriter) Write(p []byte) (int, error) {
	w.b = append(w.b, p...)
	return len(p), nil
}

// ReadFrom appends all of r.
func (w *sliceWriter) ReadFrom(r io.Reader) (int64, error) {
	n0 := len(w.b)
	for {
		if len(w.b) == cap(w.b) {
			w.b = append(w.b, 0)[:len(w.b)]
		}
		n, err := r.Read(w.b[len(w.b):cap(w.b)])
		w.b = w.b[:len(w.b)+n]
		if err == io.EOF {
			return int64(len(w.b) - n0), nil
		}
		if err != nil {
			return int64(len(w.b) - n0), err
		}
	}
}

package gitx

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"syscall"
	"time"

	"github.com/go-git/go-git/v5/plumbing"
	"github.com/go-git/go-git/v5/plumbing/cache"
	"github.com/go-git/go-git/v5/plumbing/filemode"
	"github.com/go-git/go-git/v5/plumbing/format/index"
	"github.com/go-git/go-git/v5/plumbing/storer"
	"github.com/go-git/go-git/v5/storage/filesystem"

	"github.com/plasmodium/pm/internal/crashpoint"
)

// Favor says how Merge settles a path both sides changed in ways that do
// not merge line by line.
type Favor int

const (
	FavorNone   Favor = iota // a conflict: nothing is changed
	FavorOurs                // the branch merged into keeps its lines where they conflict (a file that cannot merge by lines: its version)
	FavorTheirs              // the merged branch's lines win where they conflict (likewise)
)

// MergeResult says what Merge did. With Conflicts or Dirty set, nothing
// was changed.
type MergeResult struct {
	Hash        string `json:"hash,omitempty"` // into's new tip ("" when it did not move)
	FastForward bool   `json:"fast_forward,omitempty"`
	UpToDate    bool   `json:"up_to_date,omitempty"` // from was in into already
	// Merged lists the paths whose content into's tree changed, sorted.
	Merged []string `json:"merged"`
	// Conflicts lists the paths both sides changed that do not merge.
	Conflicts []string `json:"conflicts,omitempty"`
	// Dirty lists merged paths that the work tree where into is checked
	// out changed locally (or an untracked file there the merge would
	// overwrite): pm never overwrites them.
	Dirty []string `json:"dirty,omitempty"`
	// CheckedOut is the work tree where into is checked out, whose files
	// for the merged paths were updated ("" none).
	CheckedOut string `json:"checked_out,omitempty"`
}

// Merge merges branch from into branch into, in the repository p: a
// fast-forward when into has not moved since their common ancestor, else
// a merge commit (message msg) of a three-way merge of the trees, with a
// line-level merge of text files both sides changed. A conflict is never
// settled unless favor says how. Where into is checked out (the main
// checkout or a task's worktree), the files and index entries of the
// merged paths are updated, and only those; if the user changed any of
// them there, Merge changes nothing and lists them in Dirty. Nothing under
// stateDir is ever written. The steps go so that a run killed anywhere is
// finished by running it again: files, then the index, then the ref.
func Merge(p Pin, from, into, stateDir, msg string, now time.Time, favor Favor) (MergeResult, error) {
	res := MergeResult{Merged: []string{}}
	unlock, err := lockRepository(common(p))
	if err != nil {
		return res, err
	}
	defer unlock()
	st, dirs, err := openPin(p)
	if err != nil {
		return res, err
	}
	theirs, err := refHash(st, from)
	if err != nil {
		return res, err
	}
	ours, err := refHash(st, into)
	if err != nil {
		return res, err
	}
	if theirs.IsZero() {
		res.UpToDate = true
		return res, nil
	}
	c := &committer{st: st, dotfs: st.Filesystem(), dirs: dirs}
	if c.cfg, err = loadConfig(st); err != nil {
		return res, err
	}
	next := theirs
	if !ours.IsZero() {
		base, err := mergeBase(st, ours, theirs)
		if err != nil {
			return res, err
		}
		switch {
		case base == theirs:
			res.UpToDate = true
			return res, nil
		case base == ours:
		default:
			if next, res.Conflicts, err = c.mergeCommit(base, ours, theirs, msg, now, favor); err != nil || len(res.Conflicts) > 0 {
				return res, err
			}
		}
	}
	res.FastForward = next == theirs
	crashpoint.Hit("gitx.merge.commit")
	var oldTree, newTree plumbing.Hash
	if !ours.IsZero() {
		h, err := readCommit(st, ours)
		if err != nil {
			return res, err
		}
		oldTree = h.Tree
	}
	h, err := readCommit(st, next)
	if err != nil {
		return res, err
	}
	newTree = h.Tree
	wt, wdirs, err := checkedOutAt(p, into)
	if err != nil {
		return res, err
	}
	if wt == "" {
		if res.Merged, err = changedPaths(st, oldTree, newTree); err != nil {
			return res, err
		}
		if err := c.updateRef(plumbing.ReferenceName(into), ours, next); err != nil {
			return res, err
		}
	} else {
		res.CheckedOut = wt
		if res.Merged, res.Dirty, err = syncCheckout(st, c, wt, wdirs, stateDir, into, ours, next, oldTree, newTree); err != nil || len(res.Dirty) > 0 {
			return res, err
		}
	}
	res.Hash = next.String()
	sig := c.signature(now)
	c.appendReflog(plumbing.ReferenceName(into), ours, next, sig, msg)
	return res, nil
}

// mergeCommit writes the merge of ours and theirs over base: its trees,
// blobs and a commit with both as parents. conflicts lists the paths that
// do not merge (then nothing is written).
func (c *committer) mergeCommit(base, ours, theirs plumbing.Hash, msg string, now time.Time, favor Favor) (plumbing.Hash, []string, error) {
	trees := make([]map[string]treeEntry, 3)
	for i, h := range []plumbing.Hash{base, ours, theirs} {
		hd, err := readCommit(c.st, h)
		if err != nil {
			return plumbing.ZeroHash, nil, err
		}
		if trees[i], err = flatTree(c.st, hd.Tree); err != nil {
			return plumbing.ZeroHash, nil, err
		}
	}
	entries, conflicts, err := c.mergeTrees(trees[0], trees[1], trees[2], favor, [2]string{})
	if err != nil || len(conflicts) > 0 {
		return plumbing.ZeroHash, conflicts, err
	}
	root, err := buildTree(entries)
	if err != nil {
		return plumbing.ZeroHash, nil, err
	}
	if err := c.writeTrees(root); err != nil {
		return plumbing.ZeroHash, nil, err
	}
	sig := c.signature(now)
	h, err := writeCommit(c.st, root.hash, []plumbing.Hash{ours, theirs}, sig, sig, cleanMessage(msg))
	return h, nil, err
}

// mergeTrees merges the flat trees o (ours) and t (theirs) over b: a path
// one side changed takes that side; one both changed the same way, that;
// text both changed, the line merge; anything else is a conflict (or the
// favored side). A file on one side where the other has a directory is a
// conflict. The entries come sorted by name.
//
// With labels (mark), a conflict is not left out but written into the
// result as git writes it into a work tree: a text file with conflict
// markers, anything else as ours; it is still listed.
func (c *committer) mergeTrees(b, o, t map[string]treeEntry, favor Favor, mark [2]string) ([]*index.Entry, []string, error) {
	names := map[string]bool{}
	for _, m := range []map[string]treeEntry{b, o, t} {
		for n := range m {
			names[n] = true
		}
	}
	var entries []*index.Entry
	var conflicts []string
	for n := range names {
		be, inB := b[n]
		oe, inO := o[n]
		te, inT := t[n]
		same := func(x treeEntry, inX bool, y treeEntry, inY bool) bool {
			return inX == inY && (!inX || x.Hash == y.Hash && x.Mode == y.Mode)
		}
		var pick treeEntry
		var ok bool
		switch {
		case same(oe, inO, te, inT), same(be, inB, te, inT):
			pick, ok = oe, inO
		case same(be, inB, oe, inO):
			pick, ok = te, inT
		default:
			e, merged, err := c.mergeFile(be, inB, oe, inO, te, inT, mark, favor)
			if err != nil {
				return nil, nil, err
			}
			switch {
			case merged:
				pick, ok = e, true
			case mark[0] != "":
				conflicts = append(conflicts, n)
				pick, ok = oe, inO
				if !e.Hash.IsZero() {
					pick, ok = e, true // the text with conflict markers
				}
			case favor == FavorOurs:
				pick, ok = oe, inO
			case favor == FavorTheirs:
				pick, ok = te, inT
			default:
				conflicts = append(conflicts, n)
				continue
			}
		}
		if ok {
			entries = append(entries, &index.Entry{Name: n, Hash: pick.Hash, Mode: pick.Mode})
		}
	}
	sort.Slice(entries, func(i, j int) bool { return entries[i].Name < entries[j].Name })
	for i := 1; i < len(entries); i++ {
		// Sorted, a directory's files follow the file of its name soon;
		// look back for a prefix that is a file.
		for d := filepathDir(entries[i].Name); d != ""; d = filepathDir(d) {
			if _, isFile := findName(entries[:i], d); isFile {
				conflicts = append(conflicts, d, entries[i].Name)
			}
		}
	}
	sort.Strings(conflicts)
	return entries, compact(conflicts), nil
}

// findName finds name among sorted entries.
func findName(entries []*index.Entry, name string) (int, bool) {
	i := sort.Search(len(entries), func(i int) bool { return entries[i].Name >= name })
	return i, i < len(entries) && entries[i].Name == name
}

func compact(s []string) []string {
	out := s[:0]
	for i, v := range s {
		if i == 0 || v != s[i-1] {
			out = append(out, v)
		}
	}
	return out
}

// mergeFile merges a regular file both sides changed, line by line; merged
// is false when it does not merge (a symlink or submodule, a side that
// deleted it, binary content, or overlapping changes).
//
// With labels (mark), a text file that does not merge comes back with
// conflict markers and merged false; with a favor, its conflicting lines
// take that side's and it merges (the other changes of both sides kept).
func (c *committer) mergeFile(b treeEntry, inB bool, o treeEntry, inO bool, t treeEntry, inT bool, mark [2]string, favor Favor) (treeEntry, bool, error) {
	regular := func(e treeEntry) bool { return e.Mode == filemode.Regular || e.Mode == filemode.Executable }
	if !inO || !inT || !regular(o) || !regular(t) || inB && !regular(b) {
		return treeEntry{}, false, nil
	}
	mode := o.Mode
	switch {
	case !inB && o.Mode != t.Mode:
		return treeEntry{}, false, nil
	case inB && o.Mode == b.Mode:
		mode = t.Mode
	case inB && t.Mode != b.Mode && t.Mode != o.Mode:
		return treeEntry{}, false, nil
	}
	var base []byte
	var err error
	if inB {
		if base, err = readBlob(c.st, b.Hash, nil); err != nil {
			return treeEntry{}, false, err
		}
	}
	ours, err := readBlob(c.st, o.Hash, nil)
	if err != nil {
		return treeEntry{}, false, err
	}
	theirs, err := readBlob(c.st, t.Hash, nil)
	if err != nil {
		return treeEntry{}, false, err
	}
	out, clean, text := mergeLinesMarked(base, ours, theirs, mark, favor)
	if !text || !clean && mark[0] == "" {
		return treeEntry{}, false, nil
	}
	h, err := c.writeObject(plumbing.BlobObject, out)
	return treeEntry{Hash: h, Mode: mode}, err == nil && clean, err
}

// flatTree maps every file path under tree h (zero: none) to its entry.
func flatTree(st storerLike, h plumbing.Hash) (map[string]treeEntry, error) {
	m := map[string]treeEntry{}
	if h.IsZero() {
		return m, nil
	}
	err := walkFiles(st, h, "", func(name string, e treeEntry) { m[name] = e })
	return m, err
}

// changedPaths lists the paths whose entry differs between two trees.
func changedPaths(st storerLike, old, cur plumbing.Hash) ([]string, error) {
	a, err := flatTree(st, old)
	if err != nil {
		return nil, err
	}
	b, err := flatTree(st, cur)
	if err != nil {
		return nil, err
	}
	out := []string{}
	for n, e := range a {
		if f, ok := b[n]; !ok || f != e {
			out = append(out, n)
		}
	}
	for n := range b {
		if _, ok := a[n]; !ok {
			out = append(out, n)
		}
	}
	sort.Strings(out)
	return out, nil
}

// mergeBase is a common ancestor of a and b: the first commit reached by
// both of two breadth-first walks taken in turns (a task's branch and the
// branch it merges into meet at the task's start point, a few commits
// back, without walking the whole history).
func mergeBase(st storerLike, a, b plumbing.Hash) (plumbing.Hash, error) {
	seen := [2]map[plumbing.Hash]bool{{a: true}, {b: true}}
	queue := [2][]plumbing.Hash{{a}, {b}}
	if a == b {
		return a, nil
	}
	for len(queue[0]) > 0 || len(queue[1]) > 0 {
		for side := 0; side < 2; side++ {
			if len(queue[side]) == 0 {
				continue
			}
			h := queue[side][0]
			queue[side] = queue[side][1:]
			c, err := readCommit(st, h)
			if err != nil {
				return plumbing.ZeroHash, err
			}
			for _, p := range c.Parents {
				if seen[1-side][p] {
					return p, nil
				}
				if !seen[side][p] {
					seen[side][p] = true
					queue[side] = append(queue[side], p)
				}
			}
		}
	}
	// Also the case where one side's start is an ancestor reached first.
	for h := range seen[0] {
		if seen[1][h] {
			return h, nil
		}
	}
	return plumbing.ZeroHash, errors.New("gitx: the branches have no common ancestor")
}

// checkedOutAt finds the work tree whose HEAD names branch: p's own, or a
// linked one of its common dir ("" none).
func checkedOutAt(p Pin, branch string) (string, repoDirs, error) {
	cd := common(p)
	type cand struct {
		wt   string
		dirs repoDirs
	}
	var cands []cand
	mainWT := p.WorkTree
	if p.CommonDir != "" {
		mainWT = "" // p is itself linked: the main work tree is its common dir's parent
	}
	cands = append(cands, cand{mainWT, repoDirs{git: p.GitDir, common: p.CommonDir}})
	if p.CommonDir != "" {
		cands = append(cands, cand{filepath.Dir(cd), repoDirs{git: cd}})
	}
	ents, _ := os.ReadDir(filepath.Join(cd, "worktrees"))
	for _, e := range ents {
		admin := filepath.Join(cd, "worktrees", e.Name())
		b, err := readSmallFile(filepath.Join(admin, "gitdir"), 64<<10)
		if err != nil {
			continue
		}
		cands = append(cands, cand{filepath.Dir(strings.TrimSpace(string(b))), repoDirs{git: admin, common: cd}})
	}
	for _, c := range cands {
		if c.wt == "" {
			continue
		}
		b, err := readSmallFile(filepath.Join(c.dirs.git, "HEAD"), 64<<10)
		if err != nil {
			continue
		}
		if strings.TrimSpace(string(b)) == "ref: "+branch {
			if _, err := os.Lstat(filepath.Join(c.wt, ".git")); err != nil {
				continue // a worktree whose files are gone
			}
			return c.wt, c.dirs, nil
		}
	}
	return "", repoDirs{}, nil
}

// syncCheckout moves the work tree wt (git dirs wd), where branch is
// checked out, from tree old to tree cur for the paths that differ, then
// branch from oldTip to next. A path is clean when its file and index
// entry hold the old or the new version; any other is dirty, and then
// nothing is written.
func syncCheckout(st storerLike, c *committer, wt string, wd repoDirs, stateDir, branch string, oldTip, next, old, cur plumbing.Hash) (merged, dirty []string, err error) {
	lock, err := takeLock(wd.path("index"))
	if err != nil {
		return nil, nil, err
	}
	done := false
	defer func() {
		if !done {
			lock.abort()
		}
	}()
	if b, err := readSmallFile(filepath.Join(wd.git, "HEAD"), 64<<10); err != nil || strings.TrimSpace(string(b)) != "ref: "+branch {
		return nil, nil, fmt.Errorf("gitx: %s no longer has %s checked out", wt, branch)
	}
	wst, err := openDirs(wd, cache.NewObjectLRUDefault(), filesystem.Options{})
	if err != nil {
		return nil, nil, err
	}
	idx, err := wst.Index()
	if err != nil {
		return nil, nil, fmt.Errorf("gitx: read index of %s: %w", wt, err)
	}
	racyLimit := time.Unix(1, 0)
	if fi, err := os.Stat(wd.path("index")); err == nil {
		racyLimit = fi.ModTime()
	}
	a, err := flatTree(st, old)
	if err != nil {
		return nil, nil, err
	}
	b, err := flatTree(st, cur)
	if err != nil {
		return nil, nil, err
	}
	merged, err = changedPaths(st, old, cur)
	if err != nil {
		return nil, nil, err
	}
	r, err := os.OpenRoot(wt)
	if err != nil {
		return nil, nil, err
	}
	defer r.Close()
	byName := map[string]*index.Entry{}
	for _, e := range idx.Entries {
		if e.Stage != 0 {
			byName[e.Name] = nil // unmerged: never clean
			continue
		}
		if _, bad := byName[e.Name]; !bad {
			byName[e.Name] = e
		}
	}
	state := strings.Trim(filepath.ToSlash(stateDir), "/")
	for _, n := range merged {
		if err := checkName(n); err != nil {
			return nil, nil, err
		}
		if first, _, _ := strings.Cut(n, "/"); state != "" && first == state {
			return nil, nil, fmt.Errorf("gitx: refusing to write %s in the state directory", n)
		}
		oe, inO := a[n]
		ne, inN := b[n]
		if !pathClean(r, byName, n, oe, inO, ne, inN, racyLimit) {
			dirty = append(dirty, n)
		}
	}
	if len(dirty) > 0 {
		return merged, dirty, nil
	}
	if err := writePaths(st, r, merged, b, byName); err != nil {
		return nil, nil, err
	}
	crashpoint.Hit("gitx.merge.files")
	entries := make([]*index.Entry, 0, len(byName))
	for _, e := range byName {
		if e != nil {
			entries = append(entries, e)
		}
	}
	sort.Slice(entries, func(i, j int) bool { return entries[i].Name < entries[j].Name })
	c.idx = idx
	if err := c.writeIndex(lock.f, entries); err != nil {
		return nil, nil, err
	}
	if err := lock.commit(); err != nil {
		return nil, nil, fmt.Errorf("gitx: write index of %s: %w", wt, err)
	}
	done = true
	crashpoint.Hit("gitx.merge.index")
	if err := c.updateRef(plumbing.ReferenceName(branch), oldTip, next); err != nil {
		return nil, nil, err
	}
	return merged, nil, nil
}

// pathClean reports whether the work tree's file n and its index entry
// hold the old version (o) or the new one (n2): what the merge may
// replace without losing anything of the user's.
func pathClean(r *os.Root, byName map[string]*index.Entry, n string, o treeEntry, inO bool, n2 treeEntry, inN bool, racyLimit time.Time) bool {
	ie, inI := byName[n]
	if inI && ie == nil {
		return false // unmerged in the index
	}
	matches := func(h plumbing.Hash, m filemode.FileMode) bool {
		return inO && o.Hash == h && o.Mode == m || inN && n2.Hash == h && n2.Mode == m
	}
	if inI && !matches(ie.Hash, ie.Mode) || !inI && inO && inN {
		return false // staged changes, or an entry removed by the user
	}
	fi, err := r.Lstat(n)
	if errors.Is(err, fs.ErrNotExist) || isNotDir(err) {
		return !inO || !inN // absent is the old or the new version only where one has no file
	}
	if err != nil {
		return false
	}
	if inI && ie.Mode != filemode.Submodule && statMatches(ie, fi) && ie.ModifiedAt.Before(racyLimit) {
		return true
	}
	var mode filemode.FileMode
	var data []byte
	switch {
	case fi.Mode()&os.ModeSymlink != 0:
		target, err := r.Readlink(n)
		if err != nil {
			return false
		}
		mode, data = filemode.Symlink, []byte(filepath.ToSlash(target))
	case fi.Mode().IsRegular():
		mode = filemode.Regular
		if fi.Mode()&0o111 != 0 {
			mode = filemode.Executable
		}
		f, err := r.OpenFile(n, os.O_RDONLY|syscall.O_NONBLOCK|syscall.O_NOCTTY, 0)
		if err != nil {
			return false
		}
		w := sliceWriter{}
		_, err = w.ReadFrom(f)
		f.Close()
		if err != nil {
			return false
		}
		data = w.b
	case fi.IsDir():
		return (inO && o.Mode == filemode.Submodule) || (inN && n2.Mode == filemode.Submodule)
	default:
		return false
	}
	return matches(plumbing.ComputeHash(plumbing.BlobObject, data), mode)
}

// removeEmptyParents removes n's parent directories that became empty.
func removeEmptyParents(r *os.Root, n string) {
	for d := filepathDir(n); d != ""; d = filepathDir(d) {
		if r.Remove(d) != nil {
			return
		}
	}
}

// storerLike is the object storage gitx reads trees and blobs from.
type storerLike = storer.EncodedObjectStorer

// writePaths makes the files of paths under r what cur says (removed
// where it has none), each replaced whole (a temporary file renamed over
// it), and sets their entries in byName (nil: no index to keep).
func writePaths(st storerLike, r *os.Root, paths []string, cur map[string]treeEntry, byName map[string]*index.Entry) error {
	made := map[string]bool{"": true}
	for _, n := range paths {
		ne, inN := cur[n]
		if !inN {
			if err := r.Remove(n); err != nil && !errors.Is(err, fs.ErrNotExist) {
				return fmt.Errorf("gitx: remove %s: %w", n, err)
			}
			removeEmptyParents(r, n)
			delete(byName, n)
			continue
		}
		if err := mkdirs(r, made, n); err != nil {
			return err
		}
		tmp := filepathDir(n)
		if tmp != "" {
			tmp += "/"
		}
		tmp += ".pm-merge-" + filepath.Base(n)
		r.Remove(tmp)
		if _, err := writeEntry(st, r, tmp, ne, nil); err != nil {
			return err
		}
		if err := r.Rename(tmp, n); err != nil {
			r.Remove(tmp)
			return fmt.Errorf("gitx: write %s: %w", n, err)
		}
		if byName == nil {
			continue
		}
		e := &index.Entry{Name: n, Hash: ne.Hash, Mode: ne.Mode}
		if fi, err := r.Lstat(n); err == nil && ne.Mode != filemode.Submodule {
			fillStat(e, fi)
		}
		byName[n] = e
	}
	return nil
}

// MarkConflicts writes into w, a task's worktree whose files hold its
// branch's tip, the merge of onto (the tip of the branch it merges into)
// as git leaves a conflicted merge in a work tree: what merges cleanly
// merged, a conflicting text file with conflict markers (labels: the
// task's branch and into), any other conflict as the task's version. The
// branch and index are not touched: pm done, run again once the files are
// resolved, commits them with onto as a second parent (Options.Merging),
// which then merges by a fast-forward. It returns the conflicting paths.
func MarkConflicts(p Pin, w Worktree, onto, stateDir string) ([]string, error) {
	unlock, err := lockRepository(common(p))
	if err != nil {
		return nil, err
	}
	defer unlock()
	st, dirs, err := openPin(p)
	if err != nil {
		return nil, err
	}
	c := &committer{st: st, dotfs: st.Filesystem(), dirs: dirs}
	tip, err := refHash(st, w.Branch)
	if err != nil {
		return nil, err
	}
	if !plumbing.IsHash(onto) || tip.IsZero() {
		return nil, fmt.Errorf("gitx: nothing to merge into %s", w.Path)
	}
	other := plumbing.NewHash(onto)
	base, err := mergeBase(st, tip, other)
	if err != nil {
		return nil, err
	}
	trees := make([]map[string]treeEntry, 3)
	for i, h := range []plumbing.Hash{base, tip, other} {
		hd, err := readCommit(st, h)
		if err != nil {
			return nil, err
		}
		if trees[i], err = flatTree(st, hd.Tree); err != nil {
			return nil, err
		}
	}
	label := strings.TrimPrefix(w.Branch, "refs/heads/")
	entries, conflicts, err := c.mergeTrees(trees[0], trees[1], trees[2], FavorNone, [2]string{label, strings.TrimPrefix(w.Into, "refs/heads/")})
	if err != nil {
		return nil, err
	}
	cur := make(map[string]treeEntry, len(entries))
	for _, e := range entries {
		cur[e.Name] = treeEntry{Hash: e.Hash, Mode: e.Mode}
	}
	var paths []string
	for n, e := range cur {
		if trees[1][n] != e {
			paths = append(paths, n)
		}
	}
	for n := range trees[1] {
		if _, ok := cur[n]; !ok {
			paths = append(paths, n)
		}
	}
	sort.Strings(paths)
	state := strings.Trim(filepath.ToSlash(stateDir), "/")
	for _, n := range paths {
		if err := checkName(n); err != nil {
			return nil, err
		}
		if first, _, _ := strings.Cut(n, "/"); state != "" && first == state {
			return nil, fmt.Errorf("gitx: refusing to write %s in the state directory", n)
		}
	}
	r, err := os.OpenRoot(w.Path)
	if err != nil {
		return nil, err
	}
	defer r.Close()
	return conflicts, writePaths(st, r, paths, cur, nil)
}

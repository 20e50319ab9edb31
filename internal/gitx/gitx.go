package gitx

import (
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"io"
	"os"
	"path"
	"path/filepath"
	"reflect"
	"sort"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/go-git/go-billy/v5"
	"github.com/go-git/go-git/v5/plumbing"
	"github.com/go-git/go-git/v5/plumbing/filemode"
	formatcfg "github.com/go-git/go-git/v5/plumbing/format/config"
	"github.com/go-git/go-git/v5/plumbing/format/gitignore"
	"github.com/go-git/go-git/v5/plumbing/format/index"
	"github.com/go-git/go-git/v5/storage/filesystem"

	"github.com/plasmodium/pm/internal/crashpoint"
)

// Result reports what Commit did.
type Result struct {
	Hash      string `json:"hash"`       // commit hash, "" when no commit was made
	NoRepo    bool   `json:"no_repo"`    // dir is not inside a git work tree: nothing committed
	NoChanges bool   `json:"no_changes"` // work tree clean (outside .plasmodium/): nothing committed
	Files     int    `json:"files"`      // number of paths staged in the commit
	// Committed lists those paths (added, modified, deleted), sorted.
	Committed []string `json:"committed"`
	// Excluded lists the untracked files left out because they look like
	// secrets (see Options.Exclude), sorted.
	Excluded []string `json:"excluded"`
	// Tree is the tree written with Options.TreeOnly ("" otherwise).
	Tree string `json:"tree,omitempty"`
}

// Fallback identity used when no user.name / user.email is configured.
const (
	fallbackName  = "pm"
	fallbackEmail = "pm@localhost"
)

// ErrLocked is wrapped by every error of a lock pm cannot take (a
// *LockError says which, and what ends it).
var ErrLocked = errors.New("locked by another git process")

// Commit stages every change in the work tree that contains dir — new,
// modified and deleted files, honoring .gitignore — EXCEPT anything under the
// state directory named stateDir (".plasmodium", relative to the work tree
// root), and commits with message msg. Author/committer: git config
// user.name/user.email (repo config, then global ~/.gitconfig /
// $XDG_CONFIG_HOME/git/config), falling back to "pm" <pm@localhost>. Never
// pushes. Uses go-git (github.com/go-git/go-git/v5), not the git binary.
func Commit(dir, stateDir, msg string, now time.Time) (Result, error) {
	return CommitWith(dir, stateDir, msg, now, Options{})
}

// CommitWith is Commit with options: untracked files matching
// opt.Exclude are left out and listed in Result.Excluded.
func CommitWith(dir, stateDir, msg string, now time.Time, opt Options) (Result, error) {
	return commitWithOpen(openRepository, dir, stateDir, msg, now, opt)
}

// opener opens the repository a commit goes to (openRepository: the one
// that holds dir).
type opener func(dir string) (*filesystem.Storage, string, repoDirs, error)

func commitWithOpen(open opener, dir, stateDir, msg string, now time.Time, opt Options) (Result, error) {
	res, err := commitOnce(open, dir, stateDir, msg, now, opt)
	if errors.Is(err, plumbing.ErrObjectNotFound) {
		// A concurrent `git gc` (git runs it in the background after
		// commands that leave many loose objects) may have moved objects
		// into a pack this repository handle did not list yet. Nothing has
		// been changed at this point: start over with a fresh handle.
		res, err = commitOnce(open, dir, stateDir, msg, now, opt)
	}
	return finishResult(res, err)
}

// finishResult gives a Result's lists their sorted, non-nil form.
func finishResult(res Result, err error) (Result, error) {
	if res.Committed == nil {
		res.Committed = []string{}
	}
	if res.Excluded == nil {
		res.Excluded = []string{}
	}
	sort.Strings(res.Excluded)
	return res, err
}

func commitOnce(open opener, dir, stateDir, msg string, now time.Time, opt Options) (Result, error) {
	st, root, dirs, err := open(dir)
	if errors.Is(err, errNoRepo) {
		return Result{NoRepo: true}, nil
	}
	if err != nil {
		return Result{}, fmt.Errorf("gitx: open repository at %s: %w", dir, err)
	}
	state, err := cleanStateDir(stateDir)
	if err != nil {
		return Result{}, err
	}
	message := cleanMessage(msg)
	if message == "" {
		return Result{}, errors.New("gitx: empty commit message")
	}
	c := &committer{
		st:       st,
		dotfs:    st.Filesystem(),
		dirs:     dirs,
		root:     root,
		state:    state,
		secret:   parseExclude(opt.Exclude),
		treeOnly: opt.TreeOnly,
	}
	if opt.Merging != "" {
		if !plumbing.IsHash(opt.Merging) {
			return Result{}, fmt.Errorf("gitx: merging %q is not a commit hash", opt.Merging)
		}
		c.merging = plumbing.NewHash(opt.Merging)
	}
	return c.run(message, now)
}

// cleanStateDir normalizes stateDir to a slash-separated path relative to the
// work tree root; "" disables the exclusion.
func cleanStateDir(stateDir string) (string, error) {
	if stateDir == "" {
		return "", nil
	}
	s := filepath.ToSlash(filepath.Clean(stateDir))
	if s == "." {
		return "", fmt.Errorf("gitx: state directory %q is the work tree root", stateDir)
	}
	if path.IsAbs(s) || s == ".." || strings.HasPrefix(s, "../") {
		return "", fmt.Errorf("gitx: state directory %q must be relative to the work tree root", stateDir)
	}
	return s, nil
}

// cleanMessage applies git's "whitespace" cleanup (the default for -m):
// trailing whitespace, leading and trailing blank lines and runs of blank
// lines go; the message ends with exactly one newline.
func cleanMessage(msg string) string {
	var out []string
	for _, l := range strings.Split(strings.ReplaceAll(msg, "\r\n", "\n"), "\n") {
		l = strings.TrimRight(l, " \t\r")
		if l == "" && (len(out) == 0 || out[len(out)-1] == "") {
			continue
		}
		out = append(out, l)
	}
	for len(out) > 0 && out[len(out)-1] == "" {
		out = out[:len(out)-1]
	}
	if len(out) == 0 {
		return ""
	}
	return strings.Join(out, "\n") + "\n"
}

type committer struct {
	st    *filesystem.Storage
	dotfs billy.Filesystem
	dirs  repoDirs // dotfs's directories (OS paths), for the lock files
	root  string   // absolute work tree root (OS path)
	state string   // state directory, slash-separated, relative to root; "" = none

	secret   []gitignore.Pattern // untracked files never added (Options.Exclude)
	excluded []string            // untracked files left out by secret, in walk order

	cfg       *configSet
	trustMode bool // core.filemode

	idx       *index.Index
	tracked   map[string]*tracked
	added     []*index.Entry
	walked    map[string]bool // directories whose listing was read
	dirOK     map[string]bool // memo for leadingDirsOK
	dirty     bool            // index must be rewritten
	racyLimit time.Time       // index mtime: entries at or after it are racily clean
	merging   plumbing.Hash   // a second parent (Options.Merging), zero for none
	treeOnly  bool            // Options.TreeOnly
}

type tracked struct {
	e    *index.Entry
	seen bool // visited by the walk (or resolved otherwise)
	gone bool // deleted from the work tree
}

func (c *committer) inState(p string) bool {
	return c.state != "" && (p == c.state || strings.HasPrefix(p, c.state+"/"))
}

func (c *committer) abs(rel string) string {
	if rel == "" {
		return c.root
	}
	return filepath.Join(c.root, filepath.FromSlash(rel))
}

func (c *committer) run(msg string, now time.Time) (Result, error) {
	if c.treeOnly {
		return c.tree()
	}
	// One pm commit at a time in a repository (lock.go), then the index
	// lock the way git takes it, so that a concurrent git command and this
	// commit never interleave their index writes; marked as pm's, so that
	// a pm killed holding it does not strand the repository.
	unlock, err := lockRepository(c.dirs.of("refs"))
	if err != nil {
		return Result{}, err
	}
	defer unlock()
	lock, err := takeLock(c.dirs.path("index"))
	if err != nil {
		return Result{}, err
	}
	committed := false
	defer func() {
		if !committed {
			lock.abort()
		}
	}()

	st, err := c.staged()
	if err != nil {
		return Result{}, err
	}
	headRefName, parent, head, headTree, entries, rootDir, changed := st.ref, st.parent, st.head, st.headTree, st.entries, st.root, st.changed
	if c.merging.IsZero() && (!parent.IsZero() && rootDir.hash == headTree || parent.IsZero() && len(entries) == 0) {
		// Nothing to commit; still persist refreshed stat data so the
		// next run does not rehash the same files.
		if c.dirty {
			if err := c.writeIndex(lock.f, entries); err != nil {
				return Result{}, err
			}
			if err := lock.commit(); err != nil {
				return Result{}, fmt.Errorf("gitx: write index: %w", err)
			}
			committed = true
		}
		if !parent.IsZero() && head.Message == msg {
			// HEAD is this very commit, made by a run killed after it moved
			// the branch and before it renamed the index into place: report
			// it as made, so the caller records it.
			return c.madeBefore(parent, head, rootDir)
		}
		return Result{NoChanges: true, Excluded: c.excluded}, nil
	}

	if err := c.writeTrees(rootDir); err != nil {
		return Result{}, err
	}
	sig := c.signature(now)
	var parents []plumbing.Hash
	if !parent.IsZero() {
		parents = []plumbing.Hash{parent}
	}
	if !c.merging.IsZero() && c.merging != parent {
		parents = append(parents, c.merging)
	}
	hash, err := writeCommit(c.st, rootDir.hash, parents, sig, sig, msg)
	if err != nil {
		return Result{}, fmt.Errorf("gitx: write commit: %w", err)
	}

	if err := c.writeIndex(lock.f, entries); err != nil {
		return Result{}, err
	}
	crashpoint.Hit("gitx.commit.index")
	if err := c.updateRef(headRefName, parent, hash); err != nil {
		return Result{}, err
	}
	crashpoint.Hit("gitx.commit.moved")
	if err := lock.commit(); err != nil {
		return Result{}, fmt.Errorf("gitx: commit %s made but index not updated: %w", hash, err)
	}
	committed = true
	c.appendReflog(headRefName, parent, hash, sig, msg)
	return Result{Hash: hash.String(), Files: len(changed), Committed: changed, Excluded: c.excluded}, nil
}

// stagedTree is the work tree staged against HEAD: the tree a commit would
// have (its objects not written yet) and what it changes.
type stagedTree struct {
	ref      plumbing.ReferenceName // HEAD's ref (plumbing.HEAD when detached)
	parent   plumbing.Hash          // the commit HEAD names (zero: unborn)
	head     commitHeader
	headTree plumbing.Hash
	entries  []*index.Entry
	root     *treeDir
	changed  []string // paths the tree changes against HEAD's, sorted
}

// staged reads the index and HEAD and stages the work tree into an
// in-memory index, as git add -A would, and builds the tree from it.
func (c *committer) staged() (*stagedTree, error) {
	var err error
	if c.cfg, err = loadConfig(c.st); err != nil {
		return nil, err
	}
	c.trustMode = !isFalse(c.cfg.get("core", "filemode"))

	if c.idx, err = c.st.Index(); err != nil {
		return nil, fmt.Errorf("gitx: read index: %w", err)
	}
	// Entries modified at or after the index was written are "racily
	// clean": their stat data cannot prove the content unchanged. Without
	// the index's mtime, trust no stat data at all.
	c.racyLimit = time.Unix(1, 0)
	if fi, err := c.dotfs.Stat("index"); err == nil {
		c.racyLimit = fi.ModTime()
	} else if !os.IsNotExist(err) {
		return nil, fmt.Errorf("gitx: stat index: %w", err)
	}
	c.tracked = make(map[string]*tracked, len(c.idx.Entries))
	for _, e := range c.idx.Entries {
		if e.Stage != 0 {
			return nil, fmt.Errorf("gitx: cannot commit: unmerged path %s", e.Name)
		}
		c.tracked[e.Name] = &tracked{e: e}
	}
	if _, err := c.dotfs.Stat("MERGE_HEAD"); err == nil {
		return nil, errors.New("gitx: cannot commit: a merge is in progress")
	}

	// Resolve HEAD.
	headRefName, parent, err := c.resolveHEAD()
	if err != nil {
		return nil, err
	}
	var headTree plumbing.Hash
	var head commitHeader
	if !parent.IsZero() {
		if head, err = readCommit(c.st, parent); err != nil {
			return nil, fmt.Errorf("gitx: read HEAD commit: %w", err)
		}
		headTree = head.Tree
		for _, p := range head.Parents {
			if p == c.merging {
				c.merging = plumbing.ZeroHash // merged in already (a run killed after it moved the branch)
			}
		}
	}

	// Stage the work tree into the in-memory index.
	patterns, err := c.basePatterns()
	if err != nil {
		return nil, err
	}
	c.walked = map[string]bool{}
	c.dirOK = map[string]bool{}
	if err := c.walk("", nil, patterns); err != nil {
		return nil, err
	}
	if err := c.resolveUnseen(); err != nil {
		return nil, err
	}
	entries, err := c.finalEntries(headTree)
	if err != nil {
		return nil, err
	}

	// Build the tree and compare it to HEAD's.
	rootDir, err := buildTree(entries)
	if err != nil {
		return nil, err
	}
	var changed []string
	if err := c.diffPaths(rootDir, headTree, "", &changed); err != nil {
		return nil, err
	}
	sort.Strings(changed)
	return &stagedTree{ref: headRefName, parent: parent, head: head, headTree: headTree, entries: entries, root: rootDir, changed: changed}, nil
}

// tree is Options.TreeOnly: the staged tree written, nothing committed.
func (c *committer) tree() (Result, error) {
	st, err := c.staged()
	if err != nil {
		return Result{}, err
	}
	if err := c.writeTrees(st.root); err != nil {
		return Result{}, err
	}
	return Result{Tree: st.root.hash.String(), Files: len(st.changed), Committed: st.changed, Excluded: c.excluded}, nil
}

// madeBefore is the Result of the commit at HEAD (h, header head, tree
// root), which an earlier run with the same message made: the paths it
// changed against its first parent.
func (c *committer) madeBefore(h plumbing.Hash, head commitHeader, root *treeDir) (Result, error) {
	var old plumbing.Hash
	if len(head.Parents) > 0 {
		pc, err := readCommit(c.st, head.Parents[0])
		if err != nil {
			return Result{}, fmt.Errorf("gitx: read HEAD's parent: %w", err)
		}
		old = pc.Tree
	}
	var changed []string
	if err := c.diffPaths(root, old, "", &changed); err != nil {
		return Result{}, err
	}
	sort.Strings(changed)
	return Result{Hash: h.String(), Files: len(changed), Committed: changed, Excluded: c.excluded}, nil
}

// resolveHEAD returns the ref HEAD points at (plumbing.HEAD itself when
// detached) and the commit it currently names (zero when unborn).
func (c *committer) resolveHEAD() (plumbing.ReferenceName, plumbing.Hash, error) {
	name := plumbing.HEAD
	for range 5 {
		ref, err := c.st.Reference(name)
		if errors.Is(err, plumbing.ErrReferenceNotFound) {
			return name, plumbing.ZeroHash, nil
		}
		if err != nil {
			return "", plumbing.ZeroHash, fmt.Errorf("gitx: read %s: %w", name, err)
		}
		if ref.Type() == plumbing.HashReference {
			return name, ref.Hash(), nil
		}
		name = ref.Target()
	}
	return "", plumbing.ZeroHash, errors.New("gitx: HEAD: symbolic reference loop")
}

// ---------------------------------------------------------------------------
// Ignore rules.

func (c *committer) basePatterns() ([]gitignore.Pattern, error) {
	var ps []gitignore.Pattern
	// core.excludesFile, defaulting to $XDG_CONFIG_HOME/git/ignore.
	if ef := c.cfg.get("core", "excludesfile"); ef != "" {
		ps = append(ps, readIgnoreFile(expandHome(ef), nil)...)
	} else if x := xdgConfigHome(); x != "" {
		ps = append(ps, readIgnoreFile(filepath.Join(x, "git", "ignore"), nil)...)
	}
	// $GIT_DIR/info/exclude (in the common dir for linked work trees).
	if f, err := openRegular(c.dirs.path("info/exclude")); err == nil {
		ps = append(ps, parseIgnore(f, nil)...)
		f.Close()
	}
	return ps, nil
}

func readIgnoreFile(name string, domain []string) []gitignore.Pattern {
	f, err := openRegular(name)
	if err != nil {
		return nil
	}
	defer f.Close()
	return parseIgnore(f, domain)
}

func parseIgnore(r io.Reader, domain []string) []gitignore.Pattern {
	var ps []gitignore.Pattern
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 0, 4096), 1<<20)
	for sc.Scan() {
		s := sc.Text()
		if strings.HasPrefix(s, "#") || strings.TrimSpace(s) == "" {
			continue
		}
		ps = append(ps, gitignore.ParsePattern(s, domain))
	}
	return ps
}

func ignored(ps []gitignore.Pattern, p []string, isDir bool) bool {
	for i := len(ps) - 1; i >= 0; i-- {
		if m := ps[i].Match(p, isDir); m != gitignore.NoMatch {
			return m == gitignore.Exclude
		}
	}
	return false
}

// ---------------------------------------------------------------------------
// Work tree walk.

// walk visits directory rel (slash-separated, "" for the root). comps are its
// path components; ps the ignore patterns in force for it.
func (c *committer) walk(rel string, comps []string, ps []gitignore.Pattern) error {
	absDir := c.abs(rel)
	des, err := os.ReadDir(absDir)
	if err != nil {
		if rel != "" && (os.IsNotExist(err) || isNotDir(err)) {
			return nil // vanished under us: treated as deleted
		}
		return fmt.Errorf("gitx: read %s: %w", absDir, err)
	}
	c.walked[rel] = true

	// The .gitignore of this directory applies to everything below it. The
	// state directory is excluded by an explicit pattern as well as by the
	// inState check below (which also covers tracked paths, to which ignore
	// rules do not apply), so neither depends on a .gitignore.
	for _, de := range des {
		if de.Name() == ".gitignore" && de.Type().IsRegular() {
			ps = append(ps[:len(ps):len(ps)], readIgnoreFile(filepath.Join(absDir, ".gitignore"), comps)...)
			break
		}
	}
	if rel == "" && c.state != "" {
		ps = append(ps[:len(ps):len(ps)], gitignore.ParsePattern("/"+c.state, nil))
	}

	child := make([]string, len(comps)+1)
	copy(child, comps)
	for _, de := range des {
		name := de.Name()
		if name == ".git" {
			continue
		}
		p := name
		if rel != "" {
			p = rel + "/" + name
		}
		if c.inState(p) {
			continue
		}
		child[len(comps)] = name
		t := c.tracked[p]
		typ := de.Type()
		switch {
		case typ.IsDir():
			if t != nil && t.e.Mode == filemode.Submodule {
				t.seen = true
				if err := c.refreshGitlink(t, p); err != nil {
					return err
				}
				continue
			}
			if ignored(ps, child, true) {
				continue // tracked files below are resolved later
			}
			if isNestedRepo(filepath.Join(absDir, name)) {
				continue // embedded repositories are never added
			}
			if err := c.walk(p, child, ps); err != nil {
				return err
			}
		case typ.IsRegular() || typ&os.ModeSymlink != 0:
			if t == nil && ignored(ps, child, false) {
				continue
			}
			if t == nil && ignored(c.secret, child, false) {
				c.excluded = append(c.excluded, p)
				continue
			}
			fi, err := de.Info()
			if err != nil {
				if os.IsNotExist(err) {
					continue
				}
				return fmt.Errorf("gitx: stat %s: %w", p, err)
			}
			if err := c.stage(p, t, fi); err != nil {
				return err
			}
		}
	}
	return nil
}

func isNestedRepo(absDir string) bool {
	_, err := os.Lstat(filepath.Join(absDir, ".git"))
	return err == nil
}

func isNotDir(err error) bool {
	return errors.Is(err, syscall.ENOTDIR)
}

// stage brings the index entry for p (t, nil when untracked) in line with
// the file described by fi (from lstat).
func (c *committer) stage(p string, t *tracked, fi os.FileInfo) error {
	var mode filemode.FileMode
	switch {
	case fi.Mode()&os.ModeSymlink != 0:
		mode = filemode.Symlink
	case fi.Mode().IsRegular():
		mode = filemode.Regular
		if fi.Mode()&0o100 != 0 {
			mode = filemode.Executable
		}
		if !c.trustMode {
			mode = filemode.Regular
			if t != nil && t.e.Mode == filemode.Executable {
				mode = filemode.Executable
			}
		}
	default:
		if t != nil {
			t.seen, t.gone = true, true
		}
		return nil
	}

	if t != nil {
		t.seen = true
		e := t.e
		if e.SkipWorktree {
			return nil
		}
		if e.Mode == mode && !e.IntentToAdd && statMatches(e, fi) && !c.racy(e) {
			return nil
		}
		h, fi2, err := c.hashFile(p, mode)
		if err != nil {
			if os.IsNotExist(err) {
				t.gone = true
				return nil
			}
			return err
		}
		if fi2 != nil {
			fi = fi2
		}
		e.Hash, e.Mode, e.IntentToAdd = h, mode, false
		fillStat(e, fi)
		c.dirty = true
		return nil
	}

	h, fi2, err := c.hashFile(p, mode)
	if err != nil {
		if os.IsNotExist(err) {
			return nil
		}
		return err
	}
	if fi2 != nil {
		fi = fi2
	}
	e := &index.Entry{Name: p, Hash: h, Mode: mode}
	fillStat(e, fi)
	c.added = append(c.added, e)
	c.dirty = true
	return nil
}

// racy reports whether e's stat data cannot be trusted because the file
// may have changed within the index file's timestamp granularity.
func (c *committer) racy(e *index.Entry) bool {
	if c.racyLimit.IsZero() {
		return false
	}
	m, l := e.ModifiedAt, c.racyLimit
	if m.Unix() != l.Unix() {
		return m.Unix() > l.Unix()
	}
	return m.Nanosecond() == 0 || m.Nanosecond() >= l.Nanosecond()
}

// hashFile writes the blob for p into the object store and returns its hash
// and, for regular files, the stat data of the content read.
func (c *committer) hashFile(p string, mode filemode.FileMode) (plumbing.Hash, os.FileInfo, error) {
	abs := c.abs(p)
	var data []byte
	var fi os.FileInfo
	if mode == filemode.Symlink {
		target, err := os.Readlink(abs)
		if err != nil {
			return plumbing.ZeroHash, nil, err
		}
		data = []byte(filepath.ToSlash(target))
	} else {
		f, err := os.OpenFile(abs, os.O_RDONLY|syscall.O_NONBLOCK|syscall.O_NOCTTY, 0) // a FIFO swapped in cannot hang the open
		if err != nil {
			return plumbing.ZeroHash, nil, err
		}
		defer f.Close()
		if fi, err = f.Stat(); err != nil {
			return plumbing.ZeroHash, nil, err
		}
		if !fi.Mode().IsRegular() {
			return plumbing.ZeroHash, nil, fmt.Errorf("gitx: %s is no longer a regular file", p)
		}
		data = make([]byte, 0, fi.Size()+1)
		buf := bytes.NewBuffer(data)
		if _, err := buf.ReadFrom(f); err != nil {
			return plumbing.ZeroHash, nil, fmt.Errorf("gitx: read %s: %w", p, err)
		}
		data = buf.Bytes()
	}
	h, err := c.writeObject(plumbing.BlobObject, data)
	return h, fi, err
}

// writeObject stores an object unless it already exists and returns its hash.
func (c *committer) writeObject(t plumbing.ObjectType, data []byte) (plumbing.Hash, error) {
	h := plumbing.ComputeHash(t, data)
	if c.st.HasEncodedObject(h) == nil {
		return h, nil
	}
	obj := c.st.NewEncodedObject()
	obj.SetType(t)
	obj.SetSize(int64(len(data)))
	w, err := obj.Writer()
	if err != nil {
		return h, err
	}
	if _, err := w.Write(data); err != nil {
		return h, err
	}
	if err := w.Close(); err != nil {
		return h, err
	}
	if _, err := c.st.SetEncodedObject(obj); err != nil {
		return h, fmt.Errorf("gitx: write object: %w", err)
	}
	return h, nil
}

// refreshGitlink points a tracked submodule at the commit its checkout has
// at HEAD, like `git add` does. Unpopulated submodules are left alone.
func (c *committer) refreshGitlink(t *tracked, p string) error {
	head, ok := headHash(c.abs(p))
	if !ok {
		return nil
	}
	if head != t.e.Hash {
		t.e.Hash = head
		c.dirty = true
	}
	return nil
}

// resolveUnseen decides the fate of tracked entries the walk did not visit:
// files below ignored directories are still tracked and are looked up one
// by one; everything else that was not seen has been deleted.
func (c *committer) resolveUnseen() error {
	for p, t := range c.tracked {
		if t.seen || c.inState(p) || t.e.SkipWorktree {
			continue
		}
		parent := path.Dir(p)
		if parent == "." {
			parent = ""
		}
		if c.walked[parent] || !c.leadingDirsOK(parent) {
			t.seen, t.gone = true, true
			continue
		}
		fi, err := os.Lstat(c.abs(p))
		if err != nil {
			if os.IsNotExist(err) || isNotDir(err) {
				t.seen, t.gone = true, true
				continue
			}
			return fmt.Errorf("gitx: stat %s: %w", p, err)
		}
		if fi.IsDir() {
			t.seen = true
			if t.e.Mode == filemode.Submodule {
				if err := c.refreshGitlink(t, p); err != nil {
					return err
				}
			} else {
				t.gone = true
			}
			continue
		}
		if err := c.stage(p, t, fi); err != nil {
			return err
		}
	}
	return nil
}

// leadingDirsOK reports whether every component of the directory rel is a
// real directory (not a symlink), so paths below it name work tree files.
func (c *committer) leadingDirsOK(rel string) bool {
	if rel == "" || c.walked[rel] {
		return true
	}
	if ok, seen := c.dirOK[rel]; seen {
		return ok
	}
	parent := path.Dir(rel)
	if parent == "." {
		parent = ""
	}
	ok := c.leadingDirsOK(parent)
	if ok {
		fi, err := os.Lstat(c.abs(rel))
		ok = err == nil && fi.IsDir()
	}
	c.dirOK[rel] = ok
	return ok
}

// finalEntries returns the sorted entries of the new index: surviving and
// added entries, with the state directory pinned to what HEAD has there.
func (c *committer) finalEntries(headTree plumbing.Hash) ([]*index.Entry, error) {
	entries := make([]*index.Entry, 0, len(c.idx.Entries)+len(c.added))
	var stateEntries []*index.Entry
	for _, e := range c.idx.Entries {
		t := c.tracked[e.Name]
		switch {
		case c.inState(e.Name):
			stateEntries = append(stateEntries, e)
		case t.gone:
			c.dirty = true
		default:
			entries = append(entries, e)
		}
	}
	entries = append(entries, c.added...)

	if c.state != "" {
		pinned, err := c.pinState(headTree, stateEntries)
		if err != nil {
			return nil, err
		}
		entries = append(entries, pinned...)
	}
	sort.Slice(entries, func(i, j int) bool { return entries[i].Name < entries[j].Name })
	for i := 1; i < len(entries); i++ {
		if entries[i].Name == entries[i-1].Name {
			return nil, fmt.Errorf("gitx: duplicate index entry %s", entries[i].Name)
		}
	}
	return entries, nil
}

// pinState makes the index agree with HEAD under the state directory, so
// that nothing there — not even something the user staged — is committed.
func (c *committer) pinState(headTree plumbing.Hash, staged []*index.Entry) ([]*index.Entry, error) {
	want := map[string]treeEntry{}
	if !headTree.IsZero() {
		te, err := findEntry(c.st, headTree, c.state)
		if err != nil && !errors.Is(err, errEntryNotFound) {
			return nil, fmt.Errorf("gitx: read HEAD tree: %w", err)
		}
		if err == nil {
			if te.Mode == filemode.Dir {
				if err := walkFiles(c.st, te.Hash, c.state+"/", func(name string, e treeEntry) { want[name] = e }); err != nil {
					return nil, fmt.Errorf("gitx: read HEAD tree: %w", err)
				}
			} else {
				want[c.state] = *te
			}
		}
	}
	var out []*index.Entry
	for _, e := range staged {
		if w, ok := want[e.Name]; ok && w.Hash == e.Hash && w.Mode == e.Mode {
			out = append(out, e)
			delete(want, e.Name)
			continue
		}
		c.dirty = true
	}
	for name, w := range want {
		out = append(out, &index.Entry{Name: name, Hash: w.Hash, Mode: w.Mode})
		c.dirty = true
	}
	return out, nil
}

// ---------------------------------------------------------------------------
// Stat data.

func timeEq(idx, fs time.Time) bool {
	if idx.Unix() != fs.Unix() {
		return false
	}
	return idx.Nanosecond() == 0 || idx.Nanosecond() == fs.Nanosecond()
}

// statMatches compares the cached stat data of e with fi: size and mtime
// always, ctime and inode when both sides know them.
func statMatches(e *index.Entry, fi os.FileInfo) bool {
	if e.Size != uint32(fi.Size()) || !timeEq(e.ModifiedAt, fi.ModTime()) {
		return false
	}
	if e.CreatedAt.IsZero() && e.Inode == 0 {
		return true
	}
	s, ok := sysStat(fi)
	if !ok {
		return true
	}
	if !e.CreatedAt.IsZero() && !s.ctime.IsZero() && !timeEq(e.CreatedAt, s.ctime) {
		return false
	}
	if e.Inode != 0 && s.ino != 0 && e.Inode != s.ino {
		return false
	}
	return true
}

func fillStat(e *index.Entry, fi os.FileInfo) {
	e.Size = uint32(fi.Size())
	e.ModifiedAt = fi.ModTime()
	e.CreatedAt, e.Dev, e.Inode, e.UID, e.GID = time.Time{}, 0, 0, 0, 0
	if s, ok := sysStat(fi); ok {
		e.CreatedAt, e.Dev, e.Inode, e.UID, e.GID = s.ctime, s.dev, s.ino, s.uid, s.gid
	}
}

type statInfo struct {
	ctime              time.Time
	dev, ino, uid, gid uint32
}

// sysFields caches, per concrete stat type, the field indices read by
// sysStat. The layout of syscall.Stat_t differs between platforms (Ctim on
// Linux, Ctimespec on the BSDs), so it is inspected by reflection once.
var sysFields sync.Map // reflect.Type -> *sysLayout

type sysLayout struct {
	ok                        bool
	ctime, dev, ino, uid, gid int
	ctimeSec, ctimeNsec       int
}

func layoutOf(t reflect.Type) *sysLayout {
	if v, ok := sysFields.Load(t); ok {
		return v.(*sysLayout)
	}
	l := &sysLayout{ctime: -1, dev: -1, ino: -1, uid: -1, gid: -1}
	idx := func(name ...string) int {
		for _, n := range name {
			if f, ok := t.FieldByName(n); ok && len(f.Index) == 1 {
				return f.Index[0]
			}
		}
		return -1
	}
	l.dev, l.ino, l.uid, l.gid = idx("Dev"), idx("Ino"), idx("Uid"), idx("Gid")
	l.ctime = idx("Ctim", "Ctimespec")
	if l.ctime >= 0 {
		ct := t.Field(l.ctime).Type
		if ct.Kind() == reflect.Struct {
			if f, ok := ct.FieldByName("Sec"); ok {
				l.ctimeSec = f.Index[0]
			} else {
				l.ctime = -1
			}
			if f, ok := ct.FieldByName("Nsec"); ok {
				l.ctimeNsec = f.Index[0]
			} else {
				l.ctime = -1
			}
		} else {
			l.ctime = -1
		}
	}
	l.ok = l.ino >= 0
	sysFields.Store(t, l)
	return l
}

func sysStat(fi os.FileInfo) (statInfo, bool) {
	sys := fi.Sys()
	if sys == nil {
		return statInfo{}, false
	}
	v := reflect.ValueOf(sys)
	if v.Kind() != reflect.Pointer || v.IsNil() || v.Elem().Kind() != reflect.Struct {
		return statInfo{}, false
	}
	v = v.Elem()
	l := layoutOf(v.Type())
	if !l.ok {
		return statInfo{}, false
	}
	num := func(i int) uint32 {
		if i < 0 {
			return 0
		}
		f := v.Field(i)
		switch f.Kind() {
		case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64:
			return uint32(f.Int())
		case reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64, reflect.Uintptr:
			return uint32(f.Uint())
		}
		return 0
	}
	var s statInfo
	s.dev, s.ino, s.uid, s.gid = num(l.dev), num(l.ino), num(l.uid), num(l.gid)
	if l.ctime >= 0 {
		ct := v.Field(l.ctime)
		sec, nsec := ct.Field(l.ctimeSec), ct.Field(l.ctimeNsec)
		if sec.CanInt() && nsec.CanInt() {
			s.ctime = time.Unix(sec.Int(), nsec.Int())
		}
	}
	return s, true
}

// ---------------------------------------------------------------------------
// Trees.

type treeDir struct {
	entries []treeEnt
	hash    plumbing.Hash
	data    []byte // encoded tree object
}

type treeEnt struct {
	name string
	mode filemode.FileMode
	hash plumbing.Hash
	sub  *treeDir
}

func (e treeEnt) sortKey() string {
	if e.mode == filemode.Dir {
		return e.name + "/"
	}
	return e.name
}

// buildTree builds, in memory, the tree objects for entries (sorted by
// name) and computes their hashes.
func buildTree(entries []*index.Entry) (*treeDir, error) {
	return buildDir(entries, 0)
}

func buildDir(entries []*index.Entry, prefix int) (*treeDir, error) {
	d := &treeDir{}
	for i := 0; i < len(entries); {
		rest := entries[i].Name[prefix:]
		slash := strings.IndexByte(rest, '/')
		if slash < 0 {
			e := entries[i]
			if rest == "" {
				return nil, fmt.Errorf("gitx: invalid index path %q", e.Name)
			}
			d.entries = append(d.entries, treeEnt{name: rest, mode: e.Mode, hash: e.Hash})
			i++
			continue
		}
		name := rest[:slash]
		if name == "" {
			return nil, fmt.Errorf("gitx: invalid index path %q", entries[i].Name)
		}
		j := i + 1
		dirPrefix := entries[i].Name[:prefix+slash+1]
		for j < len(entries) && strings.HasPrefix(entries[j].Name, dirPrefix) {
			j++
		}
		sub, err := buildDir(entries[i:j], prefix+slash+1)
		if err != nil {
			return nil, err
		}
		d.entries = append(d.entries, treeEnt{name: name, mode: filemode.Dir, hash: sub.hash, sub: sub})
		i = j
	}
	sort.Slice(d.entries, func(i, j int) bool { return d.entries[i].sortKey() < d.entries[j].sortKey() })
	var buf bytes.Buffer
	for i, e := range d.entries {
		if i > 0 && d.entries[i-1].name == e.name {
			return nil, fmt.Errorf("gitx: path %q is both a file and a directory", e.name)
		}
		buf.WriteString(strconv.FormatUint(uint64(e.mode), 8))
		buf.WriteByte(' ')
		buf.WriteString(e.name)
		buf.WriteByte(0)
		buf.Write(e.hash[:])
	}
	d.data = buf.Bytes()
	d.hash = plumbing.ComputeHash(plumbing.TreeObject, d.data)
	return d, nil
}

// writeTrees stores every tree object of d the repository lacks. A tree that
// exists implies its subtrees exist, so those are not descended into.
func (c *committer) writeTrees(d *treeDir) error {
	if c.st.HasEncodedObject(d.hash) == nil {
		return nil
	}
	for _, e := range d.entries {
		if e.sub != nil {
			if err := c.writeTrees(e.sub); err != nil {
				return err
			}
		}
	}
	_, err := c.writeObject(plumbing.TreeObject, d.data)
	return err
}

// diffPaths appends to out the paths (under prefix) that differ between the
// new tree d and the stored tree old (zero hash: empty tree): added,
// modified and deleted files. Identical subtrees are skipped by hash.
func (c *committer) diffPaths(d *treeDir, old plumbing.Hash, prefix string, out *[]string) error {
	if d.hash == old {
		return nil
	}
	var oldEntries []treeEntry
	if !old.IsZero() {
		var err error
		if oldEntries, err = readTree(c.st, old); err != nil {
			return fmt.Errorf("gitx: read tree %s: %w", old, err)
		}
	}
	oldBy := make(map[string]treeEntry, len(oldEntries))
	for _, e := range oldEntries {
		oldBy[e.Name] = e
	}
	for _, e := range d.entries {
		o, ok := oldBy[e.name]
		delete(oldBy, e.name)
		p := prefix + e.name
		var err error
		switch {
		case !ok:
			newPaths(e, prefix, out)
		case e.sub != nil && o.Mode == filemode.Dir:
			err = c.diffPaths(e.sub, o.Hash, p+"/", out)
		case e.sub != nil: // file became a directory
			*out = append(*out, p)
			newPaths(e, prefix, out)
		case o.Mode == filemode.Dir: // directory became a file
			*out = append(*out, p)
			err = c.oldPaths(o.Hash, p+"/", out)
		case o.Hash != e.hash || o.Mode != e.mode:
			*out = append(*out, p)
		}
		if err != nil {
			return err
		}
	}
	for _, o := range oldBy { // deleted
		if o.Mode != filemode.Dir {
			*out = append(*out, prefix+o.Name)
		} else if err := c.oldPaths(o.Hash, prefix+o.Name+"/", out); err != nil {
			return err
		}
	}
	return nil
}

// newPaths appends the files of a new entry (a file, or a whole directory).
func newPaths(e treeEnt, prefix string, out *[]string) {
	if e.sub == nil {
		*out = append(*out, prefix+e.name)
		return
	}
	for _, s := range e.sub.entries {
		newPaths(s, prefix+e.name+"/", out)
	}
}

// oldPaths appends the files of a stored tree that is gone.
func (c *committer) oldPaths(h plumbing.Hash, prefix string, out *[]string) error {
	entries, err := readTree(c.st, h)
	if err != nil {
		return fmt.Errorf("gitx: read tree %s: %w", h, err)
	}
	for _, e := range entries {
		if e.Mode != filemode.Dir {
			*out = append(*out, prefix+e.Name)
		} else if err := c.oldPaths(e.Hash, prefix+e.Name+"/", out); err != nil {
			return err
		}
	}
	return nil
}

// ---------------------------------------------------------------------------
// Index, refs, reflog.

// writeIndex encodes the new index into the (already created) lock file.
func (c *committer) writeIndex(lock io.Writer, entries []*index.Entry) error {
	idx := &index.Index{Version: c.idx.Version, Entries: entries}
	if idx.Version < 2 {
		idx.Version = 2
	}
	if idx.Version == 2 {
		for _, e := range entries {
			if e.SkipWorktree || e.IntentToAdd {
				idx.Version = 3
				break
			}
		}
	}
	var buf bytes.Buffer
	buf.Grow(len(entries) * 100)
	if err := index.NewEncoder(&buf).Encode(idx); err != nil {
		return fmt.Errorf("gitx: encode index: %w", err)
	}
	if _, err := lock.Write(buf.Bytes()); err != nil {
		return fmt.Errorf("gitx: write index: %w", err)
	}
	return nil
}

// updateRef moves name from old (zero: must not exist) to next using git's
// lock-file protocol.
func (c *committer) updateRef(name plumbing.ReferenceName, old, next plumbing.Hash) error {
	file := name.String()
	if dir := path.Dir(file); dir != "." {
		if err := c.dotfs.MkdirAll(dir, 0o777); err != nil {
			return fmt.Errorf("gitx: update %s: %w", name, err)
		}
	}
	lock, err := takeLock(c.dirs.path(file))
	if err != nil {
		return err // says which lock, and what ends it
	}
	ok := false
	defer func() {
		if !ok {
			lock.abort()
		}
	}()
	cur := plumbing.ZeroHash
	ref, err := c.st.Reference(name)
	switch {
	case err == nil && ref.Type() == plumbing.HashReference:
		cur = ref.Hash()
	case err == nil:
		return fmt.Errorf("gitx: update %s: unexpected symbolic reference", name)
	case !errors.Is(err, plumbing.ErrReferenceNotFound):
		return fmt.Errorf("gitx: update %s: %w", name, err)
	}
	if cur != old {
		return fmt.Errorf("gitx: update %s: reference moved concurrently (%s, expected %s)", name, cur, old)
	}
	if _, err := lock.f.Write([]byte(next.String() + "\n")); err != nil {
		return fmt.Errorf("gitx: update %s: %w", name, err)
	}
	crashpoint.Hit("gitx.commit.ref")
	if err := lock.commit(); err != nil {
		return fmt.Errorf("gitx: update %s: %w", name, err)
	}
	ok = true
	return nil
}

// appendReflog records the update in logs/<ref> and logs/HEAD, as git
// commit does. Failures are ignored: the commit itself has been made.
func (c *committer) appendReflog(name plumbing.ReferenceName, old, next plumbing.Hash, sig signature, msg string) {
	subject, _, _ := strings.Cut(msg, "\n")
	what := "commit: "
	if old.IsZero() {
		what = "commit (initial): "
	}
	_, offset := sig.When.Zone()
	sign := '+'
	if offset < 0 {
		sign, offset = '-', -offset
	}
	line := fmt.Sprintf("%s %s %s <%s> %d %c%02d%02d\t%s%s\n",
		old, next, sig.Name, sig.Email, sig.When.Unix(), sign, offset/3600, (offset%3600)/60, what, subject)
	logs := []string{"logs/" + name.String()}
	if name != plumbing.HEAD {
		logs = append(logs, "logs/HEAD")
	}
	for _, l := range logs {
		if err := c.dotfs.MkdirAll(path.Dir(l), 0o777); err != nil {
			continue
		}
		f, err := c.dotfs.OpenFile(l, os.O_CREATE|os.O_APPEND|os.O_WRONLY, 0o666)
		if err != nil {
			continue
		}
		f.Write([]byte(line))
		f.Close()
	}
}

// ---------------------------------------------------------------------------
// Configuration.

// configSet is a stack of git config files, highest priority first.
type configSet struct {
	files []*formatcfg.Config
}

func (s *configSet) get(section, key string) string {
	for _, f := range s.files {
		if f == nil || !f.HasSection(section) {
			continue
		}
		if o := f.Section(section).Options; o.Has(key) {
			return o.Get(key)
		}
	}
	return ""
}

func isFalse(v string) bool {
	switch strings.ToLower(strings.TrimSpace(v)) {
	case "false", "no", "off", "0":
		return true
	}
	return false
}

func isTrue(v string) bool {
	switch strings.ToLower(strings.TrimSpace(v)) {
	case "true", "yes", "on", "1":
		return true
	}
	return false
}

func xdgConfigHome() string {
	if x := os.Getenv("XDG_CONFIG_HOME"); x != "" {
		return x
	}
	if h, err := os.UserHomeDir(); err == nil {
		return filepath.Join(h, ".config")
	}
	return ""
}

func expandHome(p string) string {
	if p == "~" || strings.HasPrefix(p, "~/") {
		if h, err := os.UserHomeDir(); err == nil {
			return filepath.Join(h, p[1:])
		}
	}
	return p
}

// loadConfig reads the repository config, then the global config
// (~/.gitconfig over $XDG_CONFIG_HOME/git/config, or $GIT_CONFIG_GLOBAL),
// then the system config (/etc/gitconfig, unless $GIT_CONFIG_NOSYSTEM).
func loadConfig(st *filesystem.Storage) (*configSet, error) {
	s := &configSet{}
	local, err := st.Config()
	if err != nil {
		return nil, fmt.Errorf("gitx: read repository config: %w", err)
	}
	s.files = append(s.files, local.Raw)
	var paths []string
	if g, ok := os.LookupEnv("GIT_CONFIG_GLOBAL"); ok {
		paths = append(paths, g)
	} else {
		if h, err := os.UserHomeDir(); err == nil {
			paths = append(paths, filepath.Join(h, ".gitconfig"))
		}
		if x := xdgConfigHome(); x != "" {
			paths = append(paths, filepath.Join(x, "git", "config"))
		}
	}
	if !isTrue(os.Getenv("GIT_CONFIG_NOSYSTEM")) {
		if sys := os.Getenv("GIT_CONFIG_SYSTEM"); sys != "" {
			paths = append(paths, sys)
		} else {
			paths = append(paths, "/etc/gitconfig")
		}
	}
	for _, p := range paths {
		if p == "" || p == os.DevNull {
			continue
		}
		b, err := os.ReadFile(p)
		if err != nil {
			continue
		}
		raw := formatcfg.New()
		if err := formatcfg.NewDecoder(bytes.NewReader(b)).Decode(raw); err != nil {
			continue // git would fail; an unreadable global config must not block pm
		}
		s.files = append(s.files, raw)
	}
	return s, nil
}

var badSigChars = strings.NewReplacer("<", "", ">", "", "\n", "")

func (c *committer) signature(now time.Time) signature {
	name := strings.TrimSpace(badSigChars.Replace(c.cfg.get("user", "name")))
	email := strings.TrimSpace(badSigChars.Replace(c.cfg.get("user", "email")))
	if name == "" {
		name = fallbackName
	}
	if email == "" {
		email = fallbackEmail
	}
	return signature{Name: name, Email: email, When: now}
}

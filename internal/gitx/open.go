package gitx

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"github.com/go-git/go-billy/v5"
	"github.com/go-git/go-billy/v5/osfs"
	"github.com/go-git/go-git/v5/plumbing"
	"github.com/go-git/go-git/v5/plumbing/cache"
	"github.com/go-git/go-git/v5/plumbing/storer"
	"github.com/go-git/go-git/v5/storage/filesystem"
	"github.com/go-git/go-git/v5/storage/filesystem/dotgit"
)

// errNoRepo: no repository holds the directory.
var errNoRepo = errors.New("no git repository")

// repoDirs are the OS paths behind a work tree's .git: the git dir (where
// HEAD and the index are) and, for a linked work tree, the common dir (where
// objects and refs are; "" otherwise).
type repoDirs struct {
	git, common string
}

// of is the directory that holds name (slash-separated, relative to the git
// dir), as dotgit.RepositoryFilesystem routes it: the common dir's part of
// the layout (gitrepository-layout) is objects, refs (but refs/bisect,
// refs/rewritten and refs/worktree), packed-refs, config, info, logs (but
// logs/HEAD) and a few more; the rest (HEAD, index) is per work tree.
func (d repoDirs) of(name string) string {
	if d.common == "" {
		return d.git
	}
	switch name {
	case "logs/HEAD", "refs/bisect", "refs/rewritten", "refs/worktree":
		return d.git
	}
	for _, p := range []string{"refs/bisect/", "refs/rewritten/", "refs/worktree/"} {
		if strings.HasPrefix(name, p) {
			return d.git
		}
	}
	first, _, _ := strings.Cut(name, "/")
	switch first {
	case "objects", "refs", "packed-refs", "config", "branches", "hooks", "info", "remotes", "logs", "shallow", "worktrees":
		return d.common
	}
	return d.git
}

// path is name's OS path.
func (d repoDirs) path(name string) string {
	return filepath.Join(d.of(name), filepath.FromSlash(name))
}

// openRepository opens the repository whose work tree holds dir, as go-git's
// PlainOpenWithOptions with DetectDotGit and EnableDotGitCommonDir does
// (without linking the top-level go-git package, see objects.go): the
// nearest .git up from dir, a directory or a "gitdir:" file (a linked work
// tree, whose commondir is followed), with HEAD present and no repository
// extension go-git would refuse. root is the work tree's absolute path.
func openRepository(dir string) (st *filesystem.Storage, root string, dirs repoDirs, err error) {
	root, err = findWorkTree(dir)
	if err != nil {
		return nil, "", repoDirs{}, err
	}
	if dirs, err = resolveDirs(root); err != nil {
		return nil, "", repoDirs{}, err
	}
	st, err = openDirs(dirs, cache.NewObjectLRUDefault(), filesystem.Options{})
	return st, root, dirs, err
}

// findWorkTree is the nearest directory at or above dir that holds a .git
// entry (of any type: it is not followed here).
func findWorkTree(dir string) (string, error) {
	path, err := filepath.Abs(dir)
	if err != nil {
		return "", err
	}
	if fi, err := os.Stat(path); err == nil && !fi.IsDir() {
		path = filepath.Dir(path)
	}
	for {
		_, err := os.Lstat(filepath.Join(path, ".git"))
		if err == nil {
			return path, nil
		}
		if !os.IsNotExist(err) {
			return "", err
		}
		parent := filepath.Dir(path)
		if parent == path {
			return "", errNoRepo
		}
		path = parent
	}
}

// openAt opens the repository of the work tree at path (path/.git must be
// there): the storage behind its .git directory or file.
func openAt(path string) (*filesystem.Storage, error) {
	return openAtWith(path, cache.NewObjectLRUDefault(), filesystem.Options{})
}

// openAtWith is openAt with the storage's object cache and options.
func openAtWith(path string, objects cache.Object, opts filesystem.Options) (*filesystem.Storage, error) {
	dirs, err := resolveDirs(path)
	if err != nil {
		return nil, err
	}
	return openDirs(dirs, objects, opts)
}

// resolveDirs finds the git dir and common dir behind path/.git.
func resolveDirs(path string) (repoDirs, error) {
	git, err := dotGitDir(path)
	if err != nil {
		return repoDirs{}, err
	}
	if _, err := os.Stat(git); err != nil {
		if os.IsNotExist(err) {
			return repoDirs{}, errNoRepo
		}
		return repoDirs{}, err
	}
	common, err := commonDir(git)
	if err != nil {
		return repoDirs{}, err
	}
	return repoDirs{git: git, common: common}, nil
}

// openDirs opens the storage of the repository at dirs, with HEAD present
// and no extension go-git would refuse.
func openDirs(dirs repoDirs, objects cache.Object, opts filesystem.Options) (*filesystem.Storage, error) {
	// go-git reads the config with a plain open: a FIFO there would hang.
	if f, err := openRegular(dirs.path("config")); err == nil {
		f.Close()
	} else if !os.IsNotExist(err) {
		return nil, err
	}
	var dot billy.Filesystem = osfs.New(dirs.git)
	if dirs.common != "" {
		dot = dotgit.NewRepositoryFilesystem(dot, osfs.New(dirs.common))
	}
	st := filesystem.NewStorageWithOptions(dot, objects, opts)
	if _, err := st.Reference(plumbing.HEAD); errors.Is(err, plumbing.ErrReferenceNotFound) {
		return nil, errNoRepo
	}
	if err := checkExtensions(st); err != nil {
		return nil, err
	}
	return st, nil
}

// dotGitDir is path/.git, or where a "gitdir: DIR" file there points.
func dotGitDir(path string) (string, error) {
	p := filepath.Join(path, ".git")
	fi, err := os.Stat(p)
	if err != nil {
		return "", err
	}
	if fi.IsDir() {
		return p, nil
	}
	gitdir, err := readGitdirFile(p)
	if err != nil {
		return "", err
	}
	if !filepath.IsAbs(gitdir) {
		gitdir = filepath.Join(path, gitdir)
	}
	return gitdir, nil
}

// readGitdirFile is the DIR of a "gitdir: DIR" file, read through a bound:
// the file is in the work tree, where anything may be put.
func readGitdirFile(p string) (string, error) {
	b, err := readSmallFile(p, 64<<10)
	if err != nil {
		return "", err
	}
	rest, ok := strings.CutPrefix(string(b), "gitdir: ")
	if !ok {
		return "", errors.New(".git file has no gitdir: prefix")
	}
	return strings.TrimSpace(strings.Split(rest, "\n")[0]), nil
}

// commonDir is the repository a linked work tree's commondir file names
// ("" without one).
func commonDir(git string) (string, error) {
	b, err := readSmallFile(filepath.Join(git, "commondir"), 64<<10)
	if os.IsNotExist(err) || err == nil && len(b) == 0 {
		return "", nil
	}
	if err != nil {
		return "", err
	}
	p := strings.TrimSpace(string(b))
	if !filepath.IsAbs(p) {
		p = filepath.Join(git, p)
	}
	if _, err := os.Stat(p); err != nil {
		if os.IsNotExist(err) {
			return "", errors.New("repository is incomplete: its commondir is missing")
		}
		return "", err
	}
	return p, nil
}

// checkExtensions refuses what go-git's Open refuses: a format version past
// 1, and repository extensions it does not implement (only noop ones; in
// format 0 only those git accepted before format 1).
func checkExtensions(st *filesystem.Storage) error {
	cfg, err := st.Config()
	if err != nil {
		return err
	}
	version := string(cfg.Core.RepositoryFormatVersion)
	if version != "" && version != "0" && version != "1" {
		return fmt.Errorf("core.repositoryformatversion not supported: %q", version)
	}
	if cfg.Raw == nil || !cfg.Raw.HasSection("extensions") {
		return nil
	}
	validV0 := map[string]bool{"noop": true, "partialclone": true, "preciousobjects": true, "worktreeconfig": true}
	var refused []string
	for _, opt := range cfg.Raw.Section("extensions").Options {
		name := strings.ToLower(opt.Key)
		if name == "noop" || name == "noop-v1" && version == "1" {
			continue
		}
		if (version == "" || version == "0") && !validV0[name] {
			return fmt.Errorf("core.repositoryformatversion does not support extension: %s", name)
		}
		refused = append(refused, name)
	}
	if len(refused) > 0 {
		return fmt.Errorf("unknown extension: %s", strings.Join(refused, ", "))
	}
	return nil
}

// headHash resolves the HEAD of the repository at path (a submodule's
// checkout); ok is false when there is none.
func headHash(path string) (plumbing.Hash, bool) {
	st, err := openAt(path)
	if err != nil {
		return plumbing.ZeroHash, false
	}
	ref, err := storer.ResolveReference(st, plumbing.HEAD)
	if err != nil {
		return plumbing.ZeroHash, false
	}
	return ref.Hash(), true
}

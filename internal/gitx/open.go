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

// openRepository opens the repository whose work tree holds dir, as go-git's
// PlainOpenWithOptions with DetectDotGit and EnableDotGitCommonDir does
// (without linking the top-level go-git package, see objects.go): the
// nearest .git up from dir, a directory or a "gitdir:" file (a linked work
// tree, whose commondir is followed), with HEAD present and no repository
// extension go-git would refuse. root is the work tree's absolute path.
func openRepository(dir string) (st *filesystem.Storage, root string, err error) {
	path, err := filepath.Abs(dir)
	if err != nil {
		return nil, "", err
	}
	if fi, err := os.Stat(path); err == nil && !fi.IsDir() {
		path = filepath.Dir(path)
	}
	for {
		_, err := os.Lstat(filepath.Join(path, ".git"))
		if err == nil {
			break
		}
		if !os.IsNotExist(err) {
			return nil, "", err
		}
		parent := filepath.Dir(path)
		if parent == path {
			return nil, "", errNoRepo
		}
		path = parent
	}
	st, err = openAt(path)
	return st, path, err
}

// openAt opens the repository of the work tree at path (path/.git must be
// there): the storage behind its .git directory or file.
func openAt(path string) (*filesystem.Storage, error) {
	return openAtWith(path, cache.NewObjectLRUDefault(), filesystem.Options{})
}

// openAtWith is openAt with the storage's object cache and options.
func openAtWith(path string, objects cache.Object, opts filesystem.Options) (*filesystem.Storage, error) {
	dot, err := dotGitDir(path)
	if err != nil {
		return nil, err
	}
	if _, err := dot.Stat(""); err != nil {
		if os.IsNotExist(err) {
			return nil, errNoRepo
		}
		return nil, err
	}
	common, err := commonDir(dot)
	if err != nil {
		return nil, err
	}
	if common != nil {
		dot = dotgit.NewRepositoryFilesystem(dot, common)
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
func dotGitDir(path string) (billy.Filesystem, error) {
	p := filepath.Join(path, ".git")
	fi, err := os.Stat(p)
	if err != nil {
		return nil, err
	}
	if fi.IsDir() {
		return osfs.New(p), nil
	}
	b, err := os.ReadFile(p)
	if err != nil {
		return nil, err
	}
	rest, ok := strings.CutPrefix(string(b), "gitdir: ")
	if !ok {
		return nil, errors.New(".git file has no gitdir: prefix")
	}
	gitdir := strings.TrimSpace(strings.Split(rest, "\n")[0])
	if !filepath.IsAbs(gitdir) {
		gitdir = filepath.Join(path, gitdir)
	}
	return osfs.New(gitdir), nil
}

// commonDir is the repository a linked work tree's commondir file names
// (nil without one).
func commonDir(dot billy.Filesystem) (billy.Filesystem, error) {
	b, err := os.ReadFile(filepath.Join(dot.Root(), "commondir"))
	if os.IsNotExist(err) || err == nil && len(b) == 0 {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	p := strings.TrimSpace(string(b))
	if !filepath.IsAbs(p) {
		p = filepath.Join(dot.Root(), p)
	}
	if _, err := os.Stat(p); err != nil {
		if os.IsNotExist(err) {
			return nil, errors.New("repository is incomplete: its commondir is missing")
		}
		return nil, err
	}
	return osfs.New(p), nil
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

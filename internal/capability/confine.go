package capability

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"syscall"

	"github.com/plasmodium/pm/internal/errs"
	"github.com/plasmodium/pm/internal/store"
)

// confinement confines the file primitives to a workspace. Two layers:
//
//   - resolve and path check the path as given, lexically and through
//     symlinks as they are now. They only choose the error a model reads
//     ("outside the workspace", "pm's state directory", ...): what they
//     checked may change before the file is opened.
//   - open, openDir and create are the containment. They open through an
//     os.Root on the workspace, so the kernel refuses ".." and symlinks that
//     lead out at the moment of the open; then admit checks the open handle
//     (where the kernel says it is, its type, its link count) and the
//     primitive reads or writes that handle only. Nothing is looked up by
//     name again after the check.
type confinement struct {
	abs  string   // the workspace as given, absolute and clean
	root string   // the workspace with symlinks resolved
	deny []string // real paths under root that no primitive may touch: pm's state
	// keep are real paths under root that may be read but not written: the
	// repository's .git (hooks and config run code outside any sandbox) and
	// the project's prompts/ (they would redefine every agent on reload).
	keep []string
}

func newConfinement(env *Env) (*confinement, error) {
	ws := env.Workspace
	if ws == "" && env.Store != nil {
		ws = env.Store.ProjectDir()
	}
	if ws == "" {
		return nil, errs.Failf("", "no workspace to work in")
	}
	abs, err := filepath.Abs(ws)
	if err != nil {
		return nil, err
	}
	root, err := filepath.EvalSymlinks(abs)
	if err != nil {
		return nil, errs.Failf("", "workspace %s: %v", ws, err)
	}
	b := &confinement{abs: abs, root: root, deny: []string{filepath.Join(root, store.DirName)},
		keep: []string{filepath.Join(root, ".git"), filepath.Join(root, "prompts")}}
	if env.Store != nil {
		if r, err := filepath.EvalSymlinks(env.Store.Root); err == nil {
			b.deny = append(b.deny, r)
		}
	}
	return b, nil
}

func within(root, p string) bool {
	rel, err := filepath.Rel(root, p)
	return err == nil && rel != ".." && !strings.HasPrefix(rel, ".."+string(filepath.Separator)) && !filepath.IsAbs(rel)
}

func outside(p string) error {
	return errs.Usagef("use a path inside the workspace, relative to it, e.g. src/main.go", "%q is outside the workspace", p)
}

func throughSymlink(p string) error {
	return errs.Usagef("use a path inside the workspace", "%q leads outside the workspace (through a symlink)", p)
}

// resolve maps a path given by the model to a real path inside the
// workspace, and that path relative to the workspace. The deepest existing
// ancestor is resolved through symlinks (a dangling link is refused), so
// neither ".." nor a symlink can lead out as things stand now; open makes
// sure of it when it matters.
func (b *confinement) resolve(p string) (real, rel string, err error) {
	if strings.ContainsRune(p, 0) {
		return "", "", errs.Usagef("", "path contains a NUL byte")
	}
	given := p
	if strings.TrimSpace(p) == "" {
		p = "."
	}
	var full string
	switch {
	case !filepath.IsAbs(p):
		full = filepath.Join(b.root, p)
	case within(b.root, filepath.Clean(p)):
		full = filepath.Clean(p)
	case within(b.abs, filepath.Clean(p)):
		r, _ := filepath.Rel(b.abs, filepath.Clean(p))
		full = filepath.Join(b.root, r)
	default:
		return "", "", outside(given)
	}
	if !within(b.root, full) {
		return "", "", outside(given)
	}
	// Find the deepest ancestor that exists (a symlink counts, dangling or not).
	existing, rest := full, ""
	for {
		if _, err := os.Lstat(existing); err == nil {
			break
		} else if !errors.Is(err, fs.ErrNotExist) && !errors.Is(err, syscall.ENOTDIR) {
			return "", "", err
		}
		parent := filepath.Dir(existing)
		rest = filepath.Join(filepath.Base(existing), rest)
		if parent == existing {
			return "", "", outside(given)
		}
		existing = parent
	}
	resolved, err := filepath.EvalSymlinks(existing)
	if err != nil {
		return "", "", errs.Usagef("", "%q: %s is a dangling or looping symlink", given, existing)
	}
	real = filepath.Join(resolved, rest)
	if !within(b.root, real) {
		return "", "", throughSymlink(given)
	}
	rel, _ = filepath.Rel(b.root, real)
	return real, filepath.ToSlash(rel), nil
}

// path resolves p and checks it may be read (write false) or written (write
// true) as things stand: the one place primitives turn a model's path into
// one relative to the workspace, for open and the messages.
func (b *confinement) path(p string, write bool) (real, rel string, err error) {
	if real, rel, err = b.resolve(p); err != nil {
		return "", "", err
	}
	if err := b.allowed(real, p, write); err != nil {
		return "", "", err
	}
	return real, rel, nil
}

// allowed checks a real path against the deny and keep lists.
func (b *confinement) allowed(real, given string, write bool) error {
	if err := b.readable(real, given); err != nil {
		return err
	}
	if write {
		return b.writable(real, given)
	}
	return nil
}

// readable refuses pm's state directory: agents see each other only through
// pm operations, not by reading transcripts and requests.
func (b *confinement) readable(real, given string) error {
	for _, d := range b.deny {
		if real == d || within(d, real) {
			return errs.Usagef("use pm operations (chat, history, status) to see pm's state",
				"%q is inside pm's state directory, which primitives may not touch", given)
		}
	}
	return nil
}

func (b *confinement) writable(real, given string) error {
	for _, d := range b.keep {
		if real == d || within(d, real) {
			return errs.Usagef("write your work elsewhere in the workspace; prompt objects change through create_capability",
				"%q is read-only to agents (.git and prompts/)", given)
		}
	}
	return nil
}

// open opens rel (relative to the workspace) through an os.Root, so the
// kernel refuses any way out, then admits the handle.
func (b *confinement) open(rel, given string, flag int, write bool) (*os.File, fs.FileInfo, error) {
	f, st, err := b.openRaw(rel, given, flag, write)
	if err != nil && errors.Is(err, fs.ErrNotExist) {
		return nil, nil, b.openError(err, rel, given)
	}
	return f, st, err
}

// openRaw is open with a missing file left as fs.ErrNotExist.
func (b *confinement) openRaw(rel, given string, flag int, write bool) (*os.File, fs.FileInfo, error) {
	root, err := os.OpenRoot(b.root)
	if err != nil {
		return nil, nil, err
	}
	defer root.Close()
	f, err := root.OpenFile(rel, flag|syscall.O_NONBLOCK, 0)
	if err != nil {
		if errors.Is(err, fs.ErrNotExist) {
			return nil, nil, err
		}
		return nil, nil, b.openError(err, rel, given)
	}
	st, err := b.admit(f, given, write)
	if err != nil {
		f.Close()
		return nil, nil, err
	}
	return f, st, nil
}

// openForWrite opens rel for writing: an existing file through openRaw
// (O_TRUNC is not given to open: nothing changes before the handle is
// admitted), else a new one through create; then refuses what is not a
// regular file and truncates unless appending.
func (b *confinement) openForWrite(rel, given string, appendTo bool) (*os.File, error) {
	flag := os.O_WRONLY
	if appendTo {
		flag |= os.O_APPEND
	}
	f, st, err := b.openRaw(rel, given, flag, true)
	if errors.Is(err, fs.ErrNotExist) {
		f, st, err = b.create(rel, given, flag)
	}
	if err != nil {
		return nil, err
	}
	if !st.Mode().IsRegular() {
		f.Close()
		return nil, errs.Usagef("", "%s is not a regular file", rel)
	}
	if !appendTo {
		if err := f.Truncate(0); err != nil {
			f.Close()
			return nil, err
		}
	}
	return f, nil
}

// openError turns an error of the open into what the model reads.
func (b *confinement) openError(err error, rel, given string) error {
	switch {
	case errors.Is(err, fs.ErrNotExist):
		return errs.NotFoundf("see what is there with list_files", "no file %s", rel)
	case errors.Is(err, syscall.EISDIR):
		return errs.Usagef("", "%s is a directory", rel)
	case errors.Is(err, syscall.ENXIO):
		return errs.Usagef("", "%s is not a regular file", rel) // a FIFO with no reader, a socket
	case errors.Is(err, syscall.ELOOP):
		return errs.Usagef("", "%q: a symlink loops or changed while it was opened; try again", given)
	case escapes(err):
		return throughSymlink(given)
	}
	return err
}

// escapes reports an os.Root refusal of a path that leads out of it; os has
// no exported error for it, so its text is the only mark.
func escapes(err error) bool {
	return err != nil && strings.Contains(err.Error(), "path escapes from parent")
}

// admit checks an open handle where the kernel says it is: inside the
// workspace, not in pm's state (nor, for writing, in .git or prompts/); and
// a regular file has exactly one link. A second link may name a file
// outside the workspace, so the primitives refuse it for reads too: reading
// a planted hard link to a key outside would otherwise leak it (a few tools
// hard-link on purpose, pnpm's store for one; read those with run_command).
func (b *confinement) admit(f *os.File, given string, write bool) (fs.FileInfo, error) {
	real, err := location(f)
	if err != nil {
		return nil, fmt.Errorf("where is %s: %w", given, err)
	}
	if real != b.root && !within(b.root, real) {
		return nil, throughSymlink(given)
	}
	if err := b.allowed(real, given, write); err != nil {
		return nil, err
	}
	st, err := f.Stat()
	if err != nil {
		return nil, err
	}
	if n := links(st); st.Mode().IsRegular() && n > 1 {
		return nil, errs.Usagef("copy the content with run_command if you must read it",
			"%q has %d hard links: a link may name a file outside the workspace, so primitives do not follow it", given, n)
	}
	return st, nil
}

func links(st fs.FileInfo) uint64 {
	if s, ok := st.Sys().(*syscall.Stat_t); ok {
		return uint64(s.Nlink)
	}
	return 1
}

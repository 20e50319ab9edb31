package sandbox

import (
	"os"
	"path/filepath"

	"github.com/landlock-lsm/go-landlock/landlock"
	ll "github.com/landlock-lsm/go-landlock/landlock/syscall"
)

// devices commands may write: the sinks and sources shells redirect to.
var devices = []string{"/dev/null", "/dev/zero", "/dev/full"}

// restrict applies Landlock to this process: file access by p, then the
// network (when p denies it), then IPC scoping (signals and abstract unix
// sockets stay inside the command), each best effort down to the kernel's
// ABI.
func restrict(p Policy) error {
	cfg := landlock.V11.BestEffort()
	writable := append([]string{p.Workspace, p.TempDir}, p.Writable...)
	var rules []landlock.Rule
	if p.MountNS {
		// The state is already hidden under an empty mount, .git and the
		// prompts are read-only mounts. Writable may name files (a CLI's
		// state file): a directory rule on a file is refused.
		dirs, files := splitDirs(writable)
		rules = append(rules, landlock.RODirs("/"), landlock.RWDirs(dirs...).WithRefer(), landlock.RWFiles(files...).IgnoreIfMissing())
	} else {
		rules = append(rules, coverRules(p, writable)...)
	}
	rules = append(rules, landlock.RWFiles(devices...).IgnoreIfMissing())
	if err := cfg.RestrictPaths(rules...); err != nil {
		return err
	}
	if p.DenyNetwork {
		if err := cfg.RestrictNet(); err != nil {
			return err
		}
	}
	return cfg.RestrictScoped()
}

// coverRules grants without a mount namespace: listing everywhere (names
// in the state directory included: Landlock cannot take a right back
// below where it granted it), reading and executing everything but the
// hidden paths, writing the workspace but the hidden and read-only paths.
func coverRules(p Policy, writable []string) []landlock.Rule {
	readDir := landlock.PathAccess(landlock.AccessFSSet(ll.AccessFSReadDir), "/")
	rules := []landlock.Rule{readDir}
	// A path listed by cover may vanish before its rule is made (another
	// process's temporary file): it has nothing left to grant, and one that
	// reappears stays denied, so skipping it fails closed.
	rd, rf := cover("/", p.Hide)
	rules = append(rules, landlock.RODirs(rd...).IgnoreIfMissing(), landlock.ROFiles(rf...).IgnoreIfMissing())
	// Writes exclude the read-only paths as well (Landlock cannot take a
	// right back below where it granted it: they are left out instead).
	excluded := append(append([]string(nil), p.Hide...), p.ReadOnly...)
	for _, w := range writable {
		wd, wf := cover(w, excluded)
		rules = append(rules, landlock.RWDirs(wd...).WithRefer().IgnoreIfMissing(), landlock.RWFiles(wf...).IgnoreIfMissing())
	}
	return rules
}

// cover returns directories and files whose subtrees together hold
// everything under top except the hidden paths: top itself when nothing
// hidden is under it, else the cover of each of its entries. Symlinks are
// skipped (a rule on one would grant its target; what it leads to is
// covered where it lies).
func cover(top string, hidden []string) (dirs, files []string) {
	holds := false
	for _, h := range hidden {
		if h == top {
			return nil, nil
		}
		if within(top, h) {
			holds = true
		}
	}
	st, err := os.Lstat(top)
	switch {
	case err != nil || st.Mode()&os.ModeSymlink != 0:
		return nil, nil
	case !st.IsDir():
		return nil, []string{top}
	case !holds:
		return []string{top}, nil
	}
	ents, err := os.ReadDir(top)
	if err != nil {
		return nil, nil
	}
	for _, e := range ents {
		d, f := cover(filepath.Join(top, e.Name()), hidden)
		dirs, files = append(dirs, d...), append(files, f...)
	}
	return dirs, files
}

// within reports whether p lies strictly under dir.
func within(dir, p string) bool {
	rel, err := filepath.Rel(dir, p)
	return err == nil && rel != "." && rel != ".." && !filepath.IsAbs(rel) && (len(rel) < 3 || rel[:3] != "../")
}

// splitDirs sorts paths into directories and the rest (files; what is
// missing or unreadable goes there too, where IgnoreIfMissing skips it).
func splitDirs(paths []string) (dirs, files []string) {
	for _, p := range paths {
		if st, err := os.Stat(p); err == nil && st.IsDir() {
			dirs = append(dirs, p)
		} else {
			files = append(files, p)
		}
	}
	return dirs, files
}

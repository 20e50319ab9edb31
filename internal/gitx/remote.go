package gitx

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strings"
	"syscall"
	"time"

	"github.com/go-git/go-git/v5/plumbing"
	"github.com/go-git/go-git/v5/plumbing/cache"
	"github.com/go-git/go-git/v5/storage/filesystem"
)

// Code through a git remote (issue 24, docs/distributed.md "Code through a
// git remote"): the one place pm runs the git binary, for what go-git's
// storage cannot do without its transports: fetch and push.
//
// The git it runs is steered by nothing in the repository: it runs in a
// mirror directory of pm's own (Remote.Mirror, in the state directory),
// whose config pm writes at each use, with GIT_DIR set to it and
// GIT_OBJECT_DIRECTORY set to the repository's object store, so fetched
// objects land where worktrees and merges read them while the
// repository's config (hooks, core.sshCommand, credential helpers,
// url rewrites, include.path...), its hooks and its refs are never read by
// that git. The remote's URL is read by pm from the repository's config
// (remote.NAME.url), and only plain transports are let through (ssh, git,
// http(s), file and local paths; ext:: and fd:: are refused). The user's
// own global and system config still apply (their credentials and ssh
// setup), with hooks, fsmonitor and automatic gc switched off on the
// command line. No prompt can hang: GIT_TERMINAL_PROMPT=0, no askpass,
// stdin empty and a session without a controlling terminal (ssh cannot
// open /dev/tty).

// ErrNoRemote: the repository has no remote of that name.
var ErrNoRemote = errors.New("no such git remote")

// ErrUnreachable: the remote could not be reached (no answer, refused,
// not found); pm's mirror is not at fault and is kept.
var ErrUnreachable = errors.New("the git remote cannot be reached")

// ErrDenied: the remote refused this machine's credentials (or asked for
// some, and nothing may prompt); pm's mirror is kept.
var ErrDenied = errors.New("the git remote refused this machine's credentials")

// remoteError is git's error of reaching the remote, of kind ErrUnreachable
// or ErrDenied: errors.Is finds the kind, the message stays git's.
type remoteError struct{ kind, err error }

func (e *remoteError) Error() string { return e.err.Error() }
func (e *remoteError) Unwrap() error { return e.err }

// Is finds the kind; a remote that did not answer in time is also
// unreachable.
func (e *remoteError) Is(target error) bool {
	return target == e.kind || e.kind == ErrNoAnswer && target == ErrUnreachable
}

// ErrNoAnswer: the remote took no answer within the run's time (it took
// the connection and said nothing, or was slower than the bound); it is
// also ErrUnreachable. A longer bound (git.remote_timeout) may mend it.
var ErrNoAnswer = errors.New("the git remote did not answer in time")

// ErrStale: a push's compare-and-set failed, another machine moved the
// branch first (fetch and try again).
var ErrStale = errors.New("the remote branch moved meanwhile")

// DefaultTimeout bounds one git fetch or push (an unreachable host that
// does not refuse the connection) when the Remote sets no Timeout of its
// own.
const DefaultTimeout = 2 * time.Minute

// Remote is a repository's git remote as pm talks to it.
type Remote struct {
	Name   string // the remote's name in the repository's config (origin)
	URL    string // remote.NAME.url
	Mirror string // pm's mirror directory: a bare git dir holding the remote's branches
	// Timeout bounds each Fetch, Push or Delete (0: DefaultTimeout), its
	// wait for the mirror's lock included: a remote that takes the
	// connection and never answers is ErrNoAnswer (an ErrUnreachable)
	// once it has passed, a mirror another pm process held all along
	// ErrBusy.
	Timeout time.Duration
	objects string
	repo    Pin // the checkout, whose remote-tracking refs seed a new mirror
}

// RemoteOf is p's remote name, with the mirror directory pm keeps for it
// at mirror. A remote that is not configured is ErrNoRemote; a URL of a
// transport that runs a command (ext::, fd::) is refused. It only reads:
// the mirror is made (and seeded) by the first fetch.
func RemoteOf(p Pin, name, mirror string) (Remote, error) {
	st, _, err := openPin(p)
	if err != nil {
		return Remote{}, err
	}
	cfg, err := st.Config()
	if err != nil {
		return Remote{}, fmt.Errorf("gitx: read repository config: %w", err)
	}
	// The raw value: go-git's decoded remotes apply url.*.insteadOf, a
	// rewrite the repository's config would steer.
	url := ""
	if cfg.Raw.Section("remote").HasSubsection(name) {
		url = cfg.Raw.Section("remote").Subsection(name).Option("url")
	}
	if url == "" {
		return Remote{}, fmt.Errorf("%w: %q", ErrNoRemote, name)
	}
	if err := checkURL(url); err != nil {
		return Remote{}, err
	}
	if localRelative(url) {
		// git resolves it from where it runs: the checkout, not pm's mirror.
		url = filepath.Join(p.WorkTree, url)
	}
	return Remote{Name: name, URL: url, Mirror: mirror, objects: filepath.Join(common(p), "objects"), repo: p}, nil
}

// localRelative reports a URL that is a relative local path (not scheme://,
// not ssh's host:path, whose colon comes before any slash).
func localRelative(url string) bool {
	if strings.Contains(url, "://") || filepath.IsAbs(url) {
		return false
	}
	colon, slash := strings.Index(url, ":"), strings.Index(url, "/")
	return colon < 0 || slash >= 0 && slash < colon
}

// seedMirror gives a mirror without refs the repository's remote-tracking
// refs of the remote (refs/remotes/NAME/*) as its branches, so its first
// fetch tells the remote what this clone has and transfers only what is
// new, not the whole history again. Best effort: a fetch corrects them.
// The fetch runs it, never a lookup.
func (r Remote) seedMirror() {
	p := r.repo
	if p.GitDir == "" {
		return
	}
	heads := filepath.Join(r.Mirror, "refs", "heads")
	if ents, err := os.ReadDir(heads); err == nil && len(ents) > 0 {
		return
	}
	if _, err := os.Stat(filepath.Join(r.Mirror, "packed-refs")); err == nil {
		return
	}
	st, _, err := openPin(p)
	if err != nil {
		return
	}
	refs, err := st.IterReferences()
	if err != nil {
		return
	}
	prefix := "refs/remotes/" + r.Name + "/"
	var lines []string
	refs.ForEach(func(ref *plumbing.Reference) error {
		name := ref.Name().String()
		if ref.Type() == plumbing.HashReference && strings.HasPrefix(name, prefix) && !strings.HasSuffix(name, "/HEAD") {
			lines = append(lines, ref.Hash().String()+" refs/heads/"+strings.TrimPrefix(name, prefix)+"\n")
		}
		return nil
	})
	if len(lines) == 0 || r.ensureMirror() != nil {
		return
	}
	writeAtomic(filepath.Join(r.Mirror, "packed-refs"), []byte("# pack-refs with: peeled fully-peeled sorted \n"+strings.Join(sorted(lines), "")))
}

func sorted(s []string) []string {
	out := append([]string(nil), s...)
	sort.Strings(out)
	return out
}

// checkURL refuses what would make git run a command or read options
// from the URL.
func checkURL(url string) error {
	low := strings.ToLower(url)
	switch {
	case strings.HasPrefix(url, "-"):
		return fmt.Errorf("gitx: remote URL %q starts with a dash", url)
	case strings.HasPrefix(low, "ext::") || strings.HasPrefix(low, "fd::"):
		return fmt.Errorf("gitx: remote URL %q runs a command; pm refuses it", url)
	case strings.Contains(low, "::") && !strings.Contains(low, "://"):
		return fmt.Errorf("gitx: remote URL %q names a remote helper; pm talks to ssh, git, http(s) and file remotes only", url)
	}
	return nil
}

// Upstream is the remote branch p's local branch tracks on remote
// (branch.B.merge when branch.B.remote is remote), else the branch of the
// same name.
func Upstream(p Pin, branch, remote string) (string, error) {
	st, _, err := openPin(p)
	if err != nil {
		return "", err
	}
	cfg, err := st.Config()
	if err != nil {
		return "", fmt.Errorf("gitx: read repository config: %w", err)
	}
	short := strings.TrimPrefix(branch, "refs/heads/")
	if b := cfg.Branches[short]; b != nil && b.Remote == remote && strings.HasPrefix(b.Merge.String(), "refs/heads/") {
		return b.Merge.String(), nil
	}
	return branch, nil
}

// mirrorConfig is the whole config of pm's mirror: nothing a repository
// says is in it.
const mirrorConfig = `[core]
	repositoryformatversion = 0
	bare = true
	hooksPath = /dev/null
	fsmonitor = false
[gc]
	auto = 0
[maintenance]
	auto = false
[fetch]
	writeCommitGraph = false
[protocol "ext"]
	allow = never
[protocol "fd"]
	allow = never
`

// ensureMirror makes (or rewrites the config of) r's mirror directory.
func (r Remote) ensureMirror() error {
	for _, d := range []string{"refs/heads", "refs/tags", "objects"} {
		if err := os.MkdirAll(filepath.Join(r.Mirror, d), 0o700); err != nil {
			return err
		}
	}
	if err := writeAtomic(filepath.Join(r.Mirror, "HEAD"), []byte("ref: refs/heads/pm-mirror\n")); err != nil {
		return err
	}
	return writeAtomic(filepath.Join(r.Mirror, "config"), []byte(mirrorConfig))
}

// locked, when set (tests), runs in Fetch once the mirror's lock is held,
// with the fetch's deadline: what a long wait for the lock leaves of it.
var locked func(ctx context.Context)

// swapping, when set (tests), runs in Fetch between a fresh mirror's fetch
// and its swap: where another process's refresh must not come in.
var swapping func()

// timeout is r's bound of one git run.
func (r Remote) timeout() time.Duration {
	if r.Timeout > 0 {
		return r.Timeout
	}
	return DefaultTimeout
}

// gitError is a failed git run: its message is git's last lines, bounded;
// classify reads the whole of what git said (ssh's refusal comes before
// git's own lines, which push it out of the last ones).
type gitError struct{ msg, said string }

func (e *gitError) Error() string { return e.msg }

// git runs git with args in r's mirror, its environment scrubbed of every
// GIT_* variable but those that choose the user's own config files and ssh.
// ctx is the whole operation's deadline (its lock wait included): git is
// not started once it has passed.
func (r Remote) git(ctx context.Context, args ...string) (string, error) {
	full := append([]string{"-c", "core.hooksPath=/dev/null", "-c", "core.fsmonitor=false", "-c", "gc.auto=0",
		"-c", "maintenance.auto=false", "-c", "protocol.ext.allow=never", "-c", "credential.interactive=false"}, args...)
	cmd := exec.CommandContext(ctx, "git", full...)
	cmd.Dir = r.Mirror
	cmd.Env = remoteEnv(r.Mirror, r.objects)
	cmd.SysProcAttr = &syscall.SysProcAttr{Setsid: true} // no controlling terminal: nothing can prompt on /dev/tty
	cmd.Cancel = func() error { return syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL) }
	cmd.WaitDelay = 5 * time.Second
	var out, errb bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errb
	err := cmd.Run()
	if ctx.Err() != nil {
		return out.String(), &remoteError{kind: ErrNoAnswer, err: fmt.Errorf("git %s: no answer from %s within %s", args[0], r.URL, r.timeout())}
	}
	if err != nil {
		msg := strings.TrimSpace(errb.String())
		if msg == "" {
			msg = err.Error()
		}
		return out.String(), &gitError{msg: fmt.Sprintf("git %s %s: %s", args[0], r.URL, lastLines(msg, 4)), said: msg}
	}
	return out.String(), nil
}

// lastLines keeps the last n lines of git's message, each cut to
// maxLine bytes (the remote's hooks write what they like).
func lastLines(s string, n int) string {
	lines := strings.Split(s, "\n")
	if len(lines) > n {
		lines = lines[len(lines)-n:]
	}
	for i, l := range lines {
		if len(l) > maxLine {
			lines[i] = strings.ToValidUTF8(l[:maxLine], "") + "…"
		}
	}
	return strings.Join(lines, "; ")
}

// maxLine bounds one line of git's message in an error.
const maxLine = 300

// keptEnv are the GIT_* variables of the user's environment pm's git
// keeps: which config files are the user's, and how the user reaches ssh.
var keptEnv = map[string]bool{"GIT_CONFIG_GLOBAL": true, "GIT_CONFIG_SYSTEM": true, "GIT_CONFIG_NOSYSTEM": true,
	"GIT_SSH": true, "GIT_SSH_COMMAND": true, "GIT_SSH_VARIANT": true}

// remoteEnv is the environment of pm's git: the user's, without GIT_*
// variables but keptEnv and without askpass programs, with the mirror as
// GIT_DIR and the repository's objects as its object directory. ssh is
// not given BatchMode (that would override the user's core.sshCommand):
// without a terminal (Setsid) and without askpass it cannot prompt.
func remoteEnv(mirror, objects string) []string {
	var env []string
	for _, kv := range os.Environ() {
		k, _, _ := strings.Cut(kv, "=")
		switch {
		case k == "SSH_ASKPASS" || k == "GIT_ASKPASS" || k == "SSH_ASKPASS_REQUIRE":
			continue
		case k == "LANGUAGE" || k == "LANG" || strings.HasPrefix(k, "LC_"):
			continue // git's messages in English: classify and the stale checks read them
		case strings.HasPrefix(k, "GIT_") && !keptEnv[k]:
			continue
		}
		env = append(env, kv)
	}
	return append(env, "GIT_DIR="+mirror, "GIT_OBJECT_DIRECTORY="+objects, "GIT_TERMINAL_PROMPT=0",
		"SSH_ASKPASS_REQUIRE=never", "GIT_ASKPASS=/bin/false", "LC_ALL=C")
}

// Fetch brings the remote's branches into the repository's object store
// and returns their tips (refs/heads/NAME → commit). The mirror's own
// refs are the remote's branches as last fetched (and as pm's own pushes
// left them). A fetch that fails for want of reaching the remote
// (ErrUnreachable) or of credentials (ErrDenied) leaves the mirror as it
// is. Any other failure may be the mirror's (objects pruned under it by a
// gc of the repository): the fetch is made again into a fresh mirror
// beside it, and only when that one works does it replace the old one;
// otherwise the old one stays and the first error is returned.
//
// The whole fetch holds the mirror's lock (lockMirror) exclusively: two pm
// processes fetching the same remote take turns, so neither swaps a fresh
// mirror over the other's, nor removes the one the other's git runs in.
// The Remote's timeout bounds it all, the wait for the lock included.
func (r Remote) Fetch() (map[string]string, error) {
	ctx, cancel := context.WithTimeout(context.Background(), r.timeout())
	defer cancel()
	unlock, err := lockMirror(ctx, r.Mirror, syscall.LOCK_EX)
	if err != nil {
		return nil, err
	}
	defer unlock()
	if locked != nil {
		locked(ctx)
	}
	tips, err := r.fetch(ctx)
	if err == nil || errors.Is(err, ErrUnreachable) || errors.Is(err, ErrDenied) {
		return tips, err
	}
	fresh := r
	fresh.Mirror = r.Mirror + ".fresh"
	removeMirror(fresh.Mirror) // a killed fetch's
	tips, ferr := fresh.fetch(ctx)
	if ferr != nil {
		removeMirror(fresh.Mirror)
		return nil, err
	}
	if swapping != nil {
		swapping()
	}
	old := r.Mirror + ".old"
	removeMirror(old)
	if rerr := os.Rename(r.Mirror, old); rerr != nil && !os.IsNotExist(rerr) {
		removeMirror(fresh.Mirror)
		return nil, err
	}
	if rerr := os.Rename(fresh.Mirror, r.Mirror); rerr != nil {
		return nil, rerr
	}
	removeMirror(old)
	return tips, nil
}

// removeMirror removes a mirror directory of pm's own, its directories'
// modes first made this user's (a mirror whose modes kept git from writing
// it is what a fresh one replaces). Best effort. Each directory is opened
// without following a symbolic link (O_PATH|O_NOFOLLOW|O_DIRECTORY) and
// its mode set through that descriptor: a link swapped in for a directory
// after the walk saw it is not followed to what it names.
func removeMirror(dir string) {
	filepath.WalkDir(dir, func(path string, d os.DirEntry, err error) error {
		if d != nil && d.IsDir() {
			chmodNoFollow(path, 0o700)
		}
		return nil
	})
	os.RemoveAll(dir)
}

// deniedWords are git's (and ssh's, and a forge's) own words for a remote
// that refused this machine's credentials or asked for some. A bare
// "Permission denied" is not among them: that is also how git reports a
// file of this machine it cannot read or write (pm's mirror, the
// repository's objects), which no credential mends; ssh's refusal names
// the methods it tried, "Permission denied (publickey).", or asks again.
var deniedWords = []string{"Authentication failed", "could not read Username", "could not read Password", "terminal prompts disabled",
	"Permission denied (", "Permission denied, please try again", "remote: Permission to ",
	"returned error: 401", "returned error: 403", "Host key verification failed"}

// classify marks git's error of reaching the remote: credentials refused
// or asked for (ErrDenied), else no answer, no such repository or host
// (ErrUnreachable). Any other error is returned as it is. It reads all
// git said, not only the last lines the error shows.
func classify(err error) error {
	var re *remoteError
	if err == nil || errors.As(err, &re) {
		return err // classified already (no answer in time)
	}
	s := err.Error()
	var ge *gitError
	if errors.As(err, &ge) {
		s += "\n" + ge.said
	}
	for _, w := range deniedWords {
		if strings.Contains(s, w) {
			return &remoteError{ErrDenied, err}
		}
	}
	for _, w := range []string{"Could not read from remote", "unable to access", "does not appear to be a git repository",
		"Connection refused", "Could not resolve", "Connection timed out", "Network is unreachable", "No route to host"} {
		if strings.Contains(s, w) {
			return &remoteError{ErrUnreachable, err}
		}
	}
	return err
}

func (r Remote) fetch(ctx context.Context) (map[string]string, error) {
	if err := r.ensureMirror(); err != nil {
		return nil, err
	}
	r.seedMirror()
	if _, err := r.git(ctx, "fetch", "--quiet", "--no-tags", "--prune", "--no-write-fetch-head", "--no-recurse-submodules",
		"--", r.URL, "+refs/heads/*:refs/heads/*"); err != nil {
		return nil, classify(err)
	}
	return r.tips()
}

// tips are the remote's branches as the mirror's last fetch left them,
// read from its refs as files: no git process, no network. A mirror not
// made yet has none. A push does not write them: what a command pushed
// since its fetch is the task machine's record (task's machine.tips), and
// the next fetch brings the mirror up to the remote.
func (r Remote) tips() (map[string]string, error) {
	tips := map[string]string{}
	if _, err := os.Stat(filepath.Join(r.Mirror, "HEAD")); os.IsNotExist(err) {
		return tips, nil
	}
	st, err := openDirs(repoDirs{git: r.Mirror}, cache.NewObjectLRU(0), filesystem.Options{})
	if err != nil {
		return nil, err
	}
	refs, err := st.IterReferences()
	if err != nil {
		return nil, err
	}
	err = refs.ForEach(func(ref *plumbing.Reference) error {
		if ref.Type() == plumbing.HashReference && strings.HasPrefix(ref.Name().String(), "refs/heads/") {
			tips[ref.Name().String()] = ref.Hash().String()
		}
		return nil
	})
	return tips, err
}

// Push sets the remote's branch ref (refs/heads/NAME) to commit next if it
// still is at old ("" : it must not exist): git's compare-and-set
// (--force-with-lease). It returns ErrStale when the remote branch moved.
// No hook of the repository runs (pm's mirror has none; pre-push is
// skipped); the remote's own hooks run there, as for any push.
func (r Remote) Push(ref, old, next string) error {
	if !validBranchRef(ref) || !plumbing.IsHash(next) || old != "" && !plumbing.IsHash(old) {
		return fmt.Errorf("gitx: push %s %s→%s: not a branch and commits", ref, old, next)
	}
	ctx, cancel := context.WithTimeout(context.Background(), r.timeout())
	defer cancel()
	unlock, err := r.pushLock(ctx)
	if err != nil {
		return err
	}
	defer unlock()
	out, err := r.git(ctx, "push", "--porcelain", "--no-verify", "--quiet", "--force-with-lease="+ref+":"+old, "--", r.URL, next+":"+ref)
	if err != nil {
		if strings.Contains(out, "stale info") || strings.Contains(err.Error(), "stale info") || strings.Contains(out, "fetch first") {
			return fmt.Errorf("%w: %s", ErrStale, ref)
		}
		return classify(err)
	}
	return nil
}

// validBranchRef is a branch ref a push or deletion may name: refs/heads/
// and valid as git's ref names go (no space, tab, newline or ':', which
// would change what git's command line means).
func validBranchRef(ref string) bool {
	return strings.HasPrefix(ref, "refs/heads/") && len(ref) > len("refs/heads/") &&
		plumbing.ReferenceName(ref).Validate() == nil && !strings.ContainsAny(ref, " \t\n:")
}

// pushLock holds the mirror's lock shared (a fetch's fresh mirror is not
// swapped in under a push's git) with the mirror made, waiting no longer
// than ctx.
func (r Remote) pushLock(ctx context.Context) (func(), error) {
	unlock, err := lockMirror(ctx, r.Mirror, syscall.LOCK_SH)
	if err != nil {
		return nil, err
	}
	if err := r.ensureMirror(); err != nil {
		unlock()
		return nil, err
	}
	return unlock, nil
}

// SetRef points name (a ref of pm's own, refs/pm/..., or a task branch not
// checked out) at hash in p, whatever it held: how a fetched remote tip is
// made a ref gitx's merges and worktrees read. The ref file is written with
// git's lock-file protocol.
func SetRef(p Pin, name, hash string) error {
	if !plumbing.IsHash(hash) || !strings.HasPrefix(name, "refs/") || plumbing.ReferenceName(name).Validate() != nil {
		return fmt.Errorf("gitx: set %q to %q: not a ref and a commit", name, hash)
	}
	unlock, err := lockRepository(common(p))
	if err != nil {
		return err
	}
	defer unlock()
	st, dirs, err := openPin(p)
	if err != nil {
		return err
	}
	if _, err := readCommit(st, plumbing.NewHash(hash)); err != nil {
		return fmt.Errorf("gitx: set %s: commit %s: %w", name, hash, err)
	}
	cur, err := refHash(st, name)
	if err != nil {
		return err
	}
	if cur.String() == hash {
		return nil
	}
	c := &committer{st: st, dotfs: st.Filesystem(), dirs: dirs}
	return c.updateRef(plumbing.ReferenceName(name), cur, plumbing.NewHash(hash))
}

// IsAncestor reports whether commit a is b or one of b's ancestors, in p.
// It walks as git's merge-base --is-ancestor does: newest commit first,
// painting what is reached from a and from b, and stops once every commit
// left to visit is reached from both (below where the two histories
// meet). The walk is bounded by the distance from a and b to where they
// meet, not by the length of the history: an answer near the tips never
// reads the old history (a shallow clone's cut history is never reached).
// Commit times only order the walk; a skewed clock makes it longer, never
// wrong.
func IsAncestor(p Pin, a, b string) (bool, error) {
	if a == b {
		return true, nil
	}
	if !plumbing.IsHash(a) || !plumbing.IsHash(b) {
		return false, fmt.Errorf("gitx: %q or %q is not a commit", a, b)
	}
	st, _, err := openPin(p)
	if err != nil {
		return false, err
	}
	const fromA, fromB, stale = 1, 2, 4
	want := plumbing.NewHash(a)
	flags := map[plumbing.Hash]uint8{}
	var q ancestry
	visit := func(h plumbing.Hash, f uint8) error {
		c, err := readCommit(st, h)
		if err != nil {
			if f&stale != 0 && errors.Is(err, plumbing.ErrObjectNotFound) {
				return nil // below where the two meet: nothing to learn there
			}
			return err
		}
		flags[h] |= f
		q.push(ancestryItem{h, c.Time, c.Parents})
		return nil
	}
	if err := visit(want, fromA); err != nil {
		return false, err
	}
	if err := visit(plumbing.NewHash(b), fromB); err != nil {
		return false, err
	}
	for q.pending(flags, stale) {
		c := q.pop()
		f := flags[c.hash] & (fromA | fromB | stale)
		if f == fromA|fromB {
			f |= stale // reached from both: what is below it is too
		}
		for _, par := range c.parents {
			if flags[par]&f == f {
				continue
			}
			if par == want && f&fromB != 0 {
				return true, nil
			}
			if err := visit(par, f); err != nil {
				return false, err
			}
		}
	}
	return false, nil
}

// ancestryItem is a commit IsAncestor will visit.
type ancestryItem struct {
	hash    plumbing.Hash
	time    int64
	parents []plumbing.Hash
}

// ancestry is IsAncestor's queue: newest commit first.
type ancestry []ancestryItem

func (q *ancestry) push(c ancestryItem) { *q = append(*q, c) }

// pop takes the newest commit (a linear scan: the queue holds the walk's
// front, a few commits wide).
func (q *ancestry) pop() ancestryItem {
	best := 0
	for i, c := range *q {
		if c.time > (*q)[best].time {
			best = i
		}
	}
	c := (*q)[best]
	*q = append((*q)[:best], (*q)[best+1:]...)
	return c
}

// pending reports a commit in the queue not yet reached from both sides.
func (q ancestry) pending(flags map[plumbing.Hash]uint8, stale uint8) bool {
	for _, c := range q {
		if flags[c.hash]&stale == 0 {
			return true
		}
	}
	return false
}

// Delete removes the remote's branch refs (refs/heads/NAME → the tip it
// must still be at), each by a compare-and-set like Push, all in one push:
// one git process and one connection however many. It returns the refs
// deleted; one that moved meanwhile (ErrStale for it alone) is left and
// not an error. A push that fails otherwise is the error, classified like
// a fetch's.
func (r Remote) Delete(old map[string]string) ([]string, error) {
	if len(old) == 0 {
		return nil, nil
	}
	refs := make([]string, 0, len(old))
	for ref, tip := range old {
		if !validBranchRef(ref) || !plumbing.IsHash(tip) {
			return nil, fmt.Errorf("gitx: delete %s at %q: not a branch and a commit", ref, tip)
		}
		refs = append(refs, ref)
	}
	sort.Strings(refs)
	ctx, cancel := context.WithTimeout(context.Background(), r.timeout())
	defer cancel()
	unlock, err := r.pushLock(ctx)
	if err != nil {
		return nil, err
	}
	defer unlock()
	args := []string{"push", "--porcelain", "--no-verify", "--quiet"}
	for _, ref := range refs {
		args = append(args, "--force-with-lease="+ref+":"+old[ref])
	}
	args = append(args, "--", r.URL)
	for _, ref := range refs {
		args = append(args, ":"+ref)
	}
	out, err := r.git(ctx, args...)
	if err == nil {
		return refs, nil // --quiet: the lines are printed only when one is refused
	}
	deleted, stale, other := porcelain(out)
	if len(stale) > 0 && len(other) == 0 {
		return deleted, nil // each refused one moved meanwhile: left to whoever moved it
	}
	return deleted, classify(err)
}

// porcelain reads git push --porcelain's lines: the refs deleted or
// updated, those refused as stale, and those refused otherwise.
func porcelain(out string) (done, stale, other []string) {
	for _, line := range strings.Split(out, "\n") {
		f := strings.Split(line, "\t")
		if len(f) < 3 || len(f[0]) != 1 {
			continue
		}
		_, ref, _ := strings.Cut(f[1], ":")
		switch {
		case f[0] == "!" && strings.Contains(f[2], "stale info"):
			stale = append(stale, ref)
		case f[0] == "!":
			other = append(other, ref)
		default:
			done = append(done, ref)
		}
	}
	return done, stale, other
}

// DropRef deletes one of pm's own refs (refs/pm/...), such as the fetched
// copy of a merged task's branch; a missing one is not an error.
func DropRef(p Pin, name string) error {
	if !strings.HasPrefix(name, "refs/pm/") || plumbing.ReferenceName(name).Validate() != nil {
		return fmt.Errorf("gitx: %q is not a ref of pm's own", name)
	}
	unlock, err := lockRepository(common(p))
	if err != nil {
		return err
	}
	defer unlock()
	st, dirs, err := openPin(p)
	if err != nil {
		return err
	}
	if err := st.RemoveReference(plumbing.ReferenceName(name)); err != nil && !errors.Is(err, plumbing.ErrReferenceNotFound) {
		return fmt.Errorf("gitx: delete %s: %w", name, err)
	}
	os.Remove(dirs.path("logs/" + name))
	return nil
}

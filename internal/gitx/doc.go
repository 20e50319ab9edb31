// Package gitx commits a project's work tree with go-git, without the git
// binary. It uses go-git's object storage and index/gitignore/config
// formats but encodes commits and trees itself (objects.go) and opens the
// repository itself (open.go): go-git's top-level package and
// plumbing/object link OpenPGP and the SSH/HTTP transports, whose package
// initialisation every pm process would pay at start-up.
//
// Commit behaves like `git add -A && git commit -m msg` run from the root of
// the work tree that contains a directory, with these invariants:
//
//   - Nothing under the state directory (".plasmodium/", relative to the
//     work tree root) is ever committed: it is excluded from the walk by an
//     explicit rule, whatever the project's .gitignore files say, and the
//     index is pinned to HEAD's content there, so even something the user
//     staged under it stays out of the commit.
//   - Everything else is staged: new, modified and deleted files, files in
//     new directories, symlinks and the executable bit (core.filemode is
//     honored). .gitignore files, $GIT_DIR/info/exclude and core.excludesFile
//     are honored for untracked files; tracked files stay tracked even when
//     ignored, as with git.
//   - CommitWith's Options.Exclude patterns (gitignore syntax) leave out
//     untracked files that look like secrets (.env, keys); they are listed
//     in Result.Excluded, never staged. Tracked files are not affected.
//   - Result.Committed lists every path the commit changes (added, modified,
//     deleted), sorted; Files is its length.
//   - No commit is made when the resulting tree equals HEAD's (NoChanges),
//     and nothing at all is done outside a git work tree (NoRepo).
//   - A repository without commits gets a root commit; changes the user had
//     already staged are included.
//   - The author and committer are user.name / user.email from the
//     repository config, then the global config (~/.gitconfig over
//     $XDG_CONFIG_HOME/git/config), then /etc/gitconfig, falling back to
//     "pm" <pm@localhost>. Both carry the time passed in.
//   - Nothing is pushed or fetched but by Remote (remote.go).
//   - The index and the branch ref are updated with git's lock-file protocol
//     (index.lock, <ref>.lock), so a concurrent git command fails or makes
//     Commit fail rather than interleave; a reflog entry is appended.
//   - pm never leaves a lock of its own behind for good (lock.go): each lock
//     is a hard link to a marker that names the writing process (pid, start
//     time, boot); a lock whose marker names a dead process is removed and
//     the commit redone; a lock no marker shares (another git process's) is
//     never touched, and is a *LockError that says what ends it. pm
//     processes commit one at a time per repository (flock on its common
//     dir).
//   - Options.TreeOnly (WorkDiff: pm diff of a task still working) stages
//     and writes the tree a commit would have and nothing else: no
//     commit, index, ref or lock, so an agent's own git in the worktree
//     is never disturbed.
//   - CommitPinned commits only into the repository a Pin recorded
//     (pinned.go): a .git that since became a gitdir: file or a link, leads
//     elsewhere, or is another directory is a *MovedError, nothing written.
//   - No command a repository names ever runs: gitx never starts the git
//     binary but for Remote's fetch and push, so no hook, fsmonitor,
//     filter, textconv, pager or credential helper; GIT_DIR and the like
//     are ignored. Files read from the work
//     tree or .git are opened non-blocking and must be regular (a FIFO
//     cannot hang a commit).
//   - Unmerged paths or a merge in progress make Commit fail.
//     Options.Merging gives a commit a second parent (a conflict resolved
//     in a task's worktree), once.
//
// Worktrees and merges (worktree.go, merge.go, linemerge.go, issue 23), with
// the same rules (no git binary, git's lock files, pm's marked locks):
//
//   - AddWorktree makes a linked work tree in git's layout (admin dir,
//     .git file, branch, files and index), idempotently; every crash leaves
//     what running it again finishes, or what PruneWorktrees (git worktree
//     prune semantics) removes. Files are written through an os.Root, and
//     a tree path with "", ".", ".." or .git is refused.
//   - A spare (spare.go) is a checkout made ahead beside the worktrees,
//     complete only once its commit marker is written (last, under the
//     repository's lock); AddWorktree takes it with one rename and writes
//     only what differs from its base, and only when every file in it is
//     an entry of its index with unchanged size, mtime, ctime and inode,
//     and nothing else is there: else it is thrown away, never trusted.
//   - Merge fast-forwards or writes a merge commit of a three-way merge by
//     path, with a line merge of text both sides changed (overlapping or
//     adjacent changes conflict); a conflict changes nothing unless Favor
//     says which side wins. Where the branch is checked out, only the
//     merged paths are written, and only if each file and index entry holds
//     the old or the new version: otherwise nothing is written (Dirty).
//     Files, then the index, then the ref: a killed merge is finished by
//     the next. Nothing under the state directory is written.
//   - MarkConflicts writes a conflicted merge into a task's worktree with
//     git's markers, touching neither its branch nor its index.
//
// Through a git remote (remote.go, issue 24: a hub project's code):
//
//   - Remote's git runs in a mirror of
//     pm's own (a bare git dir whose config pm writes at each use: no hook,
//     fsmonitor, gc or ext:: transport) with the repository's object store
//     as GIT_OBJECT_DIRECTORY: nothing in the repository's config, hooks or
//     refs steers that git; the environment is scrubbed of GIT_* but the
//     user's config-file and ssh choices; nothing can prompt (no terminal,
//     GIT_TERMINAL_PROMPT=0, no askpass); each run is bounded by
//     Remote.Timeout (DefaultTimeout when unset; the caller's setting, e.g.
//     git.remote_timeout for a kill's or a reset's deletions) and is then
//     ErrUnreachable.
//   - Remote.Fetch, Push and Delete are the only git pm runs, one git
//     process each, all in that mirror.
//   - RemoteOf reads the URL from the raw repository config (no insteadOf
//     rewrite) and refuses one that runs a command (ext::, fd::, a remote
//     helper, a leading dash). It only reads: the mirror is made and
//     seeded by the first fetch.
//   - The mirror's refs are the remote's branches as its last fetch left
//     them, read as files (no second git process) for the fetch's result.
//     A push does not write them: the one record of what a command pushed
//     since its fetch is its caller's (internal/task's machine).
//   - A fetch that fails for want of reaching the remote (ErrUnreachable)
//     or of credentials (ErrDenied) keeps the mirror; any other failure
//     fetches again into a fresh mirror, which replaces the old one only
//     if it works. ErrDenied is git's, ssh's or the forge's own wording of
//     a refusal, read from all git said; a file of this machine git cannot
//     read or write ("Permission denied" alone) is not one.
//   - A fetch holds flock(2) on MIRROR.lock exclusively, a push or deletion
//     shared (lockedfile.LockWithin, released before it is closed): pm
//     processes take turns at a mirror's refresh, and a fresh mirror is
//     never swapped over another's or under a running git. The Remote's
//     timeout is one deadline for the wait and the git run: a mirror held
//     all along is ErrBusy, a remote silent past it ErrNoAnswer (also
//     ErrUnreachable). A mirror is removed with its directories' modes set
//     through O_PATH|O_NOFOLLOW descriptors: no link is followed.
//   - Push and Delete take only a valid branch ref (validBranchRef: no
//     space, tab, newline or ':', which would change git's command line).
//   - Push and Delete are compare-and-sets (--force-with-lease=REF:OLD):
//     ErrStale when the remote's branch is not at OLD, and nothing moved.
//   - IsAncestor walks from both commits, newest first, and stops below
//     where they meet (git's merge-base walk): bounded by that distance,
//     not by the history's length.
//   - SetRef writes (DropRef removes) pm's own refs (refs/pm/remote/...) of fetched tips with
//     git's lock-file protocol; a merge into one writes no work tree.
//
// Speed: instead of go-git's Worktree.Status, which hashes every file,
// Commit compares each index entry's cached stat data (size, mtime, ctime,
// inode, mode) to lstat and reads only files whose stat data changed or is
// racily clean, then builds the tree objects from the index in memory and
// writes only the trees that do not exist yet. LastCommit streams blobs
// over 256 KiB (go-git otherwise loads each object whole) and counts added
// lines from a hash per line: memory grows with the old version's distinct
// lines, not with the files' bytes.
package gitx

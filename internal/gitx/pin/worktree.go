package pin

// Worktree is a task's linked work tree (git worktree layout), recorded in
// its task.json when the task is created: pm task makes it on Branch from
// Base, the task's agents work in Path, and pm done commits there and
// merges Branch into Into.
type Worktree struct {
	Path   string `json:"path"`           // the work tree's root (real path); its name under <common>/worktrees/ is its base name
	Branch string `json:"branch"`         // its branch, refs/heads/pm/tk-ID
	Base   string `json:"base,omitempty"` // the commit it started from ("" an unborn branch)
	Into   string `json:"into"`           // the branch pm done merges it into (the parent task's, or the one HEAD named)
	// Remote names the git remote Branch and Into live on (a hub project's
	// code through a git remote, docs/distributed.md): Into is then the
	// remote's branch, and Path is where the machine that made the task
	// put it; every machine makes its own (store.Task.WorktreePath).
	Remote string `json:"remote,omitempty"`
}

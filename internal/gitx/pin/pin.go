// Package pin holds gitx.Pin, the record of the repository a task's work is
// committed to, apart from gitx: store.Task holds it, and the short
// executable (cmd/pm), which links the store, then links no go-git. Use it
// as gitx.Pin (and Worktree as gitx.Worktree); nothing else belongs here.
package pin

// Repo names the repository that held a project when a task was created,
// as the human's pm process saw it, by real paths (symbolic links
// resolved). pm done commits into it and nowhere else. The zero value
// (WorkTree "") records that no repository held the project.
type Repo struct {
	WorkTree string `json:"work_tree,omitempty"` // the work tree's root
	// DotGit is what WorkTree/.git was: "dir" (the repository itself),
	// "file" (a "gitdir:" file: a linked work tree or a separate git dir)
	// or "symlink".
	DotGit    string `json:"dot_git,omitempty"`
	GitDir    string `json:"git_dir,omitempty"`    // where HEAD and the index are
	CommonDir string `json:"common_dir,omitempty"` // objects and refs of a linked work tree ("" none)
	// Dev and Ino are GitDir's identity: another directory put at its
	// path is not the pinned repository.
	Dev uint64 `json:"dev,omitempty"`
	Ino uint64 `json:"ino,omitempty"`
}

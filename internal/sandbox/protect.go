package sandbox

import (
	"bytes"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
)

// New is the policy of a command working in workspace (absolute and real):
// it writes the workspace and tmp, never sees hide (pm's state), and may
// read but not write what makes git or pm run code or change agents outside
// any sandbox (Steering). The config's settings come on top (Configured).
func New(workspace, tmp string, hide ...string) Policy {
	return Policy{Workspace: workspace, TempDir: tmp, Hide: hide, ReadOnly: Steering(workspace)}
}

// Steering returns the real paths of what, written by an agent, would steer
// the unconfined side of workspace: its .git (a directory, or the gitdir:
// file and the git directory and common directory it names, wherever they
// are), a hooks directory core.hooksPath puts in the workspace, and the
// project's prompts/ (prompt objects: their capabilities and instructions).
// Only what exists is returned (a bind mount needs its target).
func Steering(workspace string) []string {
	var out []string
	add := func(p string) {
		if r, err := filepath.EvalSymlinks(p); err == nil && !slices.Contains(out, r) {
			out = append(out, r)
		}
	}
	dotgit := filepath.Join(workspace, ".git")
	gitDir := dotgit
	if st, err := os.Lstat(dotgit); err == nil && st.Mode().IsRegular() {
		out = append(out, dotgit) // the gitdir: file itself (rewritten, it names another repository)
		gitDir = gitdirOf(workspace, dotgit)
	}
	if gitDir != "" {
		add(gitDir)
		if data, err := os.ReadFile(filepath.Join(gitDir, "commondir")); err == nil {
			add(rel(gitDir, strings.TrimSpace(string(data))))
		}
		if hooks := hooksPath(workspace); hooks != "" {
			add(rel(workspace, hooks))
		}
	}
	add(filepath.Join(workspace, "prompts"))
	return out
}

// gitdirOf reads the git directory a `.git` file names ("" when it names
// none).
func gitdirOf(workspace, file string) string {
	data, err := os.ReadFile(file)
	if err != nil {
		return ""
	}
	line, _, _ := strings.Cut(string(data), "\n")
	dir, ok := strings.CutPrefix(strings.TrimSpace(line), "gitdir:")
	if !ok {
		return ""
	}
	return rel(workspace, strings.TrimSpace(dir))
}

// hooksPath is core.hooksPath as git reads it in workspace ("" when unset
// or without git). git config only reads files: it runs nothing.
func hooksPath(workspace string) string {
	cmd := exec.Command("git", "-C", workspace, "config", "--path", "--get", "core.hooksPath")
	cmd.Env = append(os.Environ(), "GIT_CONFIG_NOSYSTEM=1")
	out, err := cmd.Output()
	if err != nil {
		return ""
	}
	return string(bytes.TrimSpace(out))
}

// rel is p, relative to dir when it is not absolute.
func rel(dir, p string) string {
	if filepath.IsAbs(p) {
		return p
	}
	return filepath.Join(dir, p)
}

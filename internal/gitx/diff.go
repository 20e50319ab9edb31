package gitx

import (
	"bytes"
	"fmt"
	"sort"
	"strings"
	"time"

	"github.com/aymanbagabas/go-udiff"
	"github.com/go-git/go-git/v5/plumbing"
	"github.com/go-git/go-git/v5/storage/filesystem"
)

// FileDiff is one path a branch changed.
type FileDiff struct {
	Path    string `json:"path"`
	Status  string `json:"status"` // added, modified, deleted
	Binary  bool   `json:"binary,omitempty"`
	Added   int    `json:"added"`
	Deleted int    `json:"deleted"`
	Patch   string `json:"patch,omitempty"` // unified diff (text files)
	// Cut says Patch is only its first part (a view that bounds what it
	// shows, such as the dashboard's task detail).
	Cut bool `json:"cut,omitempty"`
}

// BranchDiff is what branch changed since it left into: the diff from
// their common ancestor (base) to branch's tip, file by file, sorted.
func BranchDiff(p Pin, branch, into string) (base string, files []FileDiff, err error) {
	st, _, err := openPin(p)
	if err != nil {
		return "", nil, err
	}
	tip, err := refHash(st, branch)
	if err != nil || tip.IsZero() {
		return "", []FileDiff{}, err
	}
	other, err := refHash(st, into)
	if err != nil {
		return "", nil, err
	}
	b := plumbing.ZeroHash
	if !other.IsZero() {
		if b, err = mergeBase(st, tip, other); err != nil {
			return "", nil, err
		}
	}
	var oldTree plumbing.Hash
	if !b.IsZero() {
		h, err := readCommit(st, b)
		if err != nil {
			return "", nil, err
		}
		oldTree = h.Tree
		base = b.String()
	}
	h, err := readCommit(st, tip)
	if err != nil {
		return "", nil, err
	}
	files, err = treesDiff(st, oldTree, h.Tree)
	return base, files, err
}

// treesDiff is what changed from tree oldTree (zero: none) to newTree, file
// by file, sorted.
func treesDiff(st *filesystem.Storage, oldTree, newTree plumbing.Hash) ([]FileDiff, error) {
	a, err := flatTree(st, oldTree)
	if err != nil {
		return nil, err
	}
	c, err := flatTree(st, newTree)
	if err != nil {
		return nil, err
	}
	paths, err := changedPaths(st, oldTree, newTree)
	if err != nil {
		return nil, err
	}
	files := []FileDiff{}
	for _, n := range paths {
		oe, inO := a[n]
		ne, inN := c[n]
		fd := FileDiff{Path: n, Status: "modified"}
		switch {
		case !inO:
			fd.Status = "added"
		case !inN:
			fd.Status = "deleted"
		}
		var old, cur []byte
		if inO && oe.Mode.IsFile() {
			if old, err = readBlob(st, oe.Hash, nil); err != nil {
				return nil, err
			}
		}
		if inN && ne.Mode.IsFile() {
			if cur, err = readBlob(st, ne.Hash, nil); err != nil {
				return nil, err
			}
		}
		if bytes.IndexByte(old[:min(len(old), 8000)], 0) >= 0 || bytes.IndexByte(cur[:min(len(cur), 8000)], 0) >= 0 {
			fd.Binary = true
		} else {
			from, to := "a/"+n, "b/"+n
			if !inO {
				from = "/dev/null"
			}
			if !inN {
				to = "/dev/null"
			}
			fd.Patch = udiff.Unified(from, to, string(old), string(cur))
			for _, l := range strings.Split(fd.Patch, "\n") {
				switch {
				case strings.HasPrefix(l, "+++") || strings.HasPrefix(l, "---"):
				case strings.HasPrefix(l, "+"):
					fd.Added++
				case strings.HasPrefix(l, "-"):
					fd.Deleted++
				}
			}
		}
		files = append(files, fd)
	}
	sort.Slice(files, func(i, j int) bool { return files[i].Path < files[j].Path })
	return files, nil
}

// WorkDiff is BranchDiff with the worktree's uncommitted work in: what
// w's branch would change since it left w.Into if w's work tree were
// committed now (pm diff of a task still working). Nothing is committed
// (Options.TreeOnly: only objects are written); stateDir and opt.Exclude
// as for Commit, so the diff shows what pm done would commit.
func WorkDiff(p Pin, w Worktree, stateDir string, opt Options) (base string, files []FileDiff, err error) {
	wp, err := WorktreePin(p, w)
	if err != nil {
		return "", nil, err
	}
	opt.TreeOnly, opt.Merging = true, ""
	res, err := commitIn(wp, stateDir, "pm diff", time.Time{}, opt)
	if err != nil {
		return "", nil, err
	}
	if res.Tree == "" {
		return "", nil, fmt.Errorf("gitx: %s is not a git work tree", w.Path)
	}
	st, _, err := openPin(p)
	if err != nil {
		return "", nil, err
	}
	tip, err := refHash(st, w.Branch)
	if err != nil {
		return "", nil, err
	}
	var oldTree plumbing.Hash
	if !tip.IsZero() {
		b := tip
		other, err := refHash(st, w.Into)
		if err != nil {
			return "", nil, err
		}
		if !other.IsZero() {
			if b, err = mergeBase(st, tip, other); err != nil {
				return "", nil, err
			}
		}
		if !b.IsZero() {
			h, err := readCommit(st, b)
			if err != nil {
				return "", nil, err
			}
			oldTree, base = h.Tree, b.String()
		}
	}
	files, err = treesDiff(st, oldTree, plumbing.NewHash(res.Tree))
	return base, files, err
}

package dashboard

import (
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/chromedp/chromedp"

	"github.com/plasmodium/pm/internal/config"
	"github.com/plasmodium/pm/internal/gitx"
	"github.com/plasmodium/pm/internal/ops"
	"github.com/plasmodium/pm/internal/store"
)

// git runs git in dir as a test user with no global configuration.
func git(t *testing.T, dir string, args ...string) string {
	t.Helper()
	cmd := exec.Command("git", args...)
	cmd.Dir = dir
	cmd.Env = append(os.Environ(), "GIT_CONFIG_NOSYSTEM=1", "HOME="+dir, "GIT_AUTHOR_NAME=t", "GIT_AUTHOR_EMAIL=t@example.com",
		"GIT_COMMITTER_NAME=t", "GIT_COMMITTER_EMAIL=t@example.com")
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("git %v: %v\n%s", args, err, out)
	}
	return strings.TrimSpace(string(out))
}

// gitProject makes the rig's project a git repository with one commit.
func gitProject(t *testing.T, r *rig) {
	t.Helper()
	if _, err := exec.LookPath("git"); err != nil {
		t.Skip("git not installed")
	}
	dir := r.s.ProjectDir()
	git(t, dir, "init", "-q", "-b", "main")
	if err := os.WriteFile(filepath.Join(dir, "README.md"), []byte("# project\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	git(t, dir, "add", "README.md")
	git(t, dir, "commit", "-qm", "initial")
}

// reviewedTask makes a task held for review (pm task --review) in the rig's
// git project, whose owner wrote file with text and ran pm done: its work
// is on its branch, not merged.
func reviewedTask(t *testing.T, r *rig, file, text string) *store.Task {
	t.Helper()
	dir := r.s.ProjectDir()
	r.s.Config().Runtime.Exec.Command = []string{"sh", "-c", "true", "{PROMPT}"} // started by the fake driver, never run
	tk, err := ops.CreateTask(t.Context(), r.sess, ops.TaskInput{Description: "Write the changelog", Runtime: config.RuntimeExec, Review: true})
	if err != nil {
		t.Fatal(err)
	}
	if tk.Worktree == nil {
		t.Fatalf("task %s has no worktree", tk.ID)
	}
	if err := os.WriteFile(filepath.Join(tk.WorkDir(dir), file), []byte(text), 0o644); err != nil {
		t.Fatal(err)
	}
	owner, err := r.s.Agent(tk.Owner)
	if err != nil {
		t.Fatal(err)
	}
	asOwner := *r.sess
	asOwner.Actor = store.Actor{Name: owner.Name, Agent: owner}
	res, err := ops.Done(t.Context(), &asOwner, ops.DoneInput{Task: tk.ID})
	if err != nil || !res.Held {
		t.Fatalf("pm done: %+v %v, want held for review", res, err)
	}
	return tk
}

// The task detail carries its branch's diff, bounded: a patch over the
// per-file cap is cut and marked, and the whole stays under the total cap.
func TestDetailCarriesBoundedDiff(t *testing.T) {
	r := newRig(t, nil)
	gitProject(t, r)
	big := strings.Repeat("a line an agent wrote\n", 2*detailPatch/22)
	tk := reviewedTask(t, r, "BIG.md", big)
	var d TaskDetail
	resp, body := r.do("GET", "/api/task?id="+tk.ID, "", nil)
	if resp.StatusCode != 200 {
		t.Fatalf("GET /api/task: %d %s", resp.StatusCode, body)
	}
	if err := json.Unmarshal(body, &d); err != nil {
		t.Fatal(err)
	}
	if d.Diff == nil || len(d.Diff.Files) != 1 {
		t.Fatalf("diff %+v (error %q), want one file", d.Diff, d.DiffError)
	}
	f := d.Diff.Files[0]
	if f.Path != "BIG.md" || f.Status != "added" || !f.Cut || len(f.Patch) != detailPatch || f.Added != len(big)/22 {
		t.Fatalf("file %s %s cut=%v patch=%d added=%d, want BIG.md added, cut to %d, all %d lines counted",
			f.Path, f.Status, f.Cut, len(f.Patch), f.Added, detailPatch, len(big)/22)
	}
}

// A working task's diff walks its worktree: it is read on request only.
func TestDetailWorkingDiffOnRequest(t *testing.T) {
	r := newRig(t, nil)
	gitProject(t, r)
	r.s.Config().Runtime.Exec.Command = []string{"sh", "-c", "true", "{PROMPT}"}
	tk, err := ops.CreateTask(t.Context(), r.sess, ops.TaskInput{Description: "Still drafting", Runtime: config.RuntimeExec})
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(tk.WorkDir(r.s.ProjectDir()), "DRAFT.md"), []byte("so far\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		query string
		files int
	}{{"", -1}, {"&diff=1", 1}} {
		resp, body := r.do("GET", "/api/task?id="+tk.ID+tc.query, "", nil)
		var d TaskDetail
		if err := json.Unmarshal(body, &d); resp.StatusCode != 200 || err != nil {
			t.Fatalf("GET %s: %d %v %s", tc.query, resp.StatusCode, err, body)
		}
		switch {
		case tc.files < 0 && d.Diff != nil:
			t.Fatalf("GET %q: a diff without asking", tc.query)
		case tc.files >= 0 && (d.Diff == nil || len(d.Diff.Files) != tc.files || !d.Diff.Uncommitted):
			t.Fatalf("GET %q: diff %+v (%s), want %d file(s), uncommitted", tc.query, d.Diff, d.DiffError, tc.files)
		}
	}
}

func TestBoundDiff(t *testing.T) {
	patch := func(n int) gitx.FileDiff { return gitx.FileDiff{Patch: strings.Repeat("x", n)} }
	for _, tc := range []struct {
		name string
		in   []int
		want []int
		cut  []bool
	}{
		{"small", []int{10, 20}, []int{10, 20}, []bool{false, false}},
		{"one over the file cap", []int{detailPatch + 1}, []int{detailPatch}, []bool{true}},
		{"total cap", []int{detailPatch, detailPatch, detailPatch, detailPatch, detailPatch, detailPatch, detailPatch, detailPatch, 5},
			[]int{detailPatch, detailPatch, detailPatch, detailPatch, detailPatch, detailPatch, detailPatch, detailPatch, 0},
			[]bool{false, false, false, false, false, false, false, false, true}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			d := ops.DiffResult{}
			for _, n := range tc.in {
				d.Files = append(d.Files, patch(n))
			}
			boundDiff(&d)
			for i, f := range d.Files {
				if len(f.Patch) != tc.want[i] || f.Cut != tc.cut[i] {
					t.Fatalf("file %d: %d bytes cut=%v, want %d cut=%v", i, len(f.Patch), f.Cut, tc.want[i], tc.cut[i])
				}
			}
		})
	}
}

// Review on the dashboard (issue 23): a held task's view shows what its
// branch changed, file by file, and the human merges it there, or sends it
// back with words its owner reads.
func TestBrowserReviewMerge(t *testing.T) {
	ctx := browser(t)
	r := newRig(t, nil)
	gitProject(t, r)
	dir := r.s.ProjectDir()
	kept := reviewedTask(t, r, "CHANGELOG.md", "first draft\n")
	back := reviewedTask(t, r, "TODO.md", "half done\n")
	working, err := ops.CreateTask(t.Context(), r.sess, ops.TaskInput{Description: "Still drafting", Runtime: config.RuntimeExec})
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(working.WorkDir(dir), "DRAFT.md"), []byte("so far\n"), 0o644); err != nil {
		t.Fatal(err)
	}

	t.Run("a working task's changes so far, on request", func(t *testing.T) {
		if err := chromedp.Do(ctx, chromedp.Navigate(r.srv.URL()+"#/task/"+working.ID)); err != nil {
			t.Fatal(err)
		}
		click(ctx, t, `#detail-box [data-act="show-diff"]`)
		waitText(ctx, t, `#detail-box [data-diff-file="DRAFT.md"] pre`, "+so far")
		waitText(ctx, t, `#detail-box .changes`, "still working")
		if out := git(t, working.WorkDir(dir), "status", "--porcelain"); out != "?? DRAFT.md" {
			t.Fatalf("worktree status after the diff: %q", out)
		}
	})

	t.Run("merge", func(t *testing.T) {
		if err := chromedp.Do(ctx, chromedp.Navigate(r.srv.URL()+"#/task/"+kept.ID)); err != nil {
			t.Fatal(err)
		}
		waitText(ctx, t, `#detail-box [data-diff-file="CHANGELOG.md"]`, "added CHANGELOG.md +1")
		waitText(ctx, t, `#detail-box [data-diff-file="CHANGELOG.md"] pre`, "+first draft")
		waitText(ctx, t, `#detail-box [data-merge="`+kept.ID+`"]`, "Its merge waits: review")
		click(ctx, t, `#detail-box [data-merge="`+kept.ID+`"] [data-act="merge"]`)
		waitText(ctx, t, `#detail-box .changes`, "merged as")
		if got := git(t, dir, "show", "main:CHANGELOG.md"); got != "first draft" {
			t.Fatalf("main's CHANGELOG.md = %q", got)
		}
		if tk, _ := r.s.Task(kept.ID); tk.Merge != nil || tk.Merged == "" {
			t.Fatalf("task after merge: merge %+v merged %q", tk.Merge, tk.Merged)
		}
	})

	t.Run("send back", func(t *testing.T) {
		if err := chromedp.Do(ctx, chromedp.Navigate(r.srv.URL()+"#/task/"+back.ID)); err != nil {
			t.Fatal(err)
		}
		typeAndClick(ctx, t, `#detail-box [data-merge="`+back.ID+`"] [data-act="reject-form"]`, "finish the list")
		waitText(ctx, t, `#detail-box .meta`, "status active")
		tk, err := r.s.Task(back.ID)
		if err != nil || tk.Status != store.TaskActive || tk.Rejected != "finish the list" {
			t.Fatalf("task after send back: %+v %v", tk, err)
		}
		if out := git(t, dir, "ls-tree", "--name-only", "main"); strings.Contains(out, "TODO.md") {
			t.Fatalf("main has the rejected work: %s", out)
		}
	})
}

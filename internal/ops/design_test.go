package ops

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/plasmodium/pm/internal/config"
	"github.com/plasmodium/pm/internal/design"
	"github.com/plasmodium/pm/internal/errs"
	"github.com/plasmodium/pm/internal/openaitest"
	"github.com/plasmodium/pm/internal/state/fsstate"
	"github.com/plasmodium/pm/internal/store"
)

// designSetup puts 01-sum's buggy file in a fresh project and serves
// evalScript; it returns the session (as actor), the file and the fix.
func designSetup(t *testing.T, actor store.Actor) (*Session, string, string) {
	t.Helper()
	src := filepath.Join("..", "..", "testdata", "designer-eval", "01-sum")
	bug, err := os.ReadFile(filepath.Join(src, "prog.go"))
	if err != nil {
		t.Fatal(err)
	}
	fixed, err := os.ReadFile(filepath.Join(src, "fixed.go.txt"))
	if err != nil {
		t.Fatal(err)
	}
	srv := openaitest.New()
	t.Cleanup(srv.Close)
	srv.Handle(evalScript(string(fixed)))
	env := map[string]string{"OPENAI_BASE_URL": srv.BaseURL(), "PM_MODEL": "m"}
	s := newStore(t)
	file := filepath.Join(s.ProjectDir(), "prog.go")
	if err := os.WriteFile(file, bug, 0o644); err != nil {
		t.Fatal(err)
	}
	return &Session{Store: s, State: fsstate.New(s), Actor: actor, Getenv: func(k string) string { return env[k] }}, file, string(fixed)
}

// A design spends from budgets.agent like an llm agent: past it, the
// design ends in the error state, saved.
func TestDesignStopsAtBudget(t *testing.T) {
	sess, file, _ := designSetup(t, store.Human)
	sess.Store.Config().Budgets.Agent = config.Budget{MaxTurns: 2}
	res, err := Design(context.Background(), sess, DesignInput{File: file, Goal: "sum", Angles: []string{"correctness"}})
	if err == nil || !strings.Contains(err.Error(), "budget exceeded: model turns 2 of 2") || errs.CodeOf(err) != errs.Failure {
		t.Fatalf("err = %v", err)
	}
	var st design.State
	if rerr := sess.Store.ReadDesign(res.Report.ID, &st); rerr != nil {
		t.Fatal(rerr)
	}
	if st.Status != design.StatusComplete || st.Outcome != design.StatusError || st.Spent.Turns != 2 {
		t.Errorf("saved: %s %s, %d turns", st.Status, st.Outcome, st.Spent.Turns)
	}
}

func TestDesignReviewOwnersOnly(t *testing.T) {
	role := agentActor("r_a", "tk-aaaaaa", "ph-aaaaaa", "qa")
	sess, file, fixed := designSetup(t, role)
	addTask(t, sess.Store, "tk-aaaaaa", store.TaskActive, 0)
	_, err := DesignReview(context.Background(), sess, DesignReviewInput{File: "prog.go", Goal: "sum", Angles: []string{"correctness"}, Apply: true})
	if err == nil || !strings.Contains(err.Error(), "is not the owner") {
		t.Fatalf("a role agent ran design_review: %v", err)
	}
	if ids, _ := sess.Store.DesignIDs(); len(ids) != 0 {
		t.Errorf("a refused design_review created %v", ids)
	}
	sess.Actor = agentActor("own_aaaa", "tk-aaaaaa", "", "")
	tl, _ := LookupTool("design_review")
	out, err := tl.Call(context.Background(), sess, []byte(`{"file":"prog.go","goal":"sum","angles":["correctness"],"apply":true}`))
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(out, "Status: complete (converged)") || !strings.Contains(out, "Applied to prog.go") {
		t.Errorf("tool text:\n%s", out)
	}
	if got, _ := os.ReadFile(file); string(got) != fixed {
		t.Errorf("file after apply:\n%s", got)
	}
}

func TestDesignApplyRefusals(t *testing.T) {
	sess, file, _ := designSetup(t, store.Human)
	res, err := Design(context.Background(), sess, DesignInput{File: file, Goal: "sum", Angles: []string{"correctness"}})
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(file, []byte("package prog\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	err = DesignApply(context.Background(), sess, res.Report.ID)
	if err == nil || errs.CodeOf(err) != errs.State || !strings.Contains(err.Error(), "changed since design") {
		t.Errorf("apply over a changed file: %v", err)
	}
	if got, _ := os.ReadFile(file); string(got) != "package prog\n" {
		t.Errorf("file written: %q", got)
	}
	var nf *errs.Error
	if err := DesignApply(context.Background(), sess, "ds-zzzzzz"); !errors.As(err, &nf) || errs.CodeOf(err) != errs.Usage {
		t.Errorf("bad id: %v", err)
	}
}

// One process runs a design at a time: a second is refused, changing
// nothing.
func TestDesignRunLock(t *testing.T) {
	sess, file, _ := designSetup(t, store.Human)
	sess.Store.Config().Budgets.Agent = config.Budget{MaxTurns: 1}
	res, _ := Design(context.Background(), sess, DesignInput{File: file, Goal: "sum", Angles: []string{"correctness"}})
	// Make it resumable again, as if it had been interrupted, and hold its lock.
	var st design.State
	if err := sess.Store.ReadDesign(res.Report.ID, &st); err != nil {
		t.Fatal(err)
	}
	st.Status, st.Outcome = design.StatusProcessing, ""
	if err := sess.Store.WriteDesign(st.ID, &st); err != nil {
		t.Fatal(err)
	}
	unlock, ok, err := sess.Store.TryLockDesign(st.ID)
	if err != nil || !ok {
		t.Fatalf("lock: %v %v", ok, err)
	}
	defer unlock()
	_, err = Design(context.Background(), sess, DesignInput{Resume: st.ID})
	if err == nil || errs.CodeOf(err) != errs.State || !strings.Contains(err.Error(), "being run by another process") {
		t.Fatalf("second runner: %v", err)
	}
}

// A design (an owner's design_review writes the result back) never reads or
// writes pm's state, .git or prompts/, nor a file with another hard link, by
// any path that leads there.
func TestDesignFileRules(t *testing.T) {
	sess, file, _ := designSetup(t, store.Human)
	project := sess.Store.ProjectDir()
	write := func(rel, text string) string {
		p := filepath.Join(project, rel)
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(text), 0o755); err != nil {
			t.Fatal(err)
		}
		return p
	}
	write(".git/hooks/pre-commit", "#!/bin/sh\n")
	write("prompts/owner.md", "---\nname: owner\n---\n")
	outside := filepath.Join(t.TempDir(), "secret.go")
	if err := os.WriteFile(outside, []byte("package x\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	must := func(err error) {
		if err != nil {
			t.Fatal(err)
		}
	}
	must(os.Link(outside, filepath.Join(project, "linked.go")))
	must(os.Symlink(".git/hooks", filepath.Join(project, "hooks")))
	cases := []struct{ file, want string }{
		{".git/hooks/pre-commit", "is in "},
		{"hooks/pre-commit", "is in "},
		{"prompts/owner.md", "is in "},
		{".plasmodium/config.json", "is in "},
		{"linked.go", "hard links"},
	}
	for _, c := range cases {
		t.Run(c.file, func(t *testing.T) {
			_, err := Design(context.Background(), sess, DesignInput{File: c.file, Goal: "x", Angles: []string{"correctness"}})
			if err == nil || !strings.Contains(err.Error(), c.want) {
				t.Fatalf("got %v, want a refusal about %q", err, c.want)
			}
		})
	}
	if ids, _ := sess.Store.DesignIDs(); len(ids) != 0 {
		t.Fatalf("refused designs were created: %v", ids)
	}
	_ = file
}

// The eval's go test runs code models wrote: it sees no secret variable of
// pm's environment (it used to get them all).
func TestGoTestSeesNoSecret(t *testing.T) {
	sess, _, _ := designSetup(t, store.Human)
	t.Setenv("OPENAI_API_KEY", "sk-eval-secret-0123456789")
	dir := t.TempDir()
	for name, text := range map[string]string{
		"go.mod": "module probe\n\ngo 1.22\n",
		"probe_test.go": `package probe

import (
	"os"
	"testing"
)

func TestNoKey(t *testing.T) {
	if os.Getenv("OPENAI_API_KEY") != "" {
		t.Fatal("the key reached the test")
	}
}
`,
	} {
		if err := os.WriteFile(filepath.Join(dir, name), []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	if err := goTest(context.Background(), sess, dir); err != nil {
		t.Fatalf("go test: %v", err)
	}
}

// Bad passes, and a resume that names what the design already fixed, are
// refused with exit 2 before anything is created or asked of a model; the
// same range holds for an eval and for code_designer.max_passes.
func TestDesignRefusesBadInput(t *testing.T) {
	cases := []struct {
		name   string
		config int // code_designer.max_passes
		in     DesignInput
		eval   bool
		want   string
	}{
		{"negative passes", 0, DesignInput{Goal: "sum", MaxPasses: -1}, false, "max passes -1 is out of range"},
		{"too many passes", 0, DesignInput{Goal: "sum", MaxPasses: MaxDesignPasses + 1}, false, "max passes 101 is out of range"},
		{"absurd passes", 0, DesignInput{Goal: "sum", MaxPasses: 1 << 40}, false, "max passes 1099511627776 is out of range"},
		{"config out of range", 500, DesignInput{Goal: "sum"}, false, "code_designer.max_passes 500 is out of range"},
		{"resume with a goal", 0, DesignInput{Resume: "ds-000000", Goal: "other"}, false, "a resumed design takes no goal"},
		{"resume with passes", 0, DesignInput{Resume: "ds-000000", MaxPasses: 3}, false, "a resumed design takes no goal"},
		{"resume with angles", 0, DesignInput{Resume: "ds-000000", Angles: []string{"style"}}, false, "a resumed design takes no goal"},
		{"resume with a test", 0, DesignInput{Resume: "ds-000000", Test: "true"}, false, "a resumed design takes no goal"},
		{"eval negative passes", 0, DesignInput{MaxPasses: -3}, true, "max passes -3 is out of range"},
		{"eval too many passes", 0, DesignInput{MaxPasses: 1_000_000_000}, true, "max passes 1000000000 is out of range"},
		{"eval config out of range", 101, DesignInput{}, true, "code_designer.max_passes 101 is out of range"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			sess, file, _ := designSetup(t, store.Human)
			sess.Store.Config().CodeDesigner.MaxPasses = c.config
			var err error
			if c.eval {
				_, err = DesignEval(context.Background(), sess, DesignEvalInput{Dir: filepath.Join("..", "..", "testdata", "designer-eval"), MaxPasses: c.in.MaxPasses})
			} else {
				if c.in.Resume == "" {
					c.in.File = file
				}
				_, err = Design(context.Background(), sess, c.in)
			}
			if err == nil || !strings.Contains(err.Error(), c.want) || errs.CodeOf(err) != errs.Usage || errs.TryOf(err) == "" {
				t.Fatalf("err = %v (code %d, try %q), want usage error %q", err, errs.CodeOf(err), errs.TryOf(err), c.want)
			}
			if ids, err := sess.Store.DesignIDs(); err != nil || len(ids) != 0 {
				t.Errorf("designs after a refusal: %v %v", ids, err)
			}
		})
	}
}

// Passes left out are the configured default, else design's; given, they
// are kept.
func TestDesignPasses(t *testing.T) {
	for _, c := range []struct{ config, given, want int }{
		{0, 0, 8}, {4, 0, 4}, {4, 2, 2}, {0, 1, 1}, {0, MaxDesignPasses, MaxDesignPasses},
	} {
		sesss := newStore(t)
		sess := &Session{Store: sesss, State: fsstate.New(sesss), Actor: store.Human}
		sess.Store.Config().CodeDesigner.MaxPasses = c.config
		if got, err := designPasses(sess, c.given); err != nil || got != c.want {
			t.Errorf("config %d, given %d: %d, %v; want %d", c.config, c.given, got, err, c.want)
		}
	}
}

package ops

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strings"
	"time"

	"github.com/plasmodium/pm/internal/design"
	"github.com/plasmodium/pm/internal/errs"
	"github.com/plasmodium/pm/internal/ids"
	"github.com/plasmodium/pm/internal/llm"
	"github.com/plasmodium/pm/internal/sandbox"
)

// DesignEvalInput runs pm design --eval over the programs in Dir.
type DesignEvalInput struct {
	Dir       string
	Angles    []string
	MaxPasses int
}

// EvalRun is one program fixed one way: Fixed when its test passed after.
type EvalRun struct {
	Fixed      bool          `json:"fixed"`
	Tokens     int64         `json:"tokens"`
	DurationMS int64         `json:"duration_ms"`
	Outcome    design.Status `json:"outcome,omitempty"`
	Error      string        `json:"error,omitempty"`
}

// EvalProgram is one program's result with the mode off (one worker
// request) and on (the whole loop).
type EvalProgram struct {
	Name string  `json:"name"`
	Off  EvalRun `json:"off"`
	On   EvalRun `json:"on"`
}

// EvalTotals sums one mode over the programs.
type EvalTotals struct {
	Fixed      int     `json:"fixed"`
	FixRate    float64 `json:"fix_rate"`
	Tokens     int64   `json:"tokens"`
	DurationMS int64   `json:"duration_ms"`
}

// EvalReport is pm design --eval's answer.
type EvalReport struct {
	Programs []EvalProgram `json:"programs"`
	Total    int           `json:"total"`
	Off      EvalTotals    `json:"off"`
	On       EvalTotals    `json:"on"`
	Models   []string      `json:"models"`
}

// evalProgram is one program of an eval directory: a Go module whose one
// non-test file has a seeded bug its test finds, and goal.txt.
type evalProgram struct {
	name, dir, file, goal string
}

// DesignEval measures the code designer: for each program, the worker
// model fixes the file in one request (mode off), then the loop runs on it
// (mode on); after each, the program's `go test` decides whether the bug is
// fixed. Programs run in temporary copies; their tests run confined like
// run_command (the code is the models').
func DesignEval(ctx context.Context, s *Session, in DesignEvalInput) (*EvalReport, error) {
	maxPasses, err := designPasses(s, in.MaxPasses)
	if err != nil {
		return nil, err
	}
	progs, err := evalPrograms(in.Dir)
	if err != nil {
		return nil, err
	}
	angles, err := pickAngles(s.Store, s.State, in.Angles)
	if err != nil {
		return nil, err
	}
	// budgets.agent bounds each run (a program in one mode), as it bounds
	// each design: fresh models, counters and clock per run.
	models := func() (sup, wrk design.Model, err error) {
		var spent llm.Counters
		return designModels(s, &spent, time.Now())
	}
	sup, wrk, err := models()
	if err != nil {
		return nil, err
	}
	rep := &EvalReport{Total: len(progs), Models: []string{sup.Name(), wrk.Name()}}
	for _, p := range progs {
		ep := EvalProgram{Name: p.name}
		ep.Off = evalOnce(ctx, s, p, func(content string) (string, int64, design.Status, error) {
			_, wrk, err := models()
			if err != nil {
				return content, 0, "", err
			}
			out, m, err := design.FixOnce(ctx, wrk, p.goal, p.file, content, nil)
			return out, m.TokensUsed, "", err
		})
		ep.On = evalOnce(ctx, s, p, func(content string) (string, int64, design.Status, error) {
			sup, wrk, err := models()
			if err != nil {
				return content, 0, "", err
			}
			st := &design.State{ID: "eval-" + p.name, SourceFile: p.file, Goal: p.goal, MaxPasses: maxPasses,
				Status: design.StatusInitializing, Units: design.Split(p.file, content)}
			eng := &design.Engine{Supervisor: sup, Worker: wrk, Angles: angles, Journal: discardJournal{},
				NewID: func() string { return s.Store.IDs.New(ids.Request) }}
			err = eng.Run(ctx, st)
			var tokens int64
			for _, u := range st.Usage {
				tokens += u.Tokens
			}
			return st.Content(), tokens, st.Outcome, err
		})
		if ctx.Err() != nil {
			return nil, ctx.Err()
		}
		rep.Programs = append(rep.Programs, ep)
		add(&rep.Off, ep.Off)
		add(&rep.On, ep.On)
	}
	for _, t := range []*EvalTotals{&rep.Off, &rep.On} {
		if rep.Total > 0 {
			t.FixRate = float64(t.Fixed) / float64(rep.Total)
		}
	}
	return rep, nil
}

func add(t *EvalTotals, r EvalRun) {
	if r.Fixed {
		t.Fixed++
	}
	t.Tokens += r.Tokens
	t.DurationMS += r.DurationMS
}

// evalOnce fixes a fresh copy of p with fix and runs its test.
func evalOnce(ctx context.Context, s *Session, p evalProgram, fix func(string) (string, int64, design.Status, error)) EvalRun {
	var r EvalRun
	tmp, err := os.MkdirTemp("", "pm-eval-")
	if err != nil {
		return EvalRun{Error: err.Error()}
	}
	defer os.RemoveAll(tmp)
	if err := os.CopyFS(tmp, os.DirFS(p.dir)); err != nil {
		return EvalRun{Error: err.Error()}
	}
	data, err := os.ReadFile(filepath.Join(tmp, p.file))
	if err != nil {
		return EvalRun{Error: err.Error()}
	}
	start := time.Now()
	out, tokens, outcome, err := fix(string(data))
	r.DurationMS, r.Tokens, r.Outcome = time.Since(start).Milliseconds(), tokens, outcome
	if err != nil {
		r.Error = err.Error()
	}
	if werr := os.WriteFile(filepath.Join(tmp, p.file), []byte(out), 0o644); werr != nil {
		r.Error = werr.Error()
		return r
	}
	r.Fixed = goTest(ctx, s, tmp) == nil
	return r
}

// goTest runs the program's test in dir, confined like run_command unless
// config turns the sandbox off: it may write only dir, its temp directory
// and Go's build cache, and never sees pm's state.
func goTest(ctx context.Context, s *Session, dir string) error {
	ctx, cancel := context.WithTimeout(ctx, 5*time.Minute)
	defer cancel()
	tmp := filepath.Join(dir, ".tmp")
	if err := os.MkdirAll(tmp, 0o755); err != nil {
		return err
	}
	line := "go test -count=1 ./..."
	var cmd *exec.Cmd
	if s.Store.Config().Sandbox.Off {
		cmd = sandbox.Unconfined(ctx, line)
	} else {
		cmd, _ = sandbox.Command(ctx, confinedPolicy(ctx, s, realPath(dir), realPath(tmp)), line)
	}
	// The code under test was written by models: no secret in its
	// environment, and its whole process group killed at the deadline.
	out, err := runBounded(ctx, cmd, dir, tmp, append(confinedGoEnv(tmp), "GOWORK=off", "GOTOOLCHAIN=local", "GOFLAGS=")...)
	if err != nil {
		return err
	}
	if head, _, _ := strings.Cut(out, "\n"); head != "exit code 0" {
		return errors.New(head)
	}
	return nil
}

// evalPrograms lists DIR's programs, sorted by name.
func evalPrograms(dir string) ([]evalProgram, error) {
	ents, err := os.ReadDir(dir)
	if err != nil {
		return nil, errs.NotFoundf("give a directory of programs, e.g. testdata/designer-eval", "eval directory: %v", err)
	}
	var out []evalProgram
	for _, e := range ents {
		if !e.IsDir() {
			continue
		}
		p, err := evalProgramAt(filepath.Join(dir, e.Name()))
		if err != nil {
			return nil, err
		}
		out = append(out, p)
	}
	if len(out) == 0 {
		return nil, errs.Usagef("each program is a directory with go.mod, one .go file, its _test.go and goal.txt", "no programs in %s", dir)
	}
	sort.Slice(out, func(i, j int) bool { return out[i].name < out[j].name })
	return out, nil
}

func evalProgramAt(dir string) (evalProgram, error) {
	try := "each program is a directory with go.mod, one .go file, its _test.go and goal.txt"
	goal, err := os.ReadFile(filepath.Join(dir, "goal.txt"))
	if err != nil {
		return evalProgram{}, errs.Usagef(try, "%s has no goal.txt", dir)
	}
	var files []string
	names, _ := filepath.Glob(filepath.Join(dir, "*.go"))
	for _, n := range names {
		if !strings.HasSuffix(n, "_test.go") {
			files = append(files, filepath.Base(n))
		}
	}
	if len(files) != 1 {
		return evalProgram{}, errs.Usagef(try, "%s has %d non-test .go files, want 1", dir, len(files))
	}
	return evalProgram{name: filepath.Base(dir), dir: dir, file: files[0], goal: strings.TrimSpace(string(goal))}, nil
}

// discardJournal keeps an eval's designs in memory only: they are
// measurements, not work to resume.
type discardJournal struct{}

func (discardJournal) Save(*design.State) error  { return nil }
func (discardJournal) Record(design.Entry) error { return nil }

// Text renders the eval report for people.
func (r *EvalReport) Text() string {
	var b strings.Builder
	fmt.Fprintf(&b, "Code designer eval: %d programs (models: %s)\n\n", r.Total, strings.Join(r.Models, ", "))
	fmt.Fprintf(&b, "%-16s %-10s %-10s %10s %10s\n", "program", "mode off", "mode on", "tokens on", "time on")
	for _, p := range r.Programs {
		fmt.Fprintf(&b, "%-16s %-10s %-10s %10d %9dms\n", p.Name, verdict(p.Off), verdict(p.On), p.On.Tokens, p.On.DurationMS)
	}
	fmt.Fprintf(&b, "\nmode off: fixed %d/%d (%.0f%%), %d tokens, %dms\n", r.Off.Fixed, r.Total, 100*r.Off.FixRate, r.Off.Tokens, r.Off.DurationMS)
	fmt.Fprintf(&b, "mode on:  fixed %d/%d (%.0f%%), %d tokens, %dms\n", r.On.Fixed, r.Total, 100*r.On.FixRate, r.On.Tokens, r.On.DurationMS)
	return b.String()
}

func verdict(r EvalRun) string {
	switch {
	case r.Fixed:
		return "fixed"
	case r.Error != "":
		return "error"
	}
	return "not fixed"
}

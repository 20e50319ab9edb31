package ops

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"syscall"
	"time"

	"github.com/plasmodium/pm/internal/bus"
	"github.com/plasmodium/pm/internal/design"
	"github.com/plasmodium/pm/internal/errs"
	"github.com/plasmodium/pm/internal/ids"
	"github.com/plasmodium/pm/internal/llm"
	"github.com/plasmodium/pm/internal/prompt"
	"github.com/plasmodium/pm/internal/state"
	"github.com/plasmodium/pm/internal/store"
)

// MaxDesignFile bounds the file pm design reviews: every unit travels in
// several model requests per pass.
const MaxDesignFile = design.MaxContent

// DesignInput starts a design (File, Goal) or resumes one (Resume).
type DesignInput struct {
	File      string   `json:"file" jsonschema:"the file to review and improve, relative to the project"`
	Goal      string   `json:"goal" jsonschema:"what the code must do; the reviews judge it against this"`
	Angles    []string `json:"angles,omitempty" jsonschema:"angles to review from (default: all: correctness, efficiency, style, security and any the project adds)"`
	MaxPasses int      `json:"max_passes,omitempty" jsonschema:"most passes per unit, 1 to 100 (default 8, or code_designer.max_passes)"`
	Test      string   `json:"test,omitempty" jsonschema:"a shell command the supervisor may run (tool test) as if the file had the candidate content, e.g. go test ./..."`
	Resume    string   `json:"-"`
	// Progress, when set, sees every log entry as it is recorded (the CLI
	// prints a line per step to stderr).
	Progress func(design.Entry) `json:"-"`
}

// DesignResult is a finished (or failed) design: its state and report.
type DesignResult struct {
	State  *design.State `json:"-"`
	Report design.Report `json:"report"`
	// Applied says the result was written back (DesignCall, DesignReview).
	Applied bool `json:"applied,omitempty"`
}

// Design runs the code designer's loop (internal/design) over a copy of a
// file: the original is never touched (DesignApply writes the result back).
// A design that ends in the error state returns its result and an error.
func Design(ctx context.Context, s *Session, in DesignInput) (*DesignResult, error) {
	st, deps, err := designState(s, in)
	if err != nil {
		return nil, err
	}
	res := &DesignResult{State: st}
	if st.Done() {
		res.Report = design.BuildReport(st)
		return res, nil
	}
	unlock, ok, err := s.State.TryLockDesign(st.ID)
	if err != nil {
		return nil, err
	}
	if !ok {
		return nil, errs.Statef("wait for it, or see 'pm designs'", "design %s is being run by another process", st.ID)
	}
	defer unlock()
	eng, err := designEngine(s, st, deps, in.Progress)
	if err != nil {
		return nil, err
	}
	runErr := eng.Run(ctx, st)
	res.Report = design.BuildReport(st)
	var fe *design.FailedError
	if errors.As(runErr, &fe) {
		return res, errs.Failf("see the design's log in .plasmodium/designs/"+st.ID+"/log.jsonl; resume a fixed setup with 'pm design FILE --goal ...'", "%v", fe)
	}
	if runErr != nil {
		return res, fmt.Errorf("design %s stopped (resume with 'pm design --resume %s'): %w", st.ID, st.ID, runErr)
	}
	return res, nil
}

// MaxDesignPasses bounds the passes per unit (--max-passes,
// code_designer.max_passes): each pass is several model requests.
const MaxDesignPasses = 100

// MaxPassesError refuses n passes per unit.
func MaxPassesError(n int) error {
	return errs.Usagef(fmt.Sprintf("give --max-passes between 1 and %d, or leave it out for the default (%d, or code_designer.max_passes)", MaxDesignPasses, design.DefaultMaxPasses),
		"max passes %d is out of range", n)
}

// designPasses is the passes per unit a design or an eval runs: n, or for
// 0 (not given) code_designer.max_passes, else design.DefaultMaxPasses.
// It is checked here, the one place every caller (CLI, tools) goes through.
func designPasses(s *Session, n int) (int, error) {
	if n == 0 {
		n = s.Store.Config().CodeDesigner.MaxPasses
		if n > MaxDesignPasses {
			return 0, errs.Usagef(fmt.Sprintf("set code_designer.max_passes between 1 and %d in .plasmodium/config.json, or give --max-passes", MaxDesignPasses), "code_designer.max_passes %d is out of range", n)
		}
		if n == 0 {
			n = design.DefaultMaxPasses
		}
	}
	if n < 1 || n > MaxDesignPasses {
		return 0, MaxPassesError(n)
	}
	return n, nil
}

// designDeps is what a design's engine is built from: its angles and its
// models' providers, resolved once.
type designDeps struct {
	angles    []design.Angle
	providers designProviders
}

// designState loads the design to resume (deps nil: designEngine resolves
// it), or creates a new one with the deps it checked on the way.
func designState(s *Session, in DesignInput) (*design.State, *designDeps, error) {
	if in.Resume != "" {
		if in.Goal != "" || len(in.Angles) > 0 || in.MaxPasses != 0 || in.Test != "" {
			return nil, nil, errs.Usagef("resume with the design id alone: the design keeps its goal, angles, passes and test", "a resumed design takes no goal, angles, max passes or test")
		}
		var st design.State
		if err := s.State.ReadDesign(in.Resume, &st); err != nil {
			return nil, nil, err
		}
		return &st, nil, nil
	}
	if strings.TrimSpace(in.Goal) == "" {
		return nil, nil, errs.Usagef(`say what the code must do: pm design FILE --goal "..."`, "a design needs a goal")
	}
	// Refuse before anything is created when no model is configured.
	providers, err := configuredProviders(s)
	if err != nil {
		return nil, nil, err
	}
	rel, content, err := readDesignFile(s.Store, in.File)
	if err != nil {
		return nil, nil, err
	}
	angles, err := pickAngles(s.Store, s.State, in.Angles)
	if err != nil {
		return nil, nil, err
	}
	maxPasses, err := designPasses(s, in.MaxPasses)
	if err != nil {
		return nil, nil, err
	}
	id, err := s.State.CreateDesign()
	if err != nil {
		return nil, nil, err
	}
	sum := sha256.Sum256([]byte(content))
	now := time.Now().UTC()
	st := &design.State{
		ID: id, SourceFile: rel, SourceHash: hex.EncodeToString(sum[:]), Goal: in.Goal,
		MaxPasses: maxPasses, TestCommand: strings.TrimSpace(in.Test), Criteria: design.DefaultCriteria, Status: design.StatusInitializing,
		Units: design.Split(rel, content), Usage: map[string]*design.Usage{}, CreatedAt: now, UpdatedAt: now,
	}
	for _, a := range angles {
		st.Angles = append(st.Angles, a.ID)
	}
	if err := s.State.WriteDesignCopy(id, rel, []byte(content)); err != nil {
		return nil, nil, err
	}
	return st, &designDeps{angles: angles, providers: providers}, s.State.WriteDesign(id, st)
}

// readDesignFile reads a regular file inside the project, bounded; rel is
// its path relative to the project. The file primitives' rules hold (an
// owner's design_review writes the result back): never pm's state, .git
// (hooks run outside any sandbox) or prompts/ (objects redefined), never a
// file with another hard link, judged on the opened file's real path so a
// symlink swapped in after the checks by name cannot lead elsewhere.
func readDesignFile(st *store.Store, file string) (rel, content string, err error) {
	project := st.ProjectDir()
	if strings.TrimSpace(file) == "" {
		return "", "", errs.Usagef(`name the file: pm design FILE --goal "..."`, "a design needs a file")
	}
	abs := file
	if !filepath.IsAbs(abs) {
		abs = filepath.Join(project, file)
	}
	rel, err = filepath.Rel(project, filepath.Clean(abs))
	if err != nil || rel == ".." || strings.HasPrefix(rel, "../") {
		return "", "", errs.Usagef("design files inside the project", "%s is outside the project %s", file, project)
	}
	// Where a symlink leads is judged on the opened file (designable).
	f, err := os.OpenFile(abs, os.O_RDONLY|syscall.O_NONBLOCK, 0)
	if err != nil {
		if errors.Is(err, os.ErrNotExist) {
			return "", "", errs.NotFoundf("check the path", "no file %s", file)
		}
		return "", "", errs.Usagef("give a regular file", "%v", err)
	}
	defer f.Close()
	fi, err := f.Stat()
	if err != nil || !fi.Mode().IsRegular() {
		return "", "", errs.Usagef("give a regular file", "%s is not a regular file", file)
	}
	if err := designable(st, f, fi, file); err != nil {
		return "", "", err
	}
	data, err := io.ReadAll(io.LimitReader(f, MaxDesignFile+1))
	if err != nil {
		return "", "", err
	}
	if len(data) > MaxDesignFile {
		return "", "", errs.Usagef("design a smaller file (under 256 KiB), or split it", "%s is over %d bytes", file, MaxDesignFile)
	}
	return rel, string(data), nil
}

// designable admits an opened design file: where it really is (the
// kernel's name for the descriptor) must be inside the project and outside
// the state directory, .git and prompts/, and it must have one link.
func designable(st *store.Store, f *os.File, fi os.FileInfo, given string) error {
	real, err := os.Readlink(fmt.Sprintf("/proc/self/fd/%d", f.Fd()))
	if err != nil {
		return errs.Failf("", "where %s is: %v", given, err)
	}
	project := realPath(st.ProjectDir())
	if !inside(project, real) {
		return errs.Usagef("design files inside the project", "%s leads outside the project %s", given, project)
	}
	if d := undesignable(st, real); d != "" {
		return errs.Usagef("design the project's own files; pm's state, .git and prompts/ are not designed", "%s is in %s", given, d)
	}
	if sys, ok := fi.Sys().(*syscall.Stat_t); ok && sys.Nlink > 1 {
		return errs.Usagef("design a file with one name", "%s has %d hard links", given, sys.Nlink)
	}
	return nil
}

func inside(dir, p string) bool {
	rel, err := filepath.Rel(dir, p)
	return err == nil && rel != ".." && !strings.HasPrefix(rel, "../") && !filepath.IsAbs(rel)
}

// pickAngles resolves the angle names (all of them, heaviest first, when
// none are given).
func pickAngles(s *store.Store, rec state.State, names []string) ([]design.Angle, error) {
	set, err := prompt.LoadAngles(s, rec)
	if err != nil {
		return nil, err
	}
	if len(names) == 0 {
		names = set.Names()
		sort.SliceStable(names, func(i, j int) bool { return set[names[i]].Weight > set[names[j]].Weight })
	}
	out := make([]design.Angle, 0, len(names))
	seen := map[string]bool{}
	for _, n := range names {
		n = strings.TrimSpace(n)
		if seen[n] {
			continue
		}
		seen[n] = true
		o, ok := set[n]
		if !ok {
			return nil, errs.NotFoundf("known angles: "+strings.Join(set.Names(), ", "), "no angle %q", n)
		}
		out = append(out, design.Angle{ID: o.Name, Name: o.Description, System: o.Body, Criteria: o.Criteria, Weight: o.Weight})
	}
	return out, nil
}

// designEngine wires the engine to the configured models, the budget and
// the store; deps is what designState resolved (nil: resolve it now, for a
// resumed design).
func designEngine(s *Session, st *design.State, deps *designDeps, progress func(design.Entry)) (*design.Engine, error) {
	if deps == nil {
		angles, err := pickAngles(s.Store, s.State, st.Angles)
		if err != nil {
			return nil, err
		}
		providers, err := configuredProviders(s)
		if err != nil {
			return nil, err
		}
		deps = &designDeps{angles: angles, providers: providers}
	}
	started := time.Now().Add(-time.Duration(st.ActiveMS) * time.Millisecond)
	sup, wrk := deps.providers.models(s, &st.Spent, started)
	return &design.Engine{
		Supervisor: sup, Worker: wrk, Angles: deps.angles,
		Journal: &designJournal{s: s, id: st.ID, file: st.SourceFile, progress: progress},
		Tools:   designTools(s, st),
		NewID:   func() string { return s.Store.IDs.New(ids.Request) },
	}, nil
}

// designModels are the supervisor and worker models of config, spending
// from spent under budgets.agent (wall time counted from started).
func designModels(s *Session, spent *llm.Counters, started time.Time) (sup, wrk design.Model, err error) {
	p, err := configuredProviders(s)
	if err != nil {
		return nil, nil, err
	}
	sup, wrk = p.models(s, spent, started)
	return sup, wrk, nil
}

// designProviders are the supervisor's and the worker's model endpoints.
type designProviders struct{ sup, wrk llm.Provider }

// configuredProviders reads the design models' providers from config and
// the environment; a missing one is a usage error saying what to set.
func configuredProviders(s *Session) (designProviders, error) {
	cfg := s.Store.Config()
	provider := func(name string) (llm.Provider, error) {
		p, err := llm.ProviderFromEnvKey(s.getenv, cfg.Model.APIKeyEnv, cfg.Model.BaseURL, cfg.Model.Name, name)
		if err != nil {
			return p, errs.Usagef("configure a model: OPENAI_BASE_URL / OPENAI_API_KEY and PM_MODEL, or code_designer.supervisor_model and worker_model", "%v", err)
		}
		return p, nil
	}
	var p designProviders
	var err error
	if p.sup, err = provider(cfg.CodeDesigner.SupervisorModel); err != nil {
		return p, err
	}
	p.wrk, err = provider(cfg.CodeDesigner.WorkerModel)
	return p, err
}

// models are p's models spending from spent under budgets.agent (wall time
// counted from started).
func (p designProviders) models(s *Session, spent *llm.Counters, started time.Time) (sup, wrk design.Model) {
	b := s.Store.Config().Budgets.Agent
	budget := llm.Budget{MaxTurns: b.MaxTurns, MaxTokens: b.MaxTokens, MaxWall: time.Duration(b.MaxWallSeconds) * time.Second}
	model := func(p llm.Provider) design.Model {
		// The key is masked in what the model answers. The store's own set is
		// not changed: a long-lived process (pm mcp) shares the store between
		// goroutines, and its set already holds the environment's secrets.
		return &design.LLM{Provider: p, Budget: budget, Spent: spent, Started: started, Secrets: s.Store.Secrets.With(p.APIKey),
			OnUsage: func(u llm.Usage) { recordDesignCost(s, p.Model, u) }}
	}
	return model(p.sup), model(p.wrk)
}

// designJournal keeps a design in the store: its record, its temporary copy,
// its log, and each log line on the bus.
type designJournal struct {
	s        *Session
	id       string
	file     string
	progress func(design.Entry)
}

func (j *designJournal) Save(st *design.State) error {
	if err := j.s.State.WriteDesignCopy(j.id, j.file, []byte(st.Content())); err != nil {
		return err
	}
	return j.s.State.WriteDesign(j.id, st)
}

func (j *designJournal) Record(e design.Entry) error {
	if err := j.s.State.AppendDesignLog(j.id, e); err != nil {
		return err
	}
	if j.progress != nil {
		j.progress(e)
	}
	ev := bus.Event{Actor: j.s.Actor.Name}
	switch e.Kind {
	case design.EntryRequest:
		ev.Kind, ev.Text = bus.EvDesignRequest, fmt.Sprintf("%s %s: %s unit %d pass %d", j.id, e.Request.RequestID, e.Request.Type, e.Unit, e.Pass)
		ev.Data = bus.DesignRequest{Design: j.id, Unit: e.Unit, Pass: e.Pass, RequestID: e.Request.RequestID, Type: string(e.Request.Type)}
	case design.EntryResponse:
		m := e.Response.Metrics
		ev.Kind, ev.Text = bus.EvDesignResponse, fmt.Sprintf("%s %s: %s (%s, %d tokens)", j.id, e.Response.RequestID, e.Response.Status, m.Model, m.TokensUsed)
		ev.Data = bus.DesignResponse{Design: j.id, Unit: e.Unit, Pass: e.Pass, RequestID: e.Response.RequestID, Status: string(e.Response.Status),
			Tokens: m.TokensUsed, DurationMS: m.DurationMS, Model: m.Model}
	case design.EntryPlan:
		ev.Kind, ev.Text = bus.EvDesignPlan, fmt.Sprintf("%s: supervisor plans %s for unit %d pass %d", j.id, e.Plan.Type, e.Unit, e.Pass)
		ev.Data = bus.DesignPlan{Design: j.id, Unit: e.Unit, Pass: e.Pass, Type: string(e.Plan.Type)}
	default:
		ev.Kind, ev.Text = bus.EvDesignState, fmt.Sprintf("%s: %s", j.id, e.Status)
		ev.Data = bus.DesignState{Design: j.id, Unit: e.Unit, Pass: e.Pass, Status: string(e.Status)}
	}
	j.s.Store.Notify(ev)
	return nil
}

// DesignSummary is one line of pm designs.
type DesignSummary struct {
	ID        string        `json:"id"`
	File      string        `json:"file"`
	Goal      string        `json:"goal"`
	Status    design.Status `json:"status"`
	Outcome   design.Status `json:"outcome,omitempty"`
	Units     int           `json:"units"`
	Modified  int           `json:"modified"`
	CreatedAt time.Time     `json:"created_at"`
}

// Designs lists the designs, oldest first.
func Designs(_ context.Context, s *Session) ([]DesignSummary, error) {
	idl, err := s.State.DesignIDs()
	if err != nil {
		return nil, err
	}
	out := []DesignSummary{}
	for _, id := range idl {
		var st design.State
		if err := s.State.ReadDesign(id, &st); err != nil {
			continue // a design killed before its first record: nothing to show or resume
		}
		sum := DesignSummary{ID: st.ID, File: st.SourceFile, Goal: st.Goal, Status: st.Status, Outcome: st.Outcome, Units: len(st.Units), CreatedAt: st.CreatedAt}
		for _, u := range st.Units {
			if u.IsModified {
				sum.Modified++
			}
		}
		out = append(out, sum)
	}
	sort.SliceStable(out, func(i, j int) bool { return out[i].CreatedAt.Before(out[j].CreatedAt) })
	return out, nil
}

// DesignApply writes a complete design's result over its file, refusing
// when the file changed since the design read it (the diff would be wrong).
func DesignApply(_ context.Context, s *Session, id string) error {
	var st design.State
	if err := s.State.ReadDesign(id, &st); err != nil {
		return err
	}
	if !st.Done() || st.Outcome == design.StatusError {
		return errs.Statef("resume it first: pm design --resume "+id, "design %s is %s (%s): only a complete design that did not fail is applied", id, st.Status, st.Outcome)
	}
	path := filepath.Join(s.Store.ProjectDir(), st.SourceFile)
	_, current, err := readDesignFile(s.Store, path)
	if err != nil {
		return err
	}
	sum := sha256.Sum256([]byte(current))
	if hex.EncodeToString(sum[:]) != st.SourceHash {
		return errs.Statef("run a new design on the file as it is now", "%s changed since design %s read it; not applied", st.SourceFile, id)
	}
	return replaceFile(s.Store, path, []byte(st.Content()))
}

// undesignable is the directory of the project a design may not touch that
// holds real (a real path), or "": pm's state, .git (its hooks run outside
// any sandbox) and prompts/ (objects would be redefined).
func undesignable(st *store.Store, real string) string {
	project := realPath(st.ProjectDir())
	for _, d := range []string{realPath(st.Root), filepath.Join(project, ".git"), filepath.Join(project, "prompts")} {
		if inside(d, real) {
			return d
		}
	}
	return ""
}

// replaceFile writes data over path by a rename, keeping its mode: a crash
// leaves the old file or the new one, never half of each. The directory is
// judged again right before (designable judged the file when it was read).
func replaceFile(st *store.Store, path string, data []byte) error {
	fi, err := os.Stat(path)
	if err != nil {
		return err
	}
	dir := realPath(filepath.Dir(path))
	project := realPath(st.ProjectDir())
	if !inside(project, dir) || undesignable(st, dir) != "" {
		return errs.Usagef("design the project's own files", "%s is no longer where the design read it", path)
	}
	return st.ReplaceFile(path, data, fi.Mode().Perm())
}

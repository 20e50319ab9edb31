package bench

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"

	"github.com/plasmodium/pm/internal/config"
	"github.com/plasmodium/pm/internal/lockedfile"
	"github.com/plasmodium/pm/internal/state"
	"github.com/plasmodium/pm/internal/state/stateopen"
	"github.com/plasmodium/pm/internal/store"
)

// Project is a pm state directory made by `pm init`, with raised limits.
type Project struct {
	PM
	Store *store.Store
	State state.State // the store's records (stateopen.Open)
}

// NewProject runs `pm init` in dir and raises the limits a benchmark needs:
// messages per phase and phases per task to msgs, runtime none by default.
func NewProject(ctx context.Context, bin, dir string, msgs int) (*Project, error) {
	p := &Project{PM: PM{Bin: bin, Dir: dir, Env: Env(dir), Home: dir + "/" + store.DirName}}
	if _, _, err := p.Run(ctx, "", "init"); err != nil {
		return nil, err
	}
	s, err := store.Open(p.Home)
	if err != nil {
		return nil, err
	}
	cfg := s.Config() // this process's copy, written back below
	cfg.Limits.MessagesPerPhase = max(cfg.Limits.MessagesPerPhase, msgs)
	cfg.Limits.PhasesPerTask = max(cfg.Limits.PhasesPerTask, 1000)
	cfg.Runtime.Default = config.RuntimeNone
	path := s.ConfigPath()
	if err := lockedfile.With(path, func() error { return lockedfile.WriteJSON(path, cfg) }); err != nil {
		return nil, err
	}
	st, err := stateopen.Open(ctx, s)
	if err != nil {
		return nil, err
	}
	p.Store, p.State = s, st
	return p, nil
}

// Task creates a task on the none runtime and returns it.
func (p *Project) Task(ctx context.Context, desc string) (*store.Task, error) {
	out, _, err := p.Run(ctx, "", "task", desc, "--runtime", "none", "--json")
	if err != nil {
		return nil, err
	}
	var t store.Task
	if err := json.Unmarshal([]byte(out), &t); err != nil || t.ID == "" {
		return nil, fmt.Errorf("pm task --json: unexpected output %q", strings.TrimSpace(out))
	}
	return &t, nil
}

// Phase opens a phase on t as its owner, with one role agent (designer, on
// the none runtime: recorded, never started), and returns the phase.
func (p *Project) Phase(ctx context.Context, t *store.Task, limit int) (*store.Phase, error) {
	if _, _, err := p.Run(ctx, t.Owner, "phase", "Bench", "--limit", fmt.Sprint(limit), "--roles", "designer"); err != nil {
		return nil, err
	}
	ph, err := p.Store.ActivePhase(t.ID)
	if err != nil {
		return nil, err
	}
	if ph == nil || len(ph.Agents) != 1 {
		return nil, fmt.Errorf("pm phase: no active phase with one role agent in %s", t.ID)
	}
	return ph, nil
}

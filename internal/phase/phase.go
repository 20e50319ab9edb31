package phase

import (
	"slices"
	"strings"
	"unicode/utf8"

	"github.com/plasmodium/pm/internal/bus"
	"github.com/plasmodium/pm/internal/errs"
	"github.com/plasmodium/pm/internal/ids"
	"github.com/plasmodium/pm/internal/state"
	"github.com/plasmodium/pm/internal/store"
)

// MaxName bounds a phase name (bytes).
const MaxName = 200

// Spec is what the owner asks for with pm phase.
type Spec struct {
	TaskID string
	Name   string
	Limit  int
	Roles  []string
	Rules  string
}

// Create opens a new phase on an active task, enforcing one active phase per
// task and the breakers. It records the phase; the caller starts role agents.
func Create(s *store.Store, st state.State, actor store.Actor, sp Spec) (*store.Phase, error) {
	return CreateThen(s, st, actor, sp, nil)
}

// CreateThen is Create with then run under the task's phases lock once the
// phase is recorded (store.CreatePhaseThen). An error from then comes back
// with the phase, which is open.
func CreateThen(s *store.Store, st state.State, actor store.Actor, sp Spec, then func(ph *store.Phase) error) (*store.Phase, error) {
	if err := validate(s, sp); err != nil {
		return nil, err
	}
	var opened *store.Phase
	_, err := st.CreatePhase(sp.TaskID, func(t *store.Task, existing []*store.Phase, id string) (*store.Phase, error) {
		if t.Status != store.TaskActive {
			return nil, errs.Statef("phases open only on active tasks; see 'pm status "+t.ID+"'", "task %s is %s", t.ID, t.Status)
		}
		for _, p := range existing {
			if p.Status == store.PhaseActive {
				return nil, errs.Statef("finish it first: 'pm end-phase', or wait for its limit", "task %s already has an active phase %s (%q)", t.ID, p.ID, p.Name)
			}
		}
		if max := s.Config().Limits.PhasesPerTask; len(existing) >= max {
			return nil, errs.Limitf("decide with what you have, or raise limits.phases_per_task in "+s.ConfigPath(), "task %s has %d phases; the limit is %d", t.ID, len(existing), max)
		}
		return &store.Phase{
			ID: id, TaskID: sp.TaskID, Name: sp.Name, MessageLimit: sp.Limit,
			Roles: sp.Roles, Rules: sp.Rules, Status: store.PhaseActive, CreatedAt: s.Now().UTC(),
		}, nil
	}, func(ph *store.Phase) error {
		opened = ph
		if then != nil {
			return then(ph)
		}
		return nil
	})
	if opened == nil {
		return nil, err
	}
	ph := opened
	s.Notify(bus.Event{Kind: bus.EvPhaseOpened, Actor: actor.Name, TaskID: ph.TaskID, PhaseID: ph.ID, Text: ph.Name,
		Data: bus.PhaseOpened{Limit: ph.MessageLimit, Roles: ph.Roles, Rules: ph.Rules}})
	return ph, err
}

// SameSpec reports whether ph is what sp asks for: a pm phase retried after
// it was killed part-way finds the phase it opened (and goes on with it)
// rather than "already has an active phase".
func SameSpec(ph *store.Phase, sp Spec) bool {
	return ph.Name == sp.Name && ph.MessageLimit == sp.Limit && ph.Rules == sp.Rules && slices.Equal(ph.Roles, sp.Roles)
}

func validate(s *store.Store, sp Spec) error {
	lim := s.Config().Limits
	switch {
	case strings.TrimSpace(sp.Name) == "":
		return errs.Usagef(`pm phase "Design" --limit 12 --roles designer,developer`, "a phase needs a name")
	case len(sp.Name) > MaxName || !utf8.ValidString(sp.Name):
		return errs.Usagef("name the phase in a few words", "a phase name of %d bytes is too long or not UTF-8 (at most %d)", len(sp.Name), MaxName)
	case len(sp.Rules) > MaxMessage || !utf8.ValidString(sp.Rules):
		return errs.Usagef("keep rules under 16 KiB of UTF-8 text", "rules of %d bytes are too long or not UTF-8", len(sp.Rules))
	case sp.Limit < 1:
		return errs.Usagef("give --limit N with N of 1 or more", "--limit must be at least 1, got %d", sp.Limit)
	case sp.Limit > lim.MessagesPerPhase:
		return errs.Limitf("use a smaller --limit", "--limit %d is over the limit of %d messages per phase", sp.Limit, lim.MessagesPerPhase)
	case len(sp.Roles) > lim.AgentsPerPhase:
		return errs.Limitf("pick the 2-3 roles that matter most", "%d roles asked; the limit is %d agents per phase", len(sp.Roles), lim.AgentsPerPhase)
	}
	seen := map[string]bool{}
	for _, r := range sp.Roles {
		if !ids.ValidAgentName(r) {
			return errs.Usagef("roles are prompt names such as designer, developer, pm, copywriter, qa", "bad role %q", r)
		}
		if seen[r] {
			return errs.Usagef("name each role once", "role %q is named twice", r)
		}
		seen[r] = true
	}
	return nil
}

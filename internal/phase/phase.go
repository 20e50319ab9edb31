package phase

import (
	"strings"
	"unicode/utf8"

	"github.com/plasmodium/pm/internal/bus"
	"github.com/plasmodium/pm/internal/errs"
	"github.com/plasmodium/pm/internal/ids"
	"github.com/plasmodium/pm/internal/store"
)

// MaxMessage bounds one chat message (bytes). A room is for discussion, not files.
const MaxMessage = 16 << 10

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
func Create(s *store.Store, actor store.Actor, sp Spec) (*store.Phase, error) {
	if err := validate(s, sp); err != nil {
		return nil, err
	}
	ph, err := s.CreatePhase(sp.TaskID, func(t *store.Task, existing []*store.Phase, id string) (*store.Phase, error) {
		if t.Status != store.TaskActive {
			return nil, errs.Statef("phases open only on active tasks; see 'pm status "+t.ID+"'", "task %s is %s", t.ID, t.Status)
		}
		for _, p := range existing {
			if p.Status == store.PhaseActive {
				return nil, errs.Statef("finish it first: 'pm end-phase', or wait for its limit", "task %s already has an active phase %s (%q)", t.ID, p.ID, p.Name)
			}
		}
		if max := s.Config.Limits.PhasesPerTask; len(existing) >= max {
			return nil, errs.Limitf("decide with what you have, or raise limits.phases_per_task in "+s.ConfigPath(), "task %s has %d phases; the limit is %d", t.ID, len(existing), max)
		}
		return &store.Phase{
			ID: id, TaskID: sp.TaskID, Name: sp.Name, MessageLimit: sp.Limit,
			Roles: sp.Roles, Rules: sp.Rules, Status: store.PhaseActive, CreatedAt: s.Now().UTC(),
		}, nil
	})
	if err != nil {
		return nil, err
	}
	s.Notify(bus.Event{Kind: bus.EvPhaseOpened, Actor: actor.Name, TaskID: ph.TaskID, PhaseID: ph.ID, Text: ph.Name,
		Data: map[string]any{"limit": ph.MessageLimit, "roles": ph.Roles, "rules": ph.Rules}})
	return ph, nil
}

func validate(s *store.Store, sp Spec) error {
	lim := s.Config.Limits
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

// Say posts content to a phase. Lock, check, count, append and (at the limit)
// close form one critical section under the messages lock, so the phase holds
// exactly message_limit messages however many writers race.
func Say(s *store.Store, actor store.Actor, taskID, phaseID, content string) (msg store.Message, closed bool, err error) {
	if strings.TrimSpace(content) == "" {
		return msg, false, errs.Usagef(`pm say "your message"`, "empty message")
	}
	if len(content) > MaxMessage || !utf8.ValidString(content) {
		return msg, false, errs.Usagef("keep messages under 16 KiB of UTF-8 text; put long material in a file", "message of %d bytes is too long or not UTF-8", len(content))
	}
	content = s.Secrets.Mask(content) // the room is state: no secret reaches it
	err = s.WithPhase(taskID, phaseID, func(tx *store.PhaseTx) error {
		ph := tx.Phase
		if ph.Status != store.PhaseActive {
			return closedErr(ph)
		}
		n, err := tx.Count()
		if err != nil {
			return err
		}
		if n >= ph.MessageLimit {
			// Only reachable if phase.json was not updated after the last append
			// (a crash between the two); finish the close now.
			if err := closeHeld(s, actor, tx, store.CloseLimit); err != nil {
				return err
			}
			return closedErr(tx.Phase)
		}
		msg = store.Message{
			ID: s.IDs.New(ids.Message), PhaseID: phaseID, Author: actor.Name, Role: actor.Role(),
			Content: content, Timestamp: s.Now().UTC(),
		}
		if err := tx.Append(msg); err != nil {
			return err
		}
		s.Notify(bus.Event{Kind: bus.EvMessage, Actor: actor.Name, TaskID: taskID, PhaseID: phaseID, MsgID: msg.ID, Text: content,
			Data: map[string]any{"n": n + 1, "limit": ph.MessageLimit}})
		if n+1 >= ph.MessageLimit {
			closed = true
			return closeHeld(s, actor, tx, store.CloseLimit)
		}
		return nil
	})
	return msg, closed, err
}

func closedErr(ph *store.Phase) error {
	return errs.Statef("read it with 'pm chat --phase "+ph.ID+"'; the owner may open a new phase",
		"phase %s (%q) is closed (%s)", ph.ID, ph.Name, ph.CloseReason)
}

// closeHeld marks the phase closed inside its critical section.
func closeHeld(s *store.Store, actor store.Actor, tx *store.PhaseTx, reason store.CloseReason) error {
	now := s.Now().UTC()
	if err := tx.Update(func(p *store.Phase) { p.Status, p.ClosedAt, p.CloseReason = store.PhaseClosed, &now, reason }); err != nil {
		return err
	}
	n, _ := tx.Count()
	ph := tx.Phase
	s.Notify(bus.Event{Kind: bus.EvPhaseClosed, Actor: actor.Name, TaskID: ph.TaskID, PhaseID: ph.ID, Text: string(reason),
		Data: map[string]any{"messages": n, "limit": ph.MessageLimit}})
	return nil
}

// Close closes an active phase early (pm end-phase, or its task ending).
func Close(s *store.Store, actor store.Actor, taskID, phaseID string, reason store.CloseReason) (*store.Phase, error) {
	var out *store.Phase
	err := s.WithPhase(taskID, phaseID, func(tx *store.PhaseTx) error {
		if tx.Phase.Status != store.PhaseActive {
			return closedErr(tx.Phase)
		}
		if err := closeHeld(s, actor, tx, reason); err != nil {
			return err
		}
		out = tx.Phase
		return nil
	})
	return out, err
}

// Extend raises the active phase's limit by n, within messages_per_phase.
func Extend(s *store.Store, actor store.Actor, taskID, phaseID string, n int) (*store.Phase, error) {
	if n < 1 {
		return nil, errs.Usagef("pm extend-phase 5", "extend by 1 or more messages, got %d", n)
	}
	var out *store.Phase
	err := s.WithPhase(taskID, phaseID, func(tx *store.PhaseTx) error {
		ph := tx.Phase
		if ph.Status != store.PhaseActive {
			return closedErr(ph)
		}
		max := s.Config.Limits.MessagesPerPhase
		if !fitsLimit(ph.MessageLimit, n, max) {
			room := 0 // what is left, when phase.json holds a sane limit
			if ph.MessageLimit >= 0 && ph.MessageLimit <= max {
				room = max - ph.MessageLimit
			}
			return errs.Limitf("extend by at most "+itoa(room)+", or open a new phase",
				"extending %s by %d messages is over the limit of %d per phase", ph.ID, n, max)
		}
		if err := tx.Update(func(p *store.Phase) { p.MessageLimit += n }); err != nil {
			return err
		}
		out = tx.Phase
		return nil
	})
	if err != nil {
		return nil, err
	}
	s.Notify(bus.Event{Kind: bus.EvPhaseExtended, Actor: actor.Name, TaskID: taskID, PhaseID: phaseID,
		Data: map[string]any{"by": n, "limit": out.MessageLimit}})
	return out, nil
}

// fitsLimit reports whether cur+n stays within max, checking the range
// before any arithmetic so a huge n cannot wrap the sum negative. cur comes
// from phase.json and may have been edited by hand.
func fitsLimit(cur, n, max int) bool {
	return n >= 0 && cur >= 0 && cur <= max && n <= max-cur
}

// SetAgents records the role agent names started for a phase.
func SetAgents(s *store.Store, taskID, phaseID string, names []string) error {
	_, err := s.UpdatePhase(taskID, phaseID, func(p *store.Phase) { p.Agents = names })
	return err
}

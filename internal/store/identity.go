package store

import "github.com/plasmodium/pm/internal/errs"

// Actor is who runs a command: an agent (PM_AGENT) or the human.
type Actor struct {
	Name  string // "human" or an agent name
	Agent *Agent // nil for the human
}

// Human is the actor of a command run without PM_AGENT.
var Human = Actor{Name: "human"}

// IsHuman reports whether the actor is the human at the terminal.
func (a Actor) IsHuman() bool { return a.Agent == nil }

// Role is the actor's role in its phase ("" for owners and the human).
func (a Actor) Role() string {
	if a.Agent == nil {
		return ""
	}
	return a.Agent.Role
}

// ActorNamed is who runs a command whose PM_AGENT is name: the human when
// name is "" or "human", else that agent of this state directory.
func (s *Store) ActorNamed(name string) (Actor, error) {
	if name == "" || name == "human" {
		return Human, nil
	}
	a, err := s.Agent(name)
	if err != nil {
		return Actor{}, &errs.Error{Code: errs.CodeOf(err), Msg: "PM_AGENT=" + name + " names no agent of this state directory",
			Try: "unset PM_AGENT to act as the human, or check PM_HOME"}
	}
	return Actor{Name: a.Name, Agent: a}, nil
}

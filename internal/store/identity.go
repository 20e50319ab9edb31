package store

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

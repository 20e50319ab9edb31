package design

import "fmt"

// Status is a state of the seed's state machine (P005).
type Status string

// States.
const (
	StatusInitializing  Status = "initializing"
	StatusProcessing    Status = "processing"
	StatusConverged     Status = "converged"
	StatusMaxIterations Status = "max_iterations"
	StatusError         Status = "error"
	StatusComplete      Status = "complete"
)

// transitions is the seed's table: from each state, where it may go.
var transitions = map[Status][]Status{
	StatusInitializing:  {StatusProcessing, StatusError},
	StatusProcessing:    {StatusProcessing, StatusConverged, StatusMaxIterations, StatusError},
	StatusConverged:     {StatusComplete},
	StatusMaxIterations: {StatusComplete},
	StatusError:         {StatusComplete},
}

// CanMove reports whether the machine may go from one state to another.
func CanMove(from, to Status) bool {
	for _, s := range transitions[from] {
		if s == to {
			return true
		}
	}
	return false
}

// move changes the design's state, refusing a transition the table lacks
// (a programming error: it would corrupt a resumable record). Entering a
// terminal outcome records it, since complete alone does not say how the
// design ended.
func (s *State) move(to Status) error {
	if !CanMove(s.Status, to) {
		return fmt.Errorf("design %s: no transition from %s to %s", s.ID, s.Status, to)
	}
	s.Status = to
	switch to {
	case StatusConverged, StatusMaxIterations, StatusError:
		s.Outcome = to
	}
	return nil
}

// Done reports whether the design has nothing left to run.
func (s *State) Done() bool { return s.Status == StatusComplete }

// Criteria decide when a unit has converged (the seed's defaults: 2, 2, 2).
type Criteria struct {
	// MinPasses is the fewest passes before convergence is allowed.
	MinPasses int `json:"min_passes"`
	// IssueStability is how many consecutive passes must find the same
	// number of issues.
	IssueStability int `json:"issue_stability"`
	// ContentStability is how many consecutive passes must change nothing.
	ContentStability int `json:"content_stability"`
}

// DefaultCriteria are the seed's.
var DefaultCriteria = Criteria{MinPasses: 2, IssueStability: 2, ContentStability: 2}

// DefaultMaxPasses is the seed's "for each pass in 1..8".
const DefaultMaxPasses = 8

// Converged reports whether a unit with this pass history has converged:
// at least MinPasses passes, the last IssueStability of them with the same
// issue count, the last ContentStability of them without a modification.
func (c Criteria) Converged(history []PassResult) bool {
	n := len(history)
	if n < max(c.MinPasses, c.IssueStability, c.ContentStability, 1) {
		return false
	}
	last := history[n-1].IssueCount
	for _, p := range history[n-max(c.IssueStability, 1):] {
		if p.IssueCount != last {
			return false
		}
	}
	for _, p := range history[n-c.ContentStability:] {
		if len(p.Modifications) > 0 {
			return false
		}
	}
	return true
}

func (c Criteria) withDefaults() Criteria {
	if c == (Criteria{}) {
		return DefaultCriteria
	}
	return c
}

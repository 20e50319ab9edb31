package task

import (
	"time"

	"github.com/plasmodium/pm/internal/agent"
	"github.com/plasmodium/pm/internal/state"
	"github.com/plasmodium/pm/internal/store"
)

// PhaseView is a phase with its derived message count and last activity
// (RoomLastActivity).
type PhaseView struct {
	*store.Phase
	Messages     int       `json:"messages"`
	LastActivity time.Time `json:"last_activity"`
}

// View is one task in detail: what pm status tk-... shows. Now is when it
// was read; AgentActivity is each agent's last activity
// (AgentLastActivity), by name.
type View struct {
	Task          *store.Task          `json:"task"`
	Phases        []PhaseView          `json:"phases"`
	Agents        []*store.Agent       `json:"agents"`
	AgentActivity map[string]time.Time `json:"agent_activity"`
	Now           time.Time            `json:"now"`
}

// Summary is the overview of all tasks: what pm status shows.
type Summary struct {
	Tasks  []*store.Task            `json:"tasks"`
	Counts map[store.TaskStatus]int `json:"counts"`
	Total  int                      `json:"-"`
}

// Describe builds the detailed view of task id. An agent recorded running
// whose process is gone shows as "dead".
func Describe(s *store.Store, st state.State, id string) (*View, error) {
	t, err := st.Task(id)
	if err != nil {
		return nil, err
	}
	v := &View{Task: t, Phases: []PhaseView{}, Agents: []*store.Agent{}, AgentActivity: map[string]time.Time{}, Now: s.Now().UTC()}
	phases, err := st.Phases(id)
	if err != nil {
		return nil, err
	}
	for _, p := range phases {
		n, err := st.MessageCount(id, p.ID)
		if err != nil {
			return nil, err
		}
		v.Phases = append(v.Phases, PhaseView{p, n, RoomLastActivity(s, p)})
	}
	agents, err := st.Agents()
	if err != nil {
		return nil, err
	}
	for _, a := range agents {
		if a.TaskID != id {
			continue
		}
		if a.Status == store.AgentRunning && !agent.Running(a) {
			a.Status = store.AgentDead // recorded running, but its process is gone
		}
		v.Agents = append(v.Agents, a)
		v.AgentActivity[a.Name] = AgentLastActivity(s, a)
	}
	return v, nil
}

// Summarize counts every task by status and lists the live ones (all of
// them with all set): state.CountTasks, which without all reads only the
// live tasks (fsstate counts the finished ones from its task index, so it
// does not grow with them).
func Summarize(st state.State, all bool) (*Summary, error) {
	tasks, counts, err := st.CountTasks(all)
	if err != nil {
		return nil, err
	}
	return &Summary{Tasks: tasks, Counts: counts, Total: total(counts)}, nil
}

func total(counts map[store.TaskStatus]int) int {
	n := 0
	for _, c := range counts {
		n += c
	}
	return n
}

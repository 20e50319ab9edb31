package task

import (
	"time"

	"github.com/plasmodium/pm/internal/agent"
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
func Describe(s *store.Store, id string) (*View, error) {
	t, err := s.Task(id)
	if err != nil {
		return nil, err
	}
	v := &View{Task: t, Phases: []PhaseView{}, Agents: []*store.Agent{}, AgentActivity: map[string]time.Time{}, Now: s.Now().UTC()}
	phases, err := s.Phases(id)
	if err != nil {
		return nil, err
	}
	for _, p := range phases {
		n, err := s.MessageCount(id, p.ID)
		if err != nil {
			return nil, err
		}
		v.Phases = append(v.Phases, PhaseView{p, n, RoomLastActivity(s, p)})
	}
	agents, err := s.AgentsOf(id)
	if err != nil {
		return nil, err
	}
	for _, a := range agents {
		if a.Status == store.AgentRunning && !agent.Running(a) {
			a.Status = store.AgentDead // recorded running, but its process is gone
		}
		v.Agents = append(v.Agents, a)
		v.AgentActivity[a.Name] = AgentLastActivity(s, a)
	}
	return v, nil
}

// Summarize counts every task by status and lists the live ones (all of
// them with all set). Without all it reads only the live tasks and counts
// the finished ones from the task index, so it does not grow with them;
// with all it reads every task and repairs the index when the two disagree.
func Summarize(s *store.Store, all bool) (*Summary, error) {
	live, counts, ok, err := s.TaskCounts()
	if err != nil {
		return nil, err
	}
	if ok && !all {
		return &Summary{Tasks: append([]*store.Task{}, live...), Counts: counts, Total: total(counts)}, nil
	}
	tasks, err := s.Tasks()
	if err != nil {
		return nil, err
	}
	sum := &Summary{Tasks: []*store.Task{}, Counts: map[store.TaskStatus]int{}, Total: len(tasks)}
	for _, t := range tasks {
		sum.Counts[t.Status]++
		if all || t.Live() {
			sum.Tasks = append(sum.Tasks, t)
		}
	}
	if !ok || !indexedCountsAgree(counts, sum.Counts) {
		if err := s.RepairTaskIndex(); err != nil {
			return nil, err
		}
	}
	return sum, nil
}

func total(counts map[store.TaskStatus]int) int {
	n := 0
	for _, c := range counts {
		n += c
	}
	return n
}

// indexedCountsAgree compares the index's counts with a full scan's, on
// the statuses the index keeps.
func indexedCountsAgree(index, scan map[store.TaskStatus]int) bool {
	for _, st := range []store.TaskStatus{store.TaskActive, store.TaskBlocked, store.TaskDone, store.TaskKilled} {
		if index[st] != scan[st] {
			return false
		}
	}
	return true
}

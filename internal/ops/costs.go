package ops

import (
	"context"
	"sort"
	"time"

	"github.com/plasmodium/pm/internal/config"
	"github.com/plasmodium/pm/internal/cost"
	"github.com/plasmodium/pm/internal/errs"
	"github.com/plasmodium/pm/internal/ids"
	"github.com/plasmodium/pm/internal/llm"
	"github.com/plasmodium/pm/internal/state"
	"github.com/plasmodium/pm/internal/store"
)

// CostsInput selects what pm costs sums.
type CostsInput struct {
	Task  string `json:"task,omitempty" jsonschema:"only this task (tk-...)"`
	Since string `json:"since,omitempty" jsonschema:"only the last 24h, 90m, ..."`
}

// CostLine is the cost of one agent or one task: the sum of its ledger
// entries and that sum as people read it ("$0.0123", "unknown").
type CostLine struct {
	Name    string   `json:"name,omitempty"` // agent
	Task    string   `json:"task,omitempty"`
	Runtime string   `json:"runtime,omitempty"`
	Model   string   `json:"model,omitempty"`
	Sum     cost.Sum `json:"sum"`
	Cost    string   `json:"cost"`
	// MaxUSD is the cap that applies (budgets.agent / budgets.task.max_usd;
	// 0: none).
	MaxUSD float64 `json:"max_usd,omitempty"`
}

// Window is the project's spend over one of its budget windows.
type Window struct {
	Key    string   `json:"key"` // budgets.project.usd_per_hour, usd_per_day
	Window string   `json:"window"`
	Sum    cost.Sum `json:"sum"`
	Cost   string   `json:"cost"`
	Limit  float64  `json:"limit,omitempty"`
}

// CostsResult is pm costs: per agent, per task, the total and the
// project's windows; Entries are the model calls themselves (one per llm
// call, one per exec run), oldest first.
type CostsResult struct {
	Since   *time.Time   `json:"since,omitempty"`
	Task    string       `json:"task,omitempty"`
	Agents  []CostLine   `json:"agents"`
	Tasks   []CostLine   `json:"tasks"`
	Total   CostLine     `json:"total"`
	Windows []Window     `json:"windows"`
	Entries []cost.Entry `json:"entries"`
}

// Costs sums the cost ledger (state.CostLedger: .plasmodium/costs.jsonl on
// files, the project's ledger stream on a hub). What no price or
// no usage covers stays unknown in every sum, never 0.
func Costs(ctx context.Context, sess *Session, in CostsInput) (CostsResult, error) {
	st := sess.State
	s := sess.Store
	var res CostsResult
	if in.Task != "" {
		id, err := state.CompleteID(st, ids.Task, in.Task) // a unique prefix names its task
		if err != nil {
			return res, err
		}
		if _, err := st.Task(id); err != nil {
			return res, err
		}
		in.Task, res.Task = id, id
	}
	var from time.Time
	if in.Since != "" {
		d, err := time.ParseDuration(in.Since)
		if err != nil || d <= 0 {
			return res, errs.Usagef("pm costs --since 24h (a Go duration: 90m, 1h30m)", "--since %q is not a positive duration", in.Since)
		}
		from = s.Now().Add(-d).UTC()
		res.Since = &from
	}
	cfg := s.Config()
	all, err := state.PricedCosts(st, time.Time{}, cfg.Prices)
	if err != nil {
		return res, err
	}
	agents := map[string]*CostLine{}
	tasks := map[string]*CostLine{}
	res.Entries = []cost.Entry{}
	for _, e := range all {
		if e.At.Before(from) || (in.Task != "" && e.Task != in.Task) {
			continue
		}
		res.Entries = append(res.Entries, e)
		a := agents[e.Agent]
		if a == nil {
			a = &CostLine{Name: e.Agent, Task: e.Task, Runtime: e.Runtime, MaxUSD: cfg.Budgets.Agent.MaxUSD}
			agents[e.Agent] = a
		}
		a.Model = e.Model // the latest
		a.Sum.Add(e)
		if e.Task != "" {
			t := tasks[e.Task]
			if t == nil {
				t = &CostLine{Task: e.Task, MaxUSD: cfg.Budgets.Task.MaxUSD}
				tasks[e.Task] = t
			}
			t.Sum.Add(e)
		}
		res.Total.Sum.Add(e)
	}
	res.Agents, res.Tasks = lines(agents), lines(tasks)
	res.Total.Cost = res.Total.Sum.String()
	now := s.Now()
	for _, w := range []struct {
		key, name string
		d         time.Duration
		limit     float64
	}{
		{"budgets.project.usd_per_hour", "last hour", time.Hour, cfg.Budgets.Project.USDPerHour},
		{"budgets.project.usd_per_day", "last 24 hours", 24 * time.Hour, cfg.Budgets.Project.USDPerDay},
	} {
		sum := cost.Since(all, now.Add(-w.d))
		res.Windows = append(res.Windows, Window{Key: w.key, Window: w.name, Sum: sum, Cost: sum.String(), Limit: w.limit})
	}
	return res, nil
}

// lines is m's lines with their cost text, by agent or task name.
func lines(m map[string]*CostLine) []CostLine {
	out := make([]CostLine, 0, len(m))
	for _, l := range m {
		l.Cost = l.Sum.String()
		out = append(out, *l)
	}
	sort.Slice(out, func(i, j int) bool {
		if out[i].Task != out[j].Task {
			return out[i].Task < out[j].Task
		}
		return out[i].Name < out[j].Name
	})
	return out
}

// TaskCost is a task's dollars against its budget, from its agents'
// records (what pm status has read already): the known dollars, how many
// model calls (or exec runs) have no price, and budgets.task.max_usd.
type TaskCost struct {
	USD     float64 `json:"usd"`
	Unknown int64   `json:"unknown"`
	Cost    string  `json:"text"` // "$0.0123", "unknown", "$0.01 + unknown (2)"
	MaxUSD  float64 `json:"max_usd,omitempty"`
}

func taskCost(agents []*store.Agent, maxUSD float64) TaskCost {
	var sum cost.Sum
	for _, a := range agents {
		known := int64(0)
		if a.Usage.USD > 0 {
			known = 1
		}
		sum = sum.Plus(cost.Sum{Entries: known + a.Usage.Unpriced, USD: a.Usage.USD, Unknown: a.Usage.Unpriced})
	}
	return TaskCost{USD: sum.USD, Unknown: sum.Unknown, Cost: sum.String(), MaxUSD: maxUSD}
}

// recordDesignCost puts one model call of a code design (pm design,
// design_review) in the cost ledger, as the "design" agent of the actor's
// task, so pm costs and the project's windows count it.
func recordDesignCost(s *Session, model string, u llm.Usage) {
	e := cost.Entry{Agent: "design", Runtime: string(config.RuntimeLLM), Model: model, Turns: 1, Usage: u.Bill()}
	if s.Actor.Agent != nil {
		e.Task = s.Actor.Agent.TaskID
	}
	_, _ = state.RecordCost(s.State, e, s.Store.Now(), s.Store.Config().Prices) // the design goes on; a lost line is a cost unseen, not a failure
}

// Package status implements `pm status`.
package status

import (
	"fmt"
	"io"
	"strings"

	"github.com/spf13/cobra"

	"github.com/plasmodium/pm/internal/agent"
	"github.com/plasmodium/pm/internal/cmdutil"
	"github.com/plasmodium/pm/internal/jsonl"
	"github.com/plasmodium/pm/internal/store"
)

// Options are the inputs of pm status.
type Options struct {
	TaskID string
	All    bool
	JSON   bool
}

// NewCmd builds `pm status`.
func NewCmd(f *cmdutil.Factory) *cobra.Command {
	var o Options
	c := &cobra.Command{
		Use:   "status [tk-...]",
		Short: "Show tasks, or one task with its phases and agents",
		Args:  cobra.MaximumNArgs(1),
		RunE: func(c *cobra.Command, args []string) error {
			if len(args) == 1 {
				o.TaskID = args[0]
			}
			return run(f, o)
		},
	}
	c.Flags().BoolVarP(&o.All, "all", "a", false, "list finished (done, killed) tasks too")
	c.Flags().BoolVar(&o.JSON, "json", false, "print as JSON")
	return c
}

// PhaseView is a phase with its derived message count.
type PhaseView struct {
	*store.Phase
	Messages int `json:"messages"`
}

// TaskView is one task in detail.
type TaskView struct {
	Task   *store.Task    `json:"task"`
	Phases []PhaseView    `json:"phases"`
	Agents []*store.Agent `json:"agents"`
}

// Summary is the overview of all tasks.
type Summary struct {
	Tasks  []*store.Task  `json:"tasks"`
	Counts map[string]int `json:"counts"`
}

func run(f *cmdutil.Factory, o Options) error {
	s, err := f.Store()
	if err != nil {
		return err
	}
	actor, err := f.Actor(s)
	if err != nil {
		return err
	}
	if o.TaskID == "" && actor.Agent != nil && actor.Agent.TaskID != "" {
		o.TaskID = actor.Agent.TaskID
	}
	if o.TaskID != "" {
		v, err := taskView(s, o.TaskID)
		if err != nil {
			return err
		}
		if o.JSON {
			return cmdutil.PrintJSON(f.IO.Out, v)
		}
		printTask(f.IO.Out, v, actor)
		return nil
	}
	tasks, err := s.Tasks()
	if err != nil {
		return err
	}
	sum := Summary{Tasks: []*store.Task{}, Counts: map[string]int{}}
	for _, t := range tasks {
		sum.Counts[t.Status]++
		if o.All || t.Live() {
			sum.Tasks = append(sum.Tasks, t)
		}
	}
	if o.JSON {
		return cmdutil.PrintJSON(f.IO.Out, sum)
	}
	printSummary(f.IO.Out, sum, len(tasks))
	return nil
}

func taskView(s *store.Store, id string) (*TaskView, error) {
	t, err := s.Task(id)
	if err != nil {
		return nil, err
	}
	v := &TaskView{Task: t, Phases: []PhaseView{}, Agents: []*store.Agent{}}
	phases, err := s.Phases(id)
	if err != nil {
		return nil, err
	}
	for _, p := range phases {
		n, err := jsonl.Count(s.MessagesPath(id, p.ID))
		if err != nil {
			return nil, err
		}
		v.Phases = append(v.Phases, PhaseView{p, n})
	}
	agents, err := s.Agents()
	if err != nil {
		return nil, err
	}
	for _, a := range agents {
		if a.TaskID == id {
			if a.Status == store.AgentRunning && !agent.Running(a) {
				a.Status = "dead" // recorded running, but its process is gone
			}
			v.Agents = append(v.Agents, a)
		}
	}
	return v, nil
}

func printTask(w io.Writer, v *TaskView, actor store.Actor) {
	t := v.Task
	fmt.Fprintf(w, "%s %s  %s\n", t.ID, t.Status, t.Description)
	fmt.Fprintf(w, "  owner @%s  runtime %s  depth %d\n", t.Owner, t.Runtime, t.Depth)
	if t.ParentID != "" {
		fmt.Fprintf(w, "  parent %s\n", t.ParentID)
	}
	if len(t.BlockedBy) > 0 {
		fmt.Fprintf(w, "  blocked by %s\n", strings.Join(t.BlockedBy, ", "))
	}
	if len(t.Children) > 0 {
		fmt.Fprintf(w, "  subtasks %s\n", strings.Join(t.Children, ", "))
	}
	if t.Commit != "" {
		fmt.Fprintf(w, "  commit %s\n", t.Commit)
	}
	for _, p := range v.Phases {
		mark := " "
		if actor.Agent != nil && actor.Agent.PhaseID == p.ID {
			mark = "*"
		}
		fmt.Fprintf(w, " %sphase %s\n", mark, cmdutil.PhaseLine(p.Phase, p.Messages))
	}
	for _, a := range v.Agents {
		role := "owner"
		if a.Role != "" {
			role = a.Role
		}
		fmt.Fprintf(w, "  agent @%s %s %s pid %d\n", a.Name, role, a.Status, a.Pid)
	}
}

func printSummary(w io.Writer, sum Summary, total int) {
	if total == 0 {
		fmt.Fprintln(w, "no tasks yet; start one with: pm task \"describe the work\"")
		return
	}
	for _, t := range sum.Tasks {
		indent := strings.Repeat("  ", t.Depth)
		fmt.Fprintf(w, "%s%s %-7s @%s  %s\n", indent, t.ID, t.Status, t.Owner, t.Description)
	}
	var parts []string
	for _, k := range []string{store.TaskActive, store.TaskBlocked, store.TaskDone, store.TaskKilled} {
		if sum.Counts[k] > 0 {
			parts = append(parts, fmt.Sprintf("%d %s", sum.Counts[k], k))
		}
	}
	fmt.Fprintf(w, "%d tasks: %s\n", total, strings.Join(parts, ", "))
}

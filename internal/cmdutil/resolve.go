package cmdutil

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"

	"github.com/plasmodium/pm/internal/agent"
	"github.com/plasmodium/pm/internal/errs"
	"github.com/plasmodium/pm/internal/llm"
	"github.com/plasmodium/pm/internal/store"
)

// Task picks the task a command acts on: --task, else the agent's own task,
// else (for the human) the only active task.
func Task(s *store.Store, actor store.Actor, flag string) (*store.Task, error) {
	if flag != "" {
		return s.Task(flag)
	}
	if actor.Agent != nil && actor.Agent.TaskID != "" {
		return s.Task(actor.Agent.TaskID)
	}
	tasks, err := s.LiveTasks()
	if err != nil {
		return nil, err
	}
	var active []string
	var only *store.Task
	for _, t := range tasks {
		if t.Status == store.TaskActive {
			active = append(active, t.ID)
			only = t
		}
	}
	switch len(active) {
	case 1:
		return only, nil
	case 0:
		return nil, errs.Statef(`start one with pm task "..."`, "no active task")
	}
	return nil, errs.Usagef("name one with --task: "+strings.Join(active, ", "), "%d tasks are active", len(active))
}

// OwnTask is the task an owner operation acts on (see Task), refused unless
// actor owns it: the CLI's owner commands and the llm tools both use it.
func OwnTask(s *store.Store, actor store.Actor, flag string) (*store.Task, error) {
	t, err := Task(s, actor, flag)
	if err != nil {
		return nil, err
	}
	return t, Owner(actor, t)
}

// Owner checks that actor may run owner commands on t: its owner or the human.
func Owner(actor store.Actor, t *store.Task) error {
	if actor.IsHuman() || actor.Name == t.Owner {
		return nil
	}
	return errs.Statef("owner commands belong to @"+t.Owner+"; post your view with pm say", "@%s is not the owner of %s", actor.Name, t.ID)
}

// Phase picks the phase a chat command acts on: --phase, else the agent's own
// phase (role agents) or its task's active phase (owners), else (for the
// human) the only active phase.
func Phase(s *store.Store, actor store.Actor, flag string) (*store.Phase, error) {
	if flag != "" {
		return s.FindPhase(flag)
	}
	if a := actor.Agent; a != nil {
		if a.PhaseID != "" {
			return s.Phase(a.TaskID, a.PhaseID)
		}
		if a.TaskID != "" {
			// An owner's room is its task's active phase, or else the one it
			// had last: reading it still works, posting says it is closed.
			phases, err := s.Phases(a.TaskID)
			if err != nil {
				return nil, err
			}
			for _, p := range phases {
				if p.Status == store.PhaseActive {
					return p, nil
				}
			}
			if len(phases) == 0 {
				return nil, errs.Statef(`open one with pm phase "Name" --limit N --roles r1,r2`, "task %s has no active phase (none opened yet)", a.TaskID)
			}
			return phases[len(phases)-1], nil
		}
	}
	tasks, err := s.LiveTasks()
	if err != nil {
		return nil, err
	}
	var found []*store.Phase
	for _, t := range tasks {
		if t.Status != store.TaskActive {
			continue
		}
		ph, err := s.ActivePhase(t.ID)
		if err != nil {
			return nil, err
		}
		if ph != nil {
			found = append(found, ph)
		}
	}
	switch len(found) {
	case 1:
		return found[0], nil
	case 0:
		return nil, errs.Statef("name a past phase with --phase ph-...; see pm status", "no active phase")
	}
	names := make([]string, len(found))
	for i, p := range found {
		names[i] = p.ID
	}
	return nil, errs.Usagef("name one with --phase: "+strings.Join(names, ", "), "%d phases are active", len(found))
}

// CheckRuntime refuses, before anything is written, an llm task with no
// model provider configured, saying exactly what to set.
func CheckRuntime(f *Factory, s *store.Store, runtime, model string) error {
	if runtime == "" {
		runtime = s.Config.Runtime.Default
	}
	if runtime == "exec" {
		return checkExec(s)
	}
	if runtime != "llm" {
		return nil
	}
	if _, err := llm.ProviderFromEnv(f.Getenv, s.Config.Model.BaseURL, s.Config.Model.Name, model); err != nil {
		return errs.Failf("export OPENAI_API_KEY=... PM_MODEL=gpt-4o-mini (or OPENAI_BASE_URL=http://localhost:11434/v1 PM_MODEL=llama3.2 for Ollama), or use --runtime exec", "%v", err)
	}
	return nil
}

// checkExec refuses an exec task whose agent command cannot be found, rather
// than creating it and failing in the background.
func checkExec(s *store.Store) error {
	ex := s.Config.Runtime.Exec
	for _, argv := range [][]string{ex.Command, ex.RoleCommand} {
		if len(argv) == 0 {
			continue
		}
		cmd := argv[0]
		var err error
		if strings.ContainsRune(cmd, '/') {
			if !filepath.IsAbs(cmd) {
				cmd = filepath.Join(s.ProjectDir(), cmd) // agents run in the project directory
			}
			_, err = os.Stat(cmd)
		} else {
			_, err = exec.LookPath(cmd)
		}
		if err != nil {
			return errs.Failf(`install it, or point runtime.exec.command in `+s.ConfigPath()+` at your agent CLI, or use --runtime llm / --runtime none`,
				"agent command %q not found", argv[0])
		}
	}
	return nil
}

// CheckPO refuses, before anything is written, a message to an unknown prompt
// object or to an llm object with no model provider configured.
func CheckPO(f *Factory, s *store.Store, name string) error {
	set, err := agent.Prompts(s)
	if err != nil {
		return err
	}
	po, err := agent.Lookup(set, name)
	if err != nil {
		return err
	}
	rt := po.Runtime
	if rt == "" {
		rt = "llm"
	}
	return CheckRuntime(f, s, rt, po.Model)
}

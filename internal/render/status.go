package render

import (
	"strconv"

	"github.com/plasmodium/pm/internal/store"
)

// ExitSuffix is " (exit N)" for a recorded exit code, else "".
func ExitSuffix(code *int) string {
	if code == nil {
		return ""
	}
	return " (exit " + strconv.Itoa(*code) + ")"
}

// AgentRole is what an agent is to its task: owner, its phase role, or a
// resident prompt object (no task).
func AgentRole(a *store.Agent) string {
	switch {
	case a.Role != "":
		return a.Role
	case a.TaskID == "":
		return "resident"
	}
	return "owner"
}

// AgentEnd says how an ended agent ended: " exit 1: reason", or "".
func AgentEnd(a *store.Agent) string {
	s := ""
	if a.ExitCode != nil {
		s = " exit " + strconv.Itoa(*a.ExitCode)
	}
	if a.Reason != "" && a.Status != store.AgentRunning {
		s += ": " + Line(a.Reason)
	}
	return s
}

// Plural is "1 task", "3 tasks".
func Plural(n int, noun string) string {
	if n == 1 {
		return "1 " + noun
	}
	return strconv.Itoa(n) + " " + noun + "s"
}

// SandboxNote says what confines an agent's commands: " sandbox landlock".
func SandboxNote(a *store.Agent) string {
	if a.Sandbox == "" {
		return ""
	}
	return " sandbox " + Line(a.Sandbox)
}

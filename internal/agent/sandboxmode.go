package agent

import (
	"github.com/plasmodium/pm/internal/sandbox"
	"github.com/plasmodium/pm/internal/store"
)

// Sandbox values of store.Agent.Sandbox besides sandbox.Mode's.
const (
	SandboxOff        = "off (config)"
	SandboxNoKernel   = "none (no Landlock in this kernel)"
	SandboxExecAgents = "none (exec agents are not sandboxed)"
)

// SandboxOf says what confines the commands agent a runs on this machine
// with this config: for the llm runtime, what run_command gets; an exec
// agent's CLI runs as the user (docs/security.md).
func SandboxOf(s *store.Store, a *store.Agent) string {
	if a.Runtime != store.RuntimeLLM {
		return SandboxExecAgents
	}
	if s.Config.Sandbox.Off {
		return SandboxOff
	}
	if m := sandbox.Available(); m != sandbox.ModeNone {
		return string(m)
	}
	return SandboxNoKernel
}

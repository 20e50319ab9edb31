package agent

import (
	"github.com/plasmodium/pm/internal/config"
	"github.com/plasmodium/pm/internal/sandbox"
	"github.com/plasmodium/pm/internal/store"
)

// Sandbox values of store.Agent.Sandbox besides sandbox.Mode's.
const (
	SandboxOff      = "off (config)"
	SandboxNoKernel = "none (no Landlock in this kernel)"
	SandboxExecOff  = "off (runtime.exec.sandbox false)"
)

// SandboxOf says what confines the commands agent a runs on this machine
// with this config: for the llm runtime, what run_command gets; for an exec
// agent, what its CLI runs under (runtime.exec.sandbox, on by default;
// docs/security.md).
func SandboxOf(s *store.Store, a *store.Agent) string {
	switch {
	case a.Runtime != config.RuntimeLLM && !s.Config().Runtime.Exec.Sandboxed():
		return SandboxExecOff
	case a.Runtime == config.RuntimeLLM && s.Config().Sandbox.Off:
		return SandboxOff
	}
	if m := sandbox.Available(); m != sandbox.ModeNone {
		return string(m)
	}
	return SandboxNoKernel
}

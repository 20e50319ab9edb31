package agent

import (
	"strings"

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

// PID namespace notes on store.Agent.Containment (what pm agents shows),
// added by the host: whether what the agent starts runs in a PID namespace
// of its own, which the kernel ends when the host dies, however it dies.
const (
	ContainPIDNS   = "PID namespace"
	ContainNoPIDNS = "no PID namespace"
)

// PIDNamespaceOf reports whether what agent a starts (its exec CLI, or an
// llm agent's run_command) runs in a PID namespace of its own on this
// machine with this config: sandboxed, where the sandbox has a mount
// namespace (sandbox.PIDNamespace); unsandboxed (the config, or no
// Landlock), where sandbox.Contain works. Without one, an orphan that
// cleared its environment outlives a host killed -9 unless a cgroup holds
// the run and the supervisor ends it (docs/security.md, "Processes").
func PIDNamespaceOf(s *store.Store, a *store.Agent) bool {
	switch SandboxOf(s, a) {
	case string(sandbox.ModeLandlockNS):
		return sandbox.PIDNamespace()
	case string(sandbox.ModeLandlock):
		return false
	}
	return sandbox.Contained()
}

// withPIDNS is a run's containment with its PID namespace note (once).
func withPIDNS(containment string, has bool) string {
	if strings.Contains(containment, ContainPIDNS) {
		return containment
	}
	note := ContainNoPIDNS
	if has {
		note = ContainPIDNS
	}
	if containment == "" {
		return note
	}
	return containment + ", " + note
}

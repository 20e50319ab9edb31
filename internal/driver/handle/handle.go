// Package handle holds driver.Handle, the record of one run of an agent,
// apart from the driver that makes it: store.Agent embeds it, and the short
// executable (cmd/pm), which links the store, then links neither the driver
// nor what the driver needs (os/exec, its run tokens). Use it as
// driver.Handle; nothing else belongs here.
package handle

// Handle names one run of an agent for good. Callers store it (agent.json
// holds it, in the pid and pid_start fields it has always had) and hand it
// back; only the driver that made it reads it. For the process driver it is
// the host's pid and its start time in clock ticks since boot, so a recycled
// pid never matches, and the run's marker; the fake uses the fields as a
// token. It has no methods, so embedding it (store.Agent does) adds nothing
// but the fields.
type Handle struct {
	Pid      int    `json:"pid"`
	PidStart uint64 `json:"pid_start"`
	// Run marks every process of this run (RunEnv in their environment), so
	// Stop finds what left the host's process group; empty for a handle
	// recorded before runs were marked.
	Run string `json:"run,omitempty"`
	// Cgroup is the run's cgroup v2 group (.../pm-agents/<Run>), which holds
	// the host and everything it starts; empty where pm could make none.
	Cgroup string `json:"cgroup,omitempty"`
	// PidsCgroup is a cgroup v1 pids group of the run, for its process
	// limit where the v2 hierarchy has no pids controller.
	PidsCgroup string `json:"pids_cgroup,omitempty"`
	// Containment says, for people, how the run's processes are held and
	// bounded: "cgroup, pids.max 1024", "run marker + subreaper, ...".
	Containment string `json:"containment,omitempty"`
}

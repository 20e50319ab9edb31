// Package driver is pm's one runtime seam, shaped like a task driver: start
// an agent host from a Spec, Wait for it, Stop or Signal it, ask whether it
// is Alive, all through an opaque Handle that agent.json stores. ("Runtime"
// already names how an agent thinks in pm — exec, llm, none — so this layer
// is the driver.) Process is the real implementation; drivertest holds an
// in-memory fake for unit tests.
//
// Linux is where pm contains agents; on macOS the package builds with the
// Linux-only parts (cgroups, the subreaper, the parent-death signal, PID
// namespaces, close_range, PR_SET_DUMPABLE) in _linux.go files and a
// _darwin.go beside each that does without and says so (PlatformLimits,
// which pm doctor prints): a run is held by its process group there.
//
// Invariants:
//   - only this package signals agent processes: the launcher, the
//     supervisor, pm kill and pm reset go through a Driver, and the
//     low-level helpers (internal/driver/internal/proc) cannot be imported
//     from anywhere else. The one exception is a host's own runtime child
//     (agent/host.go), which shares the host's group and dies with it;
//   - a Handle names one run for good: the process driver checks the
//     recorded start time before every signal, so a recycled pid is never
//     signalled, and a pid that now names another process counts as exited;
//   - one grace policy: the driver is built with pm's stop grace
//     (config.json runtime.stop_grace_seconds, default 3 s) and Stop always
//     uses it — SIGTERM to the group, up to the grace for the host to leave,
//     SIGKILL to what is left. Callers cannot pass their own; a cancelled
//     context only cuts it short. A host already gone gets no grace: its
//     lingering group is killed at once;
//   - waits are woken by the kernel (a pidfd, or the reaper of our own
//     child), never by a sleep loop, and work for hosts another pm process
//     started;
//   - every host Start spawns is reaped by the driver, so a long-lived
//     starter leaves no zombies;
//   - every run is marked: PLASMODIUM_RUN=<Handle.Run> in the host's
//     environment, inherited by all it starts; Stop kills the marked
//     processes after the group (a setsid child left the group), and a host
//     ends its own with EndRun. Only the driver's Start sets a token, so
//     ending one run never touches another's processes;
//   - one containment per run: where pm can make a cgroup v2 group
//     (internal/cgroup: pm-agents/<run> beside pm's own cgroup, the mount
//     found in /proc/self/mountinfo) the host is cloned into it and Stop
//     ends it with cgroup.kill and removes it; elsewhere the marker above
//     and the host as subreaper. Handle.Containment says which, for people;
//   - one process limit per run (Spec.MaxProcs): pids.max of its group (v2,
//     or a v1 pids group), else NprocEnv for the sandbox helper's
//     RLIMIT_NPROC;
//   - Stop works on a dead host too: what its run left (group, cgroup,
//     marked processes) is forced at once, so the supervisor, pm kill and
//     pm reset can end a failed or killed -9 agent's leftovers;
//   - StartTree starts a command (run_command) whose whole tree ends with
//     it: the child of a PID 1 of a PID namespace of its own (the sandbox
//     helper's init, which internal/sandbox gives confined and unconfined
//     commands alike, else a shell) where allowed, else a marker
//     (CommandEnv) swept when it exits;
//   - no spawn inherits pm's caller's descriptors: Start (and the supervisor
//     and host spawns) call NoInherit first;
//   - the supervisor is in no agent's run: started by a pm command a host
//     ran (its agent's), it leaves that run's cgroups at once (LeaveRun),
//     so sweeping the run once it dies does not end the supervisor.
package driver

// Package sandbox runs the shell commands of agents (run_command) confined
// by the kernel: Linux Landlock, with a private mount namespace that hides
// pm's state directory where the kernel allows one.
//
// Wrap confines an exec agent's CLI the same way (the helper execs the CLI
// instead of sh, in the caller's process group).
//
// A command is started as a re-exec of the current binary with a hidden
// first argument (helperArg). This package's init function recognises it in
// any binary that links the package (pm, and the test binaries), applies the
// policy to itself and then execs sh, so the confinement holds for sh and
// every process it starts, and pm itself is never restricted.
//
// An ordinary user needs a user namespace for the mount namespace, and the
// process that maps the user into it must open the child's /proc files,
// which a non-dumpable process (pm supervise, pm agent-run) cannot: such a
// caller starts the helper plainly as a spawner (spawnArg), which starts
// the helper proper in the new namespaces, passes stop signals on and exits
// as it does. The probe goes the same way, so Available is what Command
// gives in the process that asks.
//
// Where the mount namespace is available, a new PID namespace comes with
// it: its PID 1 is the helper's init (initArg: pm re-executed, unconfined,
// doing nothing but starting the helper proper, passing stop signals on,
// reaping orphans and exiting as the helper did), which dies with whoever
// started it (Pdeathsig). The helper mounts a /proc of that namespace.
//
// Contain runs an unconfined command (sandbox.off, an unsandboxed exec
// agent, no Landlock) the same way, under the init in a PID namespace of
// its own with its own /proc, but with nothing else applied: for an
// ordinary user the init is root of a user namespace (to mount /proc) and
// starts the command in a nested one that maps the user's uid and gid
// back. Unconfined uses it.
//
// Invariants:
//   - a confined command may write only in Policy.Workspace, Policy.TempDir
//     (its TMPDIR, private to the command), Policy.Writable and a few device
//     files (/dev/null, /dev/zero, /dev/full); it may read and execute the
//     rest of the file system, except the Policy.Hide paths (pm's state),
//     which it cannot read, list or write at all;
//   - it cannot write Policy.ReadOnly (New fills it with Steering: .git and
//     every git directory a gitdir: file names, a core.hooksPath directory,
//     prompts/), in either mode: read-only bind mounts, or left out of the
//     write rules; what does not exist when the command starts is not
//     protected (a mount needs its target);
//   - it cannot reach other processes: Landlock denies ptrace-like access
//     (so /proc/PID/environ, /proc/PID/mem of any process outside the
//     command), signals and abstract unix sockets outside its domain (ABI 6+);
//   - with Policy.DenyNetwork, TCP bind and connect are refused (ABI 4+);
//   - the helper fails closed: if any step of the confinement fails, it exits
//     with status 126 and a message, and the command does not run;
//   - where the kernel has no Landlock, Command runs sh unconfined, and says
//     so once on Warn: the file primitives keep their own containment
//     (internal/capability), which does not depend on this package;
//   - capabilities are dropped from the bounding set before sh runs, so a pm
//     run as root does not hand root's capabilities (CAP_DAC_READ_SEARCH's
//     open_by_handle_at, CAP_SYS_ADMIN) to agents;
//   - without a mount namespace (unprivileged user namespaces disabled), the
//     state directory is left out of the Landlock rules instead: every entry
//     of the workspace but it (and, for writes, but the read-only paths) is
//     granted, so nothing can be created at the top of the workspace. That
//     cannot be lifted: a Landlock right on the workspace would hold in
//     .git, prompts/ and the state below it;
//   - with a mount namespace (where the kernel allows a PID namespace too)
//     nothing the command starts outlives its init: when the command ends,
//     or the process that started the init is killed, the kernel kills the
//     whole namespace, whatever session or environment a process took; the
//     command sees only its own processes in /proc;
//   - an unconfined command (Unconfined, Contain) runs as the user who
//     started it (uid and gid as outside, no capability), and, where the
//     kernel allows a PID namespace (Contained), nothing it starts outlives
//     it or the process that started it (Pdeathsig on the init or the
//     spawner): the same guarantee as a confined command's;
//   - Policy.Overlay files are bind-mounted read-only over their targets
//     inside the helper's private mount namespace only, before the state is
//     hidden: no other process sees them, the targets are never written, and
//     without a mount namespace the helper refuses to run (it never falls
//     back to the real files).
package sandbox

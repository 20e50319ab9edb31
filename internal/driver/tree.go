package driver

import (
	"context"
	"os"
	"os/exec"
	"syscall"

	"github.com/plasmodium/pm/internal/driver/internal/proc"
	"github.com/plasmodium/pm/internal/envlist"
)

// CommandEnv marks the processes of one command started by StartTree where
// it has no PID namespace to put them in.
const CommandEnv = "PLASMODIUM_COMMAND"

// StartTree starts cmd (a run_command's shell) so that everything it starts
// ends when it does, setsid'ed or not. Where the kernel allows it (as root,
// or when cmd already gets a user namespace of its own, as the sandbox gives
// it for an unprivileged user) cmd is the child of a shell that is PID 1 of
// a new PID namespace: when cmd exits the shell does, and the kernel kills
// every process left in the namespace before that exit is reported, so end
// has nothing to do. Elsewhere cmd's processes
// carry a marker (CommandEnv) in their environment, and end kills the marked
// ones. Call end after cmd.Wait returns.
func StartTree(cmd *exec.Cmd) (end func(), err error) {
	NoInherit()
	if cmd.SysProcAttr == nil {
		cmd.SysProcAttr = &syscall.SysProcAttr{}
	}
	if hasPIDNamespace(cmd.SysProcAttr) {
		// cmd is already PID 1 of a namespace of its own (the sandbox
		// helper's init), which ends the namespace when it exits.
		return func() {}, cmd.Start()
	}
	if sh, err := exec.LookPath("sh"); err == nil && pidNamespaceWorks(cmd.SysProcAttr) {
		// A shell is the namespace's PID 1 (cheap to start), with cmd its
		// child: a PID 1 gets no signal it has no handler for, and the
		// sandbox helper's all-threads system calls (signals between its
		// threads) never finish there. The command after "$@" keeps the
		// shell from exec'ing cmd in its place.
		cmd.Args = append([]string{"sh", "-c", `"$@"; s=$?; exit $s`, "sh", cmd.Path}, cmd.Args[1:]...)
		cmd.Path = sh
		newPIDNamespace(cmd.SysProcAttr)
		return func() {}, cmd.Start()
	}
	mark := CommandEnv + "=" + newRun()
	if cmd.Env == nil {
		cmd.Env = os.Environ()
	}
	cmd.Env = envlist.Set(cmd.Env, CommandEnv, mark[len(CommandEnv)+1:])
	if err := cmd.Start(); err != nil {
		return func() {}, err
	}
	// Kill the marked ones as soon as cmd exits, not when its output pipe
	// closes: a leftover holding the pipe would make cmd.Wait wait for it.
	swept := make(chan struct{})
	go func() {
		defer close(swept)
		_ = proc.Wait(context.Background(), cmd.Process.Pid, 0)
		proc.KillMarked(mark)
	}()
	return func() { <-swept }, nil
}

// Package agent records agents, starts their hosts (the Launcher) and runs
// one agent inside its host (Host, `pm agent-run NAME`).
//
// Invariants:
//   - every agent runs as `pm agent-run NAME`, started through the
//     Launcher's driver.Driver (the process driver: its own process group);
//     its Handle (pid + start time) is what agent.json stores;
//   - Start checks for a live run and spawns under the agent's lock, so two
//     starters racing (a command and the supervisor) never both spawn it;
//     a launcher starts only agents placed where it is (Here): a start of
//     one placed elsewhere changes nothing of its record, whatever its
//     status; each start of an owner records its task's rejections so far
//     (Agent.Rejections), and an owner that ended by itself while its
//     active task was rejected since is started again by its supervisor or
//     worker (RejectionUnseen), so a pm reject is never lost;
//   - Kill marks the agent killed before the driver stops it, so neither the
//     host nor the supervisor records the end as a crash;
//   - only the host signals its own runtime child (same process group, dies
//     with the host through Pdeathsig); everything else goes through the
//     driver, with pm's one stop grace (runtime.stop_grace_seconds);
//   - an exec owner whose CLI exits 0 while its task is active is resumed
//     (unless the task was rejected since the host started: it ends, to be
//     started again with the rejection in its prompt)
//     at most runtime.exec.nudges times, then given up on (GiveUpFunc:
//     failed, room closed, human asked); the host never resumes an agent
//     that was killed, stopped by a signal or whose CLI failed (the
//     supervisor's crash path handles those); an llm owner that stops for
//     good (its runner returned an error) is given up on the same way;
//     an exec role agent given up on (a budget, the loop breaker's stop,
//     its restarts) goes to GiveUpFunc too, which tells its task's owner
//     and the human in their mailboxes (task.TellStopped), as an llm
//     role's runner does itself;
//   - a given-up owner runs again only through Launcher.Resume (the human
//     answered the request about it): under its lock, still stopped, with
//     ResumeEnv naming the answered request, whose answer the host gives
//     the agent first (resumeNote); only pm's side sets a host's
//     environment, and the agent's CLI never gets ResumeEnv;
//   - every run of an exec agent's CLI is one line of the cost ledger
//     (execcost.go): Claude Code's result as it reports it (total_cost_usd),
//     Codex's turns and Gemini CLI's models priced by their usage
//     (cliusage.go), any other CLI's with an unknown cost (never $0); the
//     loop breaker sees its pm commands (cmd/agentrun); the dollar caps are
//     checked after each result and before each run (the project's windows
//     through one state.CostWindow per host: each check reads only the
//     ledger entries recorded since the last), and past one the agent
//     is given up on with the cap and the command that raises it (the
//     human's answer to the request about an owner so given up resumes it
//     with one more of each cap reached, for that host run: allowMore); the
//     loop breaker's "stop" in one of its commands gives it up the same way
//     (Commands' halt: one channel, execBudget.halt, ends the CLI);
//   - an exec resident (a prompt object on the exec runtime, no task)
//     answers no request: when its run ends its host moves its inbox
//     cursor past the requests of that run, whose callers were told it
//     ended without replying, so the loop breaker no longer counts them
//     as waiting on it (inbox.Chains);
//   - no argument of 128 KiB or more is passed to exec (MAX_ARG_STRLEN):
//     the start fails first, naming runtime.exec.prompt and {PROMPT_FILE};
//   - a host runs in its run's cgroup where the driver made one, else it is
//     a child subreaper; before recording its end it kills every process of
//     its run (driver.EndRun: its cgroup, its marker, its children), setsid
//     ones included;
//   - StopHost and EndLeftovers stop a run whether its host lives or not
//     (pm reset and pm kill end a failed or killed -9 agent's leftovers);
//   - Restart (the supervisor's respawn) spawns only if no live host is
//     recorded, checked under the agent's lock;
//   - an exec agent's CLI gets no secret variable of the host's environment
//     unless runtime.exec.pass_env names it (execEnv); its pm commands come
//     back to the host over internal/broker with the token the host made for
//     this run, and run there as this agent (Host's Commands), so they need
//     neither the key nor the state directory; unless runtime.exec.sandbox
//     is false the CLI runs under internal/sandbox (sandbox.go), which hides
//     the state directory and every host's socket (broker.Hidden), writes
//     its config paths, reads its prompt from a copy in its private TMPDIR
//     and, in a mount namespace, binds its own host's socket directory into
//     that TMPDIR, the one socket it reaches; where the kernel has no
//     Landlock it runs unconfined by default, and is not started when the
//     config says true; unsandboxed, it still runs in a PID namespace of
//     its own where the kernel allows one (sandbox.Contain), so what it
//     starts dies with a host killed -9; the host notes on its record's
//     containment whether its agent gets one (PIDNamespaceOf);
//   - OpenPhase records a room's role agents under the task's phases lock
//     with the room itself (phase.CreateThen), then starts them; EnsureRoles
//     finishes a room a killed pm phase left (roles missing or never
//     started) under the same lock, so it never races a live pm phase, and
//     a retried pm phase with the same spec finds the room and succeeds;
//   - on a hub, a host holds its agent's lease (lease.go: "agent NAME")
//     before it records or runs anything and for its whole life, renewed
//     every third of the TTL; a second host is refused it and leaves
//     without writing; a host whose lease is lost (a renewal or a fence
//     mark refused, or no renewal within four fifths of the TTL) kills its
//     agent and its run at once, records nothing more and refuses every broker
//     call; every broker call first appends the agent's fence mark, which
//     the hub refuses once a newer holder took the lease, and runs with the
//     host's lease in hand (Commands' fence), which a say's room append
//     carries (state.AppendFenced: on a hub project made now the hub
//     refuses the say itself after a takeover); on the files the lease
//     holds nothing (LeasesOf);
//   - a launcher starts and stops only the hosts of agents placed on its
//     worker (Launcher.Worker, Here): another machine's worker starts and
//     stops the rest; a worker's hosts die with it (parent death signal);
//   - the package reaches its files only through store operations (see
//     internal/store's doc for the whole tree and the lock order).
//
// An agent's files:
//
//	.plasmodium/agents/NAME/
//	  agent.json        the record: status, Handle, restarts, usage. New writes
//	                    it (WriteAgent); Start, Kill and the host's finish
//	                    rewrite it under agent.json.lock (UpdateAgent; Start
//	                    spawns inside that critical section and returns
//	                    store.ErrUnchanged when nothing is to run)
//	  prompt.md         the rendered prompt (Render: WritePromptFile), handed
//	                    to the runtime as $PM_PROMPT_FILE
//	  nudge.md          what an exec owner is resumed with, for {PROMPT_FILE}
//	  transcript.jsonl  the llm runtime's conversation (internal/llmagent)
//	  inbox.jsonl, inbox.cursor, stream.jsonl
//	                    prompt-object calls (internal/inbox)
//	  seen.json         messages shown per phase (internal/phase)
//	.plasmodium/logs/NAME.log
//	                    the host's stdout and stderr, opened by Start's spawn
//	                    (OpenLog) and appended across restarts
//
// A task's context.md (tasks/ID/context.md, ReadContext) fills the prompt's
// CONTEXT placeholder.
package agent

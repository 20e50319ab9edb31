// Package supervisor keeps agents alive: a Kubernetes-style reconcile of the
// agents that are wanted (their task, and for role agents their phase, still
// live) against the processes that run.
//
// Invariants:
//   - one supervisor per state directory: it holds a flock on
//     .plasmodium/supervisor.lock for its whole life; a second one exits at once;
//   - it is woken by bus events that can change which agents are wanted or
//     running (a subscription from the bus's end taken before its first
//     reconcile) and by pidfds of running hosts, never by a sleep loop;
//     backoff delays are timers; if the bus cannot be followed it exits
//     rather than run deaf (the next command that starts an agent starts
//     another);
//   - it sees and touches hosts only through a driver.Driver (Alive, Wait,
//     Stop), so its unit tests run on drivertest's fake;
//   - an agent is respawned only when it crashed (killed, or non-zero exit)
//     while wanted; exit 0 means it left on purpose, except an owner whose
//     task was rejected since it last started (agent.RejectionUnseen: a pm
//     reject that came while it finished, or from another machine), which
//     is started again;
//   - the reconcile runs both ways: a host that runs while its agent is not
//     wanted (killed task or agent, former owner, done task or closed phase
//     past the time its host takes to leave) is stopped through the driver
//     and recorded killed (stop.go);
//   - a reconcile reads the agents live at the last look, those named by
//     events since and those whose record was written since (the record's
//     own rename, store.WatchAgentRecords: a start killed between its
//     record and its event is read at once, busy or not); every record
//     only at the first look, after a reset and when that watch lost
//     events (scope.go); each agent's task is read once per look and
//     passed to every question asked of it (wanted, placed here to start,
//     rejected since it ran: Supervisor.task), never read again for the
//     next question;
//   - supervisor.wanted is written by Ensure and Run, and held through every
//     start's spawn and record and every task creation (Launcher.WhileWanted
//     = store.WhileSupervisorWanted, a shared lock on the marker); it is
//     removed only by a supervisor leaving (leave): it lets its own lock go,
//     then, holding the marker's lock exclusive (so every start in flight
//     has recorded what it started), looks at every record once more and
//     removes the marker only when nothing is live. Something live (a start
//     killed before its event, which no reconcile read) keeps the marker and
//     the supervisor, which takes its lock again (waiting out a probe of
//     it) and reads every record next. Killed anywhere on that way out, the
//     marker is there whenever something is live. A marker with no live
//     supervisor is a dead one, which Revive (every command's session
//     start) starts again, and Keep (beside every waiter: pm wait, chat
//     --follow, wait-children, log -f) starts again whenever it dies while
//     they wait (it watches the live one's pidfd);
//   - an owner of an active task never started (agent.Unstarted: a pm task
//     killed before the start) is live work: a supervisor about to leave
//     runs Settle, which starts it (once per way out: a start that fails
//     for good does not keep it spinning);
//   - on every way out it also removes the worktrees no task wants
//     (task.RepairWorktrees: a pm done killed after its mark, before it
//     removed its task's worktree), since no later command may come;
//   - live means the lock is held and its holder, recorded in
//     supervisor.json when it took the lock, runs and is not being killed
//     (store.SupervisorLive): a lock still held for the milliseconds a
//     kill -9 takes, or by a child forked in that instant, is not live, and a
//     starting supervisor waits for it (bounded) instead of leaving;
//   - CrashLimit crashes within CrashWindow mark the agent failed and file a
//     request for the human instead of retrying; the crashes are counted in
//     the agent's record (agent.json "crashes", once per dead run), so
//     killing the supervisor between crashes does not reset the count;
//   - a dead run's leftovers are ended once (sweep: driver Stop of the dead
//     host) when its exit is seen, before a respawn, at a give-up, and for a
//     host found dead and unwanted that nobody watched; each of those
//     also removes the broker socket directories of hosts that are gone
//     (broker.Sweep), so a host killed -9 leaves none behind even when no
//     host starts after it;
//   - respawns go through agent.Launcher.Restart, which re-checks under the
//     agent's lock and never spawns while a live host is recorded;
//   - a run recorded running whose host is gone while its agent is not
//     wanted (an owner killed -9 past pm done) is recorded exited where the
//     reconcile sees it, never left "running";
//   - an agent record it cannot read keeps it on (it may be a live agent's)
//     and is reported in supervisor.json (pm status); with the inotify
//     limits used up it follows the bus by polling every PollEvery, also
//     reported there, rather than leave, and watches again (the report
//     cleared) as soon as it can;
//   - it exits when nothing is live (a worker's stays while it runs);
//   - on a hub project with workers (worker.go, pm worker) it keeps only
//     the agents placed where it is: a worker's supervisor those placed on
//     its worker (it also starts them, and takes over a gone worker's once
//     each agent's lease is free: the lease, then a compare-and-set of the
//     record that re-checks, on the record it replaces, the placement, the
//     run and that the agent is still to run, so one worker moves each and
//     none moves one that changed meanwhile), any other supervisor those
//     placed on none; it never starts, respawns, sweeps or stops another
//     machine's host, and a worker stops the host of an agent whose record
//     was removed or placed elsewhere;
//   - a worker runs at most its capacity of agents: a watched host, a start
//     or a claim in flight and a respawn due each hold a place, counted from
//     what the worker knows under its lock, never a probe of a host there (a
//     host is watched until its exit is seen); an agent placed on it with no
//     place free waits (pending, in its registration's Waiting) until one
//     frees, and a worker with no free place claims nothing; a claim takes
//     its place only once it holds the agent's lease (the lease waited for
//     holds none: a lost worker's host may keep it for as long as it
//     lives), and lets the lease go when no place is free;
//   - one start per agent in flight ("start NAME" reserved once; a claim
//     whose agent has a start in flight starts nothing); the way out
//     (wayOut) ends the context, waits for the claims, then for the starts
//     they hand on, so no start begins or is added after that wait;
//   - every stop of a live host goes through stopHost (an unwanted agent's,
//     one removed or placed elsewhere): once per run, noted in stopping
//     until done, so the supervisor stays for it and no reconcile stops it
//     twice;
//   - it reads and writes agent, task and phase records only through its
//     launcher's state.State (opened with the store by
//     internal/state/stateopen), never the store's record methods; what
//     stays the store's is its own lock, supervisor.json, the bus and the
//     watches of agents/ (internal/state's layering tests count them).
package supervisor

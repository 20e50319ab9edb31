// Package task implements the task lifecycle: create (with blockers and
// subtasks), done (commit, unblock, notify), kill (and restart) and
// wait-children; and a task's health (HealthOf: stalled, waiting on the
// human, blocked, working, ...), the one answer pm status, pm wait and the
// notifier give.
//
// Invariants:
//   - breakers (active tasks, subtask depth) are checked and the task written
//     under the tasks lock: racing creators cannot exceed a limit;
//   - a placement on a worker (Place) reads the workers and the agents of
//     the live tasks the limit's check read (their owners, their active
//     phases' role agents), never every agent record: its reads are
//     bounded by limits.active_tasks, not by the project's history;
//   - exactly one caller moves a blocked task to active (unblock reports it)
//     and only that caller starts its owner;
//   - reverse edges (children, blocks) are recorded on the parent/blocker so
//     done and wait-children never scan every task;
//   - pm done commits before it marks the task done: a failed commit leaves
//     the task active and changes nothing;
//   - pm done commits into the repository pinned in the task record when
//     the task was created (a subtask's and an agent's task's pin are
//     inherited, never taken from a .git an agent may have changed), and
//     nowhere else;
//   - a task is blocked while a blocker is not done (Blocking): one recorded
//     blocked with every blocker done is shown as unblocked (HealthOf) and
//     unblocked by Settle; HealthOf's Repair says a record holds what only
//     a crash leaves, and whoever can start agents runs Settle then;
//   - Settle also finishes an open room whose roles are missing or never
//     started (agent.EnsureRoles);
//   - pm kill --restart of a live task checks the limit, marks, and revives
//     in one critical section under the tasks lock: it restarts or fails
//     with nothing changed;
//   - pm kill marks the whole tree killed first (under the tasks lock, so
//     nothing is wanted or created under it any more), then ends its agents
//     in parallel rounds through the launcher's driver; pm reset ends agents
//     the same way. Neither signals a process itself;
//   - liveness (liveness.go) is derived from record times and file
//     modification times, never stored: a working task whose open room has
//     not moved for runtime.idle_after is idle (three times: stuck), judged
//     by the store's clock (s.Now), so tests move time instead of waiting;
//   - a role agent stopped for good by governance reaches its task's owner
//     and the human as a notice in their mailboxes (TellStopped), from
//     either runtime's host;
//   - Resume is the one way a given-up owner runs again: the human answered
//     the request about it (ops.Answer), it is still stopped and still its
//     active task's owner, checked under the agent's lock;
//   - a task whose owner pm runs, in a git repository with isolation not
//     "none", works in a worktree of its own (worktree.go), made before its
//     owner starts (and made again by Settle when a crash left it half-made);
//     pm done commits there and merges into the branch it started from
//     (merge.go); a merge that waits (conflict, the user's local changes,
//     review) changes nothing, is recorded on the task and asked of the human
//     (or the parent's owner), and only the human (or that owner) settles it
//     with pm merge or pm reject;
//   - on a hub project with a git remote (remote.go), a task's branch and
//     the branch it merges into are the remote's: each machine works on the
//     task as it sees it (local: its own checkout and worktree path), makes
//     the worktree where it is needed (LocalWorktree, pm done, merge, diff;
//     Settle only repairs one this machine began), pushes the task's branch
//     and moves the branch merged into on the remote only by a
//     compare-and-set, redone on a fresh fetch when overtaken; the user's
//     checkout and local branches are never written; a push that fails
//     leaves the task as it was (active, its work on its local branch); a
//     command (and a Settle) sees this machine through one machine value:
//     the checkout located once, the remote fetched once (a failed fetch
//     not tried again) and updated by the command's own pushes; a killed
//     task's branch goes from the remote (its work kept on this machine's
//     branch), and a command that fetched deletes a killed or merged
//     task's branch it sees there; a command's deletions go in one push
//     at its end (at most maxDrops, the rest said left for the next
//     command; pm task's after its owner started), and the remote work
//     that only tidies (pm kill's and reset's fetch, every deletion) is
//     bounded by git.remote_timeout (read once per command) and is a
//     warning with a Try line by gitx's kind of the error when it fails,
//     never the command's failure; pm kill --restart's revived worktree
//     moves work: git's own bound, and a tidy fetch that failed tried
//     again (machine.moving);
//   - a task held for review is done but blocks its dependants until merged;
//   - a worktree goes when its task is merged, killed or reset (its branch
//     kept only when it holds commits not merged); one no task wants is
//     removed by Settle (PruneWorktrees) and reported by pm doctor;
//   - records (tasks, phases, agents) are read and written only through a
//     state.State: the launcher's (l.State) for what starts agents, else
//     the caller's; the store serves config, paths, the clock and the bus.
//     The tasks and phases locks are state.WithTasks and WithPhases.
package task

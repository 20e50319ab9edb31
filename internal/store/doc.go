// Package store is pm's state directory, .plasmodium/: its paths, its
// records, and the operations that read and write them under their locks.
// Domain packages (agent, inbox, request, supervisor, llmagent, capability;
// phase, task and ops as they move over) call these operations: they take no
// lock, append no line and join no path onto a store directory themselves.
// layering_test.go keeps it so.
//
// The store is the file implementation of the state seam: internal/state
// declares the interfaces and their guarantees, and fsstate.New puts a
// *Store behind them (state/fsstate), so what the seam promises is what
// these operations do. config.json's types, defaults and checks are
// internal/config's; the store loads it for a session (Config,
// UpdateConfig, the config.checked cache).
//
// # On-disk layout
//
// Every lock is a sidecar file NAME.lock next to the file it guards (flock,
// internal/lockedfile): JSON files are replaced by rename, and a lock on the
// file itself would be lost with the old inode. JSON files are rewritten
// atomically (temp file, fsync, rename) under their lock; JSONL files are
// appended one whole line per write(2) under their lock (internal/jsonl).
//
//	.plasmodium/
//	  .gitignore               "*": state never reaches the user's commits (Init)
//	  config.json              limits, model, runtime, notify (written by Init; read by
//	                           Open, unknown keys refused; pm config: UpdateConfig,
//	                           under config.json.lock, written only if it loads;
//	                           Store.Config() decodes it on first use). Keys that
//	                           route the key or run a command load only where no
//	                           other project's work tree holds it (internal/config);
//	                           model.api_key_env names a *_API_KEY variable
//	  config.checked           a cache: the digest (with the executable's identity)
//	                           of the config.json OpenChecked last parsed; a match
//	                           skips the parse (configload.go), anything else parses
//	                           (its gain: docs/benchmarks.md, "Caches")
//	  events.jsonl             the bus (internal/bus): every process appends
//	                           under events.jsonl.lock; pm reset removes it
//	  costs.jsonl              the cost ledger (state.CostLedger, fsstate at CostsPath: cost.Entry
//	                           per llm call or exec run, usd null when unknown);
//	                           pm reset keeps it (the project windows count it)
//	  supervisor.lock          the live supervisor's lifetime flock (TryLockSupervisor)
//	  supervisor.json          its holder {pid, pid_start, started_at} written when the
//	                           lock is taken, and what the supervisor reports (polling,
//	                           unreadable records: SetSupervisorInfo); live = lock held
//	                           and that holder runs, not exiting, no SIGKILL pending
//	                           (SupervisorLive)
//	  notify.cursor            the notifier's bus cursor (internal/notify:
//	                           SetNotifyCursor, under notify.cursor.lock)
//	  supervisor.wanted        empty marker: a supervisor should run (written by
//	                           supervisor.Ensure and Run, and held by each start and
//	                           task creation: WhileSupervisorWanted; removed by a
//	                           supervisor that found nothing live: ClearSupervisorWantedIf;
//	                           a marker with no live supervisor is a dead one:
//	                           supervisor.Revive, Keep)
//	  supervisor.wanted.lock   serialises the marker: starts hold it shared through
//	                           what they record, a leaving supervisor exclusive across
//	                           its last look and the removal
//	  tasks.lock               task creation, links, done, kill, restart, reset
//	  tasks/tk-ID/
//	    task.json              the task (task package: WriteTask, UpdateTask;
//	                           repo: the repository pm done commits into),
//	                           written last by CreateTask, after its owner,
//	                           context.md and the reverse edges (a directory
//	                           without it is a creation killed midway)
//	    context.md             a subtask's context, written once at creation
//	                           under tasks.lock (ReadContext)
//	    phases.lock            phase creation (with its role agents' records),
//	                           pm done and EnsureRoles' repair for this task
//	    phases/ph-ID/
//	      phase.json           the phase (phase package); its status is a cache
//	                           of RoomClosedBy (room.go: full log, or task not
//	                           active, is closed): Phase/Phases return the
//	                           derived status and repair the record under
//	                           messages.jsonl.lock, WithPhase derives under it
//	      messages.jsonl       its messages: pm say appends under
//	                           messages.jsonl.lock, counting and closing in the
//	                           same critical section
//	      messages.jsonl.count the count mark: the first N bytes of the log
//	                           hold M messages, so a say counts only the tail
//	                           (countmark.go); a cache, one 128-byte record
//	                           with a check, rewritten in place every 4 KiB
//	                           of log, ignored and rewritten when it does not
//	                           fit the log (its gain: docs/benchmarks.md, "Caches")
//	  task-index/              live/, done/, killed/tk-ID empty markers and
//	                           complete: which tasks are in each class, for
//	                           the limit check and pm status without reading
//	                           finished tasks (taskindex.go); a cache, the new
//	                           marker written before task.json, the old one
//	                           removed after it; repaired by readers (its
//	                           gain: docs/benchmarks.md, "Caches")
//	  phase-index/ph-ID        the task holding a phase, for FindPhase without
//	                           a scan (phaseindex.go); a cache, repaired by a
//	                           scan when it does not fit the task directories
//	                           (its gain: docs/benchmarks.md, "Caches")
//	  agents/NAME/
//	    agent.json             the agent record (agent.New: WriteAgent;
//	                           inbox.Resident: CreateAgent; Launcher.Start,
//	                           Kill, the host, the supervisor, llmagent's
//	                           usage: UpdateAgent), under agent.json.lock;
//	                           UpdateAgent writes it through a temp file in
//	                           agents/ (.agent-record-NAME.*) renamed into
//	                           place, the rename being what a supervisor's
//	                           WatchAgentRecords sees (a temp left by a killed
//	                           write is a file, never taken for an agent)
//	    prompt.md              the rendered prompt (agent.Render: WritePromptFile)
//	    nudge.md               an exec owner's resume text (agent.Host: WriteNudgeFile)
//	    inbox.jsonl            prompt-object messages to NAME (inbox.Send:
//	                           AppendInbox), under inbox.jsonl.lock
//	    inbox.cursor           offset of the first inbox line NAME has not
//	                           answered (inbox.Serve: SetInboxCursor)
//	    stream.jsonl           streamed reply text of a resident object
//	                           (inbox.Stream: state.Replies, fsstate at StreamPath)
//	    transcript.jsonl       the llm runtime's conversation (internal/state/
//	                           transcript: state.Transcripts, fsstate at
//	                           TranscriptPath), appended by the agent's host
//	    seen.json              how many messages of each phase NAME was shown
//	                           (phase package)
//	  requests/rq-ID.json      ask_human questions (request package:
//	                           CreateRequest, UpdateRequest), under rq-ID.json.lock
//	  logs/NAME.log            output of NAME's host, and logs/supervisor.log
//	                           (OpenLog: O_APPEND, no lock; the driver hands the
//	                           file to the host as its stdout and stderr)
//	  prompts/NAME.md          prompt objects made by create_capability
//	                           (CreatePrompt, under NAME.md.lock; read with
//	                           MarkdownFiles; both reached through fsstate's
//	                           state.Prompts, loaded by internal/prompt)
//	  designs/ds-ID/           a code design (pm design; designs.go):
//	    design.json            its whole state (WriteDesign, under design.json.lock)
//	    log.jsonl              requests, responses, plans, state changes
//	                           (AppendDesignLog, under log.jsonl.lock)
//	    work/NAME              the temporary copy of the file (WriteDesignCopy)
//	    run.lock               held by the process running it (TryLockDesign)
//
// # Lock order
//
// tasks.lock → phases.lock → messages.jsonl.lock → phase.json.lock /
// task.json.lock → agent.json.lock → events.jsonl.lock. Nothing takes them
// the other way round. agent.json.lock is taken alone, or under tasks.lock
// when a task's owner is created (pm task, pm subtask, pm kill --restart)
// and when pm reset removes the agents (RemoveAgent);
// Launcher.Start holds it while it spawns the host, so two starters never
// both spawn. The other locks (requests, inbox, stream, cursor, transcript,
// seen, prompts, config, designs) are leaves: their holders take no other lock. An
// operation publishes its event after releasing its record's lock, or last
// of all. supervisor.lock is held for a supervisor's whole life and only
// ever tried (never waited for), so it cannot deadlock with the others.
//
// # Exceptions
//
// LineReader is jsonl.Reader under the store's name: inbox followers read
// lines through a reader the store opened (InboxFrom, InboxTail) and keep
// its Offset as their cursor. Paths are still handed out where a library
// or a watcher needs one (TranscriptPath, StreamPath and CostsPath for
// fsstate's agent logs, AgentDir and RequestsDir for watch.Until,
// PromptFilePath for an agent's environment); they are built only here.
package store

// Package llmagent runs an agent on the built-in model loop (internal/llm)
// inside its host process: owners drive their task until it is no longer
// active, role agents speak when someone else posts and leave when their
// phase closes, resident prompt objects answer their inbox.
//
// Invariants:
//   - the transcript (state.Transcripts through internal/state/transcript:
//     agents/NAME/transcript.jsonl on files, the project's transcript stream
//     on a hub) and usage (the agent record) survive the process, so a
//     respawned agent resumes, on any machine of a hub project, and its
//     budgets keep counting; what the running loop sends the model is kept
//     to the transcript's bound (limits.transcript_bytes, llm.Loop.HistoryBytes)
//     by the transcript's cut, however long the run goes;
//   - budgets are enforced in code: per agent by the loop, per task (the sum
//     of its agents' usage) and in dollars (agent, task, project windows)
//     before every model call (llm.Loop.Before: a refused call is never
//     sent); a stop is recorded and told to the owner and the human;
//   - every response is one line of the cost ledger, priced once, when it
//     arrives; an estimate or an unpriced model is unknown, never $0, and
//     with a dollar cap set it stops the agent; a dollar cap reached pauses
//     the agent on a request to the human (cost.go: yes, no, or raise it);
//   - the loop breaker (loop.go, governance.loop): a repeated tool call and
//     a call back into a waiting cascade pause the agent on a request to
//     the human (ops.LoopPause); "stop" ends it failed, and the owner and
//     the human are told; so does "stop" at a phase opened without
//     progress (capability.Env.Halt cancels the run);
//   - what pm sends with every call of a role (system prompt, tools) and
//     writes into its conversation is measured by Overheads (overhead.go)
//     and kept within 10% of docs/benchmarks.md's figures by a test;
//   - a role agent is woken only by messages from others;
//   - code-designer mode (docs/code-designer.md) is read from the agent
//     record before every run (a resident's mode is decided per call by pm
//     send); an agent no caller decided for gets it from this host once
//     (decideMode); the tool docs are read once per run, on the first
//     preview, and previews and decisions go on the bus.
package llmagent

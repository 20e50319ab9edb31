// Package ops is pm's operations layer: every pm operation (task, status,
// say, chat, history, phase, extend-phase, end-phase, subtask, wait-children,
// done, kill, reset, agents, requests, answer, prompts, send, wait, stop,
// config get/set/unset/list, and for MCP clients conversation, inspect-po
// and wait-task) is one typed function here,
// `Op(ctx, *Session, OpInput) (OpResult, error)`.
//
// Three surfaces call the same functions:
//   - the cobra commands (internal/cmd/*) parse flags into the input and
//     print the result; pm say and pm chat are the exception, because the
//     small pm executable runs them without linking this package: they call
//     phase.Post and phase.Read (internal/lite), which Say and ChatStream
//     wrap, so the operation is still one;
//   - the model tools (internal/capability) are generated from Tools: each
//     tool's JSON Schema is derived from its input struct's tags by
//     github.com/google/jsonschema-go, never written by hand;
//   - the MCP server registers the same functions.
//
// Invariants:
//   - identity is the Session's Actor; it is checked here on every write,
//     never by a surface (identity.go): owner operations refuse anyone but
//     the task's owner or the human; an agent posts only into its own room,
//     never answers a request unless config names it (and never its own),
//     kills only subtasks of the task it owns and never resets; a refusal is
//     exit 5 with a Try: line and writes nothing;
//   - input is bounded before anything is read (bounds.go: context files
//     are regular files read through a limit; MaxSend);
//   - task and owner resolution (phase resolution and the post check are
//     phase.Resolve and phase.CheckPost) and runtime checks live here, so every
//     surface refuses the same inputs with the same errors (internal/errs
//     codes and Try: hints);
//   - an operation that starts agents needs Session.Launcher and refuses
//     without one;
//   - waits (Wait, WaitPhase) wake on the bus, never on a timer, and take
//     the bus cursor before their first check so no event slips between;
//   - config.json is changed only by the human (ConfigSet, ConfigUnset) and
//     only to a config that loads;
//   - the loop breaker pauses an agent in one way (LoopPause: a request of
//     kind loop, the evidence, yes/stop/anything else); on stop it halts
//     the agent through Session.Halt when its host gave one (an exec agent's
//     command); an agent's phase is checked for progress before it opens
//     (progress.go), and a call to a prompt object against the cascades
//     it would extend (CheckCascade: Send, and the llm runtime's calls, so
//     every runtime and surface gets the same check);
//   - governance.confirm is one gate (Confirm, confirm.go): an agent's call
//     a rule names waits on a request of kind confirm; done and kill call it
//     themselves (so an exec agent's pm done is held too), capability calls
//     it for every other tool; a denial is exit 3 with the human's words;
//   - records come from Session.State (state.State, opened by
//     internal/state/stateopen), whichever backend holds them: the design
//     state, log, working copy and run lock (Designs), the loop breaker's
//     phase progress (PhasesProgress, AppendPhaseProgress), a room's tail
//     (LastMessages) included; ops reads no record through the store;
//   - ops imports domain packages (task, phase, agent, request, inbox, store)
//     and is imported by surfaces; no domain package imports it, and it
//     imports no surface (cmdutil, cli, capability).
package ops

// Package capability turns a prompt object's frontmatter capabilities into
// model tools (llm.Tool): each has a name, a description and a JSON Schema
// for its arguments, and a Call that runs it. Every schema is derived from a
// Go struct by ops.SchemaFor (github.com/google/jsonschema-go); none is
// written by hand.
//
// Four kinds (names in internal/prompt, capabilities.go):
//   - pm operations (say, chat, status, history, phase, extend_phase,
//     end_phase, subtask, wait_children, done) are the operations layer's
//     tools (ops.LookupTool): the same typed functions the pm commands call,
//     with schemas derived from their input structs, acting as Env.Actor;
//   - primitives (read_file, list_files, write_file, run_command, http_get)
//     are deterministic code confined to Env.Workspace;
//   - universal capabilities (think, ask_human, create_capability) are given
//     to every resident prompt object, declared or not; an agent of a task
//     (owner, role agent) gets only what its prompt declares (each tool is
//     paid for on every model call);
//   - any other prompt object, reached with a {message} through Env.CallPO.
//
// Invariants:
//   - a failure the model can react to (a refused limit, a closed phase, a
//     bad argument, a path outside the workspace) is the tool's result text,
//     prefixed with what the exit code would mean ("refused (limit): ...",
//     "wrong state: ...", "not found: ...", "bad arguments: ...") and the
//     Try: hint; Call returns an error only when its context ended;
//   - a primitive never touches a path outside the workspace, and the kernel
//     sees to it: every open goes through an os.Root on the workspace, the
//     open handle is admitted (where /proc/self/fd says it is, its type, one
//     link only) and only that handle is read or written, so a symlink
//     swapped during the call or a hard link to an outside file gets nothing;
//     no primitive reads or writes the state directory (.plasmodium/), and
//     .git/ and prompts/ are read-only; the lexical check before the open
//     only words the refusal ("../x", "/etc/passwd", a symlink out, a
//     dangling symlink);
//   - every output is capped (files, listings, command output, HTTP bodies)
//     and says so when it was cut;
//   - run_command runs `sh -c` in the workspace in its own process group,
//     which is killed when the timeout (default 60s, at most 10m) expires,
//     confined by internal/sandbox (Landlock: writes only the workspace and a
//     private TMPDIR, never sees the state directory nor the exec agents'
//     hosts' sockets (broker.Hidden); config sandbox.*);
//     secret variables (secret.IsSecretEnv: named like *KEY*, *TOKEN*,
//     *SECRET*, *PASSWORD*, ...) are not passed to it;
//   - a call governance.confirm names waits for the human before it runs
//     (confirm.go, ops.Confirm), with write_file's diff; a denial is the
//     tool's result;
//   - create_capability never overwrites: a new prompt object goes to
//     .plasmodium/prompts/NAME.md only when no object or built-in has that
//     name, is parsed and validated before it is kept, and is visible to
//     every later load (pm send, phase roles, other objects' tools) at once.
//
// Frontmatter is validated on every load (agent.Prompts calls
// catalog.Validate): an unknown capability is an error naming the prompt
// file and the line it is written on.
package capability

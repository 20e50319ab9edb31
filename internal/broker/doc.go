// Package broker carries the pm commands an exec-runtime agent runs to the
// agent's host, which runs them as that agent.
//
// An exec agent (Claude Code, codex, a script) drives pm by running `pm say`,
// `pm phase`, `pm send`... as child processes. Those must not need what the
// agent is denied: the provider key (stripped from its environment), pm's
// state directory (hidden by its sandbox), or a trustworthy PM_AGENT (it can
// set any). So its host, `pm agent-run`, listens on a unix socket outside the
// state directory and gives the agent two variables: SocketEnv (the socket's
// path) and TokenEnv (a random token for this host run). A pm process that
// finds both sends its whole command line to the host instead of touching
// the state; the host runs it through the same command tree (and so the same
// ops functions) as the agent it hosts, with its own environment (which
// holds the key, for llm hosts it starts), and streams back the output and
// the exit code.
//
// Invariants:
//   - identity is the host's agent, never anything the client sends; a
//     connection whose token does not match (constant-time) runs nothing;
//   - the token is read first: before it has been checked the host reads
//     only the token frame (5+MaxToken bytes, straight from the
//     connection, nothing buffered ahead), within authTimeout; a first
//     frame that is not a token, or a longer one, is refused after its
//     5-byte header;
//   - connections are capped: at most maxPending wait for their token (a
//     new one closes the oldest, so idle connections hold no real client
//     off) and maxCommands run (one more is told so, exit 3, and closed);
//     accepting never waits;
//   - the client's standard input is read only when the command reads it
//     (a `pm say` in a shell loop does not swallow the loop's input);
//   - a command's context ends when its client goes away (a killed
//     `pm wait` or `pm chat --wait` stops waiting in the host too), and
//     every command ends when the server is closed;
//   - frames are bounded (MaxFrame, MaxHeader): a client cannot make the
//     host allocate without bound.
//
// The protocol and the client (Forward) are package wire, which the short
// executable links without this server, its tokens or the net package.
//
// The socket is a pathname socket: Landlock (ABI 7 and below) does not
// restrict connecting to one, while abstract sockets are scoped.
package broker

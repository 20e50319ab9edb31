// Package wire is the broker's protocol (package broker, the server in an
// exec agent's host) and its client, Forward, which the short executable
// (cmd/pm, internal/lite) runs for every pm command of an exec agent.
//
// A client connects to the host's unix socket (SocketEnv) and sends its
// token first, in a frame of its own (FrameToken, at most MaxToken bytes):
// the host reads nothing else before it has checked it. Then one JSON
// request line (the command line, at most MaxHeader bytes), then frames
// follow both ways: a type byte, a 4-byte big-endian length and at most
// MaxFrame bytes. The host sends output (FrameStdout, FrameStderr),
// asks for input once (FrameWantStdin) and ends with FrameExit; the client
// sends input (FrameStdin, an empty one for its end).
//
// The client links no net package and no crypto: it dials with the socket
// system calls, so an exec agent's `pm say` starts as fast as a human's
// (docs/benchmarks.md, "Two executables"). The server side keeps the
// invariants listed in package broker.
package wire

package lite

import (
	"context"
	"errors"
	"io"

	"github.com/plasmodium/pm/internal/broker/wire"
	"github.com/plasmodium/pm/internal/errs"
)

// Forward runs a command line in the agent's host (an exec agent's pm
// commands run there, as that agent, never on a state directory here) and
// returns its exit code; the host's output comes through as its own.
func Forward(ctx context.Context, sock, tok string, args []string, stdin io.Reader, stdout, stderr io.Writer) int {
	code, err := wire.Forward(ctx, sock, tok, args, stdin, stdout, stderr)
	switch {
	case errors.Is(err, context.Canceled):
		return 130
	case err != nil:
		return Report(stderr, errs.Failf("check that the agent's host is running (pm agents)",
			"cannot reach this agent's host at %s=%s: %v", wire.SocketEnv, sock, err))
	}
	return code
}

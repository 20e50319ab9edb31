package capability

import (
	"context"
	"os/exec"

	"github.com/plasmodium/pm/internal/broker"
	"github.com/plasmodium/pm/internal/config"
	"github.com/plasmodium/pm/internal/sandbox"
)

// confinedCommand is run_command's `sh -c line` in its own process group,
// confined by internal/sandbox as the config says: writing only the
// workspace, tmp and config's sandbox.writable, never seeing pm's state,
// never writing .git or prompts/ (sandbox.Steering).
func confinedCommand(ctx context.Context, env *Env, b *confinement, line, tmp string) *exec.Cmd {
	var cfg config.Sandbox
	if env.Store != nil {
		cfg = env.Store.Config().Sandbox
	}
	if cfg.Off {
		return sandbox.Unconfined(ctx, line)
	}
	p := sandbox.New(b.root, tmp, broker.Hidden(b.deny...)...).Configured(cfg.Network, cfg.Writable)
	cmd, _ := sandbox.Command(ctx, p, line)
	return cmd
}

// Command pm-hub runs `pm hub`: pm's embedded NATS JetStream server
// (internal/hub). pm-full execs it for `pm hub`, so that only this process
// links nats-server (internal/cmd/hubcmd says why); run directly it takes
// the same flags.
package main

import (
	"context"
	"os"
	"os/signal"
	"syscall"

	"github.com/spf13/cobra"

	"github.com/plasmodium/pm/internal/cmd/hubcmd"
	"github.com/plasmodium/pm/internal/cmd/hubcmd/serve"
	"github.com/plasmodium/pm/internal/cmdutil"
	"github.com/plasmodium/pm/internal/errs"
	"github.com/plasmodium/pm/internal/lite"
)

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	f := cmdutil.New(ctx, os.Stdin, os.Stdout, os.Stderr)
	c := hubcmd.NewCmd(f, serve.Run)
	c.Use = "pm hub"
	c.SilenceUsage, c.SilenceErrors = true, true
	c.SetArgs(os.Args[1:])
	c.SetFlagErrorFunc(func(_ *cobra.Command, err error) error { return &errs.Error{Code: errs.Usage, Err: err} })
	err := c.ExecuteContext(ctx)
	stop()
	if err != nil {
		os.Exit(lite.Report(os.Stderr, err))
	}
}

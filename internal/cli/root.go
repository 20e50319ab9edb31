package cli

import (
	"github.com/spf13/cobra"

	"github.com/plasmodium/pm/internal/cmd/agentrun"
	"github.com/plasmodium/pm/internal/cmd/agents"
	"github.com/plasmodium/pm/internal/cmd/answer"
	"github.com/plasmodium/pm/internal/cmd/chat"
	"github.com/plasmodium/pm/internal/cmd/configcmd"
	"github.com/plasmodium/pm/internal/cmd/costs"
	"github.com/plasmodium/pm/internal/cmd/dashboard"
	"github.com/plasmodium/pm/internal/cmd/demo"
	"github.com/plasmodium/pm/internal/cmd/designcmd"
	"github.com/plasmodium/pm/internal/cmd/doctor"
	"github.com/plasmodium/pm/internal/cmd/done"
	"github.com/plasmodium/pm/internal/cmd/endphase"
	"github.com/plasmodium/pm/internal/cmd/extendphase"
	"github.com/plasmodium/pm/internal/cmd/history"
	"github.com/plasmodium/pm/internal/cmd/hubcmd"
	"github.com/plasmodium/pm/internal/cmd/initcmd"
	"github.com/plasmodium/pm/internal/cmd/kill"
	"github.com/plasmodium/pm/internal/cmd/logcmd"
	"github.com/plasmodium/pm/internal/cmd/logs"
	"github.com/plasmodium/pm/internal/cmd/mcp"
	"github.com/plasmodium/pm/internal/cmd/mergecmd"
	"github.com/plasmodium/pm/internal/cmd/phasecmd"
	"github.com/plasmodium/pm/internal/cmd/prompts"
	"github.com/plasmodium/pm/internal/cmd/requests"
	"github.com/plasmodium/pm/internal/cmd/reset"
	"github.com/plasmodium/pm/internal/cmd/say"
	"github.com/plasmodium/pm/internal/cmd/send"
	"github.com/plasmodium/pm/internal/cmd/status"
	"github.com/plasmodium/pm/internal/cmd/stop"
	"github.com/plasmodium/pm/internal/cmd/subtask"
	"github.com/plasmodium/pm/internal/cmd/supervise"
	"github.com/plasmodium/pm/internal/cmd/talk"
	"github.com/plasmodium/pm/internal/cmd/taskcmd"
	"github.com/plasmodium/pm/internal/cmd/tools"
	"github.com/plasmodium/pm/internal/cmd/top"
	"github.com/plasmodium/pm/internal/cmd/wait"
	"github.com/plasmodium/pm/internal/cmd/waitchildren"
	"github.com/plasmodium/pm/internal/cmd/workercmd"
	"github.com/plasmodium/pm/internal/cmdutil"
)

// NewRoot builds the pm command tree.
func NewRoot(f *cmdutil.Factory) *cobra.Command {
	root := &cobra.Command{
		Use:           "pm",
		Short:         "Orchestrate teams of LLM agents through bounded discussion phases",
		Long:          "pm runs tasks driven by owner agents, who open bounded discussion phases with role agents,\nsplit work into subtasks and finish with a git commit. State lives in .plasmodium/.",
		SilenceUsage:  true,
		SilenceErrors: true,
		Version:       Version(),
	}
	root.AddGroup(
		&cobra.Group{ID: "human", Title: "Humans:"},
		&cobra.Group{ID: "agent", Title: "All agents:"},
		&cobra.Group{ID: "owner", Title: "Owners:"},
	)
	add := func(group string, cmds ...*cobra.Command) {
		for _, c := range cmds {
			c.GroupID = group
			root.AddCommand(c)
		}
	}
	add("human", initcmd.NewCmd(f), taskcmd.NewCmd(f), status.NewCmd(f), reset.NewCmd(f), kill.NewCmd(f), doctor.NewCmd(f),
		agents.NewCmd(f), logs.NewCmd(f), logcmd.NewCmd(f), requests.NewCmd(f), answer.NewCmd(f), configcmd.NewCmd(f), costs.NewCmd(f), wait.NewCmd(f), top.NewCmd(f), dashboard.NewCmd(f), hubcmd.NewCmd(f, hubcmd.Exec))
	add("human", mergecmd.NewMergeCmd(f), mergecmd.NewRejectCmd(f), mergecmd.NewDiffCmd(f))
	add("human", workercmd.NewWorkerCmd(f), workercmd.NewWorkersCmd(f))
	add("agent", chat.NewCmd(f), say.NewCmd(f), history.NewCmd(f))
	root.AddGroup(&cobra.Group{ID: "po", Title: "Prompt objects:"})
	add("po", prompts.NewCmd(f), talk.NewCmd(f), send.NewCmd(f), stop.NewCmd(f), demo.NewCmd(f))
	add("po", mcp.NewCmd(f), tools.NewCmd(f))
	add("human", designcmd.NewCmd(f), designcmd.NewListCmd(f))
	add("owner", phasecmd.NewCmd(f), extendphase.NewCmd(f), endphase.NewCmd(f), subtask.NewCmd(f),
		waitchildren.NewCmd(f), done.NewCmd(f))
	root.AddCommand(agentrun.NewCmd(f), supervise.NewCmd(f))
	root.SetFlagErrorFunc(func(c *cobra.Command, err error) error { return usageError(err) })
	polishHelp(root)
	return root
}

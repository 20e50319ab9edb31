package cli

import (
	"fmt"
	"strings"

	"github.com/spf13/cobra"

	"github.com/plasmodium/pm/internal/errs"
	"github.com/plasmodium/pm/internal/prompt"
	"github.com/plasmodium/pm/prompts"
)

// environment is the part of pm --help that names the variables pm reads.
const environment = `

Environment:
  PM_HOME          the state directory to use (default: the nearest .plasmodium/ up from here)
  PM_AGENT         act as this agent (its task and phase come from its record); unset: the human
  PM_BROKER, PM_AGENT_TOKEN
                   set by an exec agent's host: pm runs the command there, as that agent
  PM_MODEL         the model for the llm runtime, e.g. gpt-4o-mini
  OPENAI_API_KEY   the key for the model provider (never stored in config.json)
  OPENAI_BASE_URL  an OpenAI-compatible endpoint, e.g. http://localhost:11434/v1 (Ollama)
  NO_COLOR         no colour in pm log, even on a terminal

Exit codes: 0 ok · 1 error · 2 usage · 3 refused by a limit · 4 not found · 5 wrong state · 124 timed out.
A message that starts with "-" goes after "--": pm say -- "-1 from me".`

// examples are shown under each command's help; a command that sets its own
// Example keeps it.
var examples = map[string]string{
	"init":          "  cd your-project && pm init\n  pm init    # again: keeps the state, says so if config.json does not load",
	"task":          "  pm task \"Build a landing page\"\n  pm task \"Write the docs\" --blocked-by tk-1a2b3c\n  pm task \"Try it by hand\" --runtime none",
	"status":        "  pm status\n  pm status --all\n  pm status tk-1a2b3c --json",
	"reset":         "  pm reset\n  pm reset --force   # also while tasks are live (their agents are killed first)",
	"kill":          "  pm kill tk-1a2b3c\n  pm kill tk-1a2b3c --restart",
	"agents":        "  pm agents\n  pm agents --all --json",
	"doctor":        "  pm doctor\n  pm doctor --json",
	"log":           "  pm log -n 20\n  pm log --kind phase -n 5\n  pm log -f --kind message\n  NO_COLOR=1 pm log",
	"requests":      "  pm requests\n  pm requests --all --json",
	"answer":        "  pm answer rq-1a2b3c \"yes, go ahead\"",
	"say":           "  pm say \"I would start with the hero section\"\n  echo \"a long reply\" | pm say -\n  pm say -- \"-1, too risky\"",
	"history":       "  pm history --tail 20",
	"prompts":       "  pm prompts\n  pm prompts --json",
	"send":          "  pm send greeter \"hello\"\n  pm send reader \"summarise README.md\" --json",
	"talk":          "  pm talk greeter",
	"demo":          "  pm demo\n  pm demo --dir /tmp/pm-demo",
	"phase":         "  pm phase Brainstorm --limit 10 --roles designer,developer\n  pm phase Review --limit 6 --roles qa --rules \"one concern per message\"",
	"extend-phase":  "  pm extend-phase 5",
	"end-phase":     "  pm end-phase",
	"subtask":       "  pm subtask \"Write the copy\" --context-file notes.md",
	"wait-children": "  pm wait-children --timeout 30m",
	"done":          "  pm done",
	"completion":    "  pm completion bash > /etc/bash_completion.d/pm\n  pm completion zsh > \"${fpath[1]}/_pm\"\n  pm completion fish > ~/.config/fish/completions/pm.fish",
}

// polishHelp adds the environment to pm --help, an example to every command
// that has none, and makes pm completion refuse a shell it does not know.
func polishHelp(root *cobra.Command) {
	root.Long += environment
	root.InitDefaultCompletionCmd()
	for _, c := range root.Commands() {
		if c.Example == "" {
			c.Example = examples[c.Name()]
		}
		switch c.Name() {
		case "completion":
			strictShells(c)
		case "send", "talk":
			lazyLong(c, poHelp)
		}
	}
}

// strictShells: cobra's completion command prints its help and exits 0 on
// an unknown shell; pm says what is wrong and exits 2.
func strictShells(c *cobra.Command) {
	var shells []string
	for _, sub := range c.Commands() {
		shells = append(shells, sub.Name())
	}
	c.Args = cobra.ArbitraryArgs
	c.RunE = func(_ *cobra.Command, args []string) error {
		try := "pm completion " + strings.Join(shells, "|")
		if len(args) == 0 {
			return errs.Usagef(try, "name a shell")
		}
		return errs.Usagef(try, "unknown shell %q", args[0])
	}
}

// lazyLong fills c.Long when c's help is shown, not when the command tree
// is built: poHelp parses every built-in prompt (YAML), which cost about half
// of every pm process's start-up when it ran for each one.
func lazyLong(c *cobra.Command, long func() string) {
	c.SetHelpFunc(func(cmd *cobra.Command, args []string) {
		cmd.Long = cmd.Short + ".\n\n" + long()
		cmd.SetHelpFunc(nil) // the inherited help, now with Long
		cmd.HelpFunc()(cmd, args)
	})
}

// poHelp lists the built-in prompt objects and says what they need to run.
func poHelp() string {
	var b strings.Builder
	b.WriteString("Prompt objects answer through a model: set OPENAI_API_KEY and PM_MODEL, or OPENAI_BASE_URL\n" +
		"(and PM_MODEL) for a local OpenAI-compatible endpoint such as Ollama.\n\nBuilt-in prompt objects (pm prompts lists the project's, overrides included):\n")
	set, err := prompt.Load(prompts.FS)
	if err != nil {
		return b.String()
	}
	for _, name := range set.Names() {
		desc, _, _ := strings.Cut(set[name].Description, "\n")
		fmt.Fprintf(&b, "  %-12s %s\n", name, desc)
	}
	return strings.TrimSuffix(b.String(), "\n")
}

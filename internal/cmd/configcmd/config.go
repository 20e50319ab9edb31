// Package configcmd implements `pm config get|set|unset|list`: config.json
// edited with validation, so no one hand-edits JSON.
package configcmd

import (
	"encoding/json"
	"fmt"
	"text/tabwriter"

	"github.com/spf13/cobra"

	"github.com/plasmodium/pm/internal/cmdutil"
	"github.com/plasmodium/pm/internal/ops"
	"github.com/plasmodium/pm/internal/render"
)

// Options are the inputs of pm config's subcommands.
type Options struct {
	Op    string // get, set, unset, list
	Key   string
	Value string
	JSON  bool
}

// NewCmd builds `pm config` and its subcommands.
func NewCmd(f *cmdutil.Factory) *cobra.Command {
	root := &cobra.Command{
		Use:   "config",
		Short: "Read and change .plasmodium/config.json, checked key by key",
		Example: `  pm config list
  pm config get runtime.exec.command
  pm config set limits.active_tasks 5
  pm config set runtime.exec.command '["sh","agent.sh"]'
  pm config unset runtime.exec.commandd`,
		Args: cobra.NoArgs,
	}
	sub := func(use, short string, args cobra.PositionalArgs, op string) *cobra.Command {
		var o Options
		c := &cobra.Command{
			Use: use, Short: short, Args: args,
			RunE: func(c *cobra.Command, args []string) error {
				o.Op = op
				if len(args) > 0 {
					o.Key = args[0]
				}
				if len(args) > 1 {
					o.Value = args[1]
				}
				return run(f, o)
			},
		}
		c.Flags().BoolVar(&o.JSON, "json", false, "print as JSON")
		return c
	}
	root.AddCommand(
		sub("list", "List every key with its value (defaults included)", cobra.NoArgs, "list"),
		sub("get KEY", "Print one key's value", cobra.ExactArgs(1), "get"),
		sub("set KEY VALUE", "Set a key (JSON, or text for a text key); the result is checked before it is written", cobra.ExactArgs(2), "set"),
		sub("unset KEY", "Remove a key from config.json so its default applies (a misspelt one too)", cobra.ExactArgs(1), "unset"),
	)
	return root
}

// session opens the store even when config.json does not load: pm config
// is how it gets repaired.
func session(f *cmdutil.Factory) (*ops.Session, error) {
	s, err := f.StoreForConfig()
	if err != nil {
		return nil, err
	}
	st, err := f.State(s)
	if err != nil {
		return nil, err
	}
	actor, err := f.Actor(st)
	if err != nil {
		return nil, err
	}
	return &ops.Session{Store: s, State: st, Actor: actor, Getenv: f.Getenv}, nil
}

func run(f *cmdutil.Factory, o Options) error {
	sess, err := session(f)
	if err != nil {
		return err
	}
	if o.Op == "list" {
		list, err := ops.ConfigList(f.Context, sess)
		if err != nil {
			return err
		}
		if o.JSON {
			return cmdutil.PrintJSON(f.IO.Out, list)
		}
		tw := tabwriter.NewWriter(f.IO.Out, 0, 4, 2, ' ', 0)
		for _, e := range list {
			fmt.Fprintf(tw, "%s\t%s\n", e.Key, render.Line(text(e.Value)))
		}
		return tw.Flush()
	}
	var e ops.ConfigEntry
	switch o.Op {
	case "get":
		e, err = ops.ConfigGet(f.Context, sess, ops.ConfigGetInput{Key: o.Key})
	case "set":
		e, err = ops.ConfigSet(f.Context, sess, ops.ConfigSetInput{Key: o.Key, Value: o.Value})
	case "unset":
		e, err = ops.ConfigUnset(f.Context, sess, ops.ConfigUnsetInput{Key: o.Key})
	}
	if err != nil {
		return err
	}
	switch {
	case o.JSON:
		return cmdutil.PrintJSON(f.IO.Out, e)
	case o.Op == "get":
		fmt.Fprintln(f.IO.Out, render.Line(text(e.Value)))
	case o.Op == "unset" && e.Value == nil:
		fmt.Fprintf(f.IO.Out, "removed %s\n", render.Line(e.Key))
	case o.Op == "unset":
		fmt.Fprintf(f.IO.Out, "removed %s; its default applies: %s\n", render.Line(e.Key), render.Line(text(e.Value)))
	default:
		fmt.Fprintf(f.IO.Out, "%s = %s\n", render.Line(e.Key), render.Line(text(e.Value)))
	}
	return nil
}

// text is a value as a person types it back: text as is, the rest as JSON.
func text(v any) string {
	if s, ok := v.(string); ok {
		return s
	}
	b, err := json.Marshal(v)
	if err != nil {
		return fmt.Sprint(v)
	}
	return string(b)
}

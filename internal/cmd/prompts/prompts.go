// Package prompts implements `pm prompts`.
package prompts

import (
	"fmt"
	"strings"
	"text/tabwriter"

	"github.com/spf13/cobra"

	"github.com/plasmodium/pm/internal/agent"
	"github.com/plasmodium/pm/internal/cmdutil"
	"github.com/plasmodium/pm/internal/store"
)

// Options are the inputs of pm prompts.
type Options struct {
	JSON bool
}

// Entry is one prompt object as listed.
type Entry struct {
	Name         string   `json:"name"`
	Description  string   `json:"description"`
	Capabilities []string `json:"capabilities"`
	Runtime      string   `json:"runtime,omitempty"`
	Source       string   `json:"source"`
	State        string   `json:"state"` // idle, working, waiting (its resident agent), or failed/killed
}

// NewCmd builds `pm prompts`.
func NewCmd(f *cmdutil.Factory) *cobra.Command {
	var o Options
	c := &cobra.Command{
		Use:   "prompts",
		Short: "List prompt objects with their capabilities and state",
		Args:  cobra.NoArgs,
		RunE:  func(c *cobra.Command, _ []string) error { return run(f, o) },
	}
	c.Flags().BoolVar(&o.JSON, "json", false, "print as JSON")
	return c
}

func run(f *cmdutil.Factory, o Options) error {
	s, err := f.Store()
	if err != nil {
		return err
	}
	set, err := agent.Prompts(s)
	if err != nil {
		return err
	}
	list := []Entry{}
	for _, name := range set.Names() {
		obj := set[name]
		caps := obj.Capabilities
		if caps == nil {
			caps = []string{}
		}
		list = append(list, Entry{Name: name, Description: obj.Description, Capabilities: caps, Runtime: obj.Runtime,
			Source: obj.Source, State: state(s, name)})
	}
	if o.JSON {
		return cmdutil.PrintJSON(f.IO.Out, list)
	}
	tw := tabwriter.NewWriter(f.IO.Out, 0, 4, 2, ' ', 0)
	fmt.Fprintln(tw, "NAME\tSTATE\tCAPABILITIES\tDESCRIPTION")
	for _, e := range list {
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\n", e.Name, e.State, strings.Join(e.Capabilities, ","), e.Description)
	}
	return tw.Flush()
}

// state is what the object's resident agent is doing; an object that has no
// running process is idle (it starts when called).
func state(s *store.Store, name string) string {
	a, err := s.Agent(name)
	if err != nil {
		return "idle"
	}
	switch {
	case a.Status == store.AgentFailed || a.Status == store.AgentKilled:
		return a.Status
	case agent.Running(a) && a.Activity != "":
		return a.Activity
	}
	return "idle"
}

// Package logcmd implements `pm log`, the bus.
package logcmd

import (
	"strings"

	"github.com/spf13/cobra"

	"github.com/plasmodium/pm/internal/bus"
	"github.com/plasmodium/pm/internal/cmdutil"
	"github.com/plasmodium/pm/internal/errs"
	"github.com/plasmodium/pm/internal/ids"
	"github.com/plasmodium/pm/internal/ops"
	"github.com/plasmodium/pm/internal/render"
	"github.com/plasmodium/pm/internal/state"
)

// Options are the inputs of pm log.
type Options struct {
	Tail   int
	Follow bool
	Kind   string
	Task   string
	JSON   bool
}

// NewCmd builds `pm log`.
func NewCmd(f *cmdutil.Factory) *cobra.Command {
	var o Options
	c := &cobra.Command{
		Use:   "log",
		Short: "Print the event bus (every task, phase, message and agent event); -f follows it",
		Args:  cobra.NoArgs,
		RunE:  func(c *cobra.Command, _ []string) error { return run(f, o) },
	}
	c.Flags().IntVarP(&o.Tail, "tail", "n", 50, "how many past events to print first")
	c.Flags().BoolVarP(&o.Follow, "follow", "f", false, "keep printing new events")
	c.Flags().StringVar(&o.Kind, "kind", "", "only events whose kind starts with this, e.g. phase or message.posted")
	c.Flags().StringVar(&o.Task, "task", "", "only events of this task (tk-...)")
	c.Flags().BoolVar(&o.JSON, "json", false, "print events as JSON lines")
	return c
}

func run(f *cmdutil.Factory, o Options) error {
	s, err := f.Store()
	if err != nil {
		return err
	}
	if err := checkKind(o.Kind); err != nil {
		return err
	}
	st, err := f.State(s) // on a hub, its bus comes with the records
	if err != nil {
		return err
	}
	if o.Task != "" {
		id, err := state.CompleteID(st, ids.Task, o.Task) // a unique prefix names its task
		if err != nil {
			return err
		}
		if _, err := st.Task(id); err != nil {
			return err
		}
		o.Task = id
	}
	b := s.Bus()
	keep := filter(o)
	p := &render.EventPrinter{W: f.IO.Out, Color: render.UseColor(f.IO.Out, f.Getenv), Width: render.Width(f.IO.Out)}
	// Tail reads backwards from the end, so a huge bus costs what is
	// printed; --kind filters before -n counts.
	past, end, err := b.TailWhere(o.Tail, keep)
	if err != nil {
		return err
	}
	for _, d := range past {
		if err := printEvent(p, d, o); err != nil {
			return err
		}
	}
	if !o.Follow {
		return nil
	}
	// Revive a supervisor that died, now and while this follows.
	l, err := f.Launcher(s)
	if err != nil {
		return err
	}
	ops.ReviveSupervisor(l, f.Getenv)
	defer ops.KeepSupervisor(f.Context, l, f.Getenv)()
	// From the end cursor: a pm reset meanwhile restarts at the new bus's start.
	for d, err := range b.Subscribe(f.Context, end) {
		if err != nil {
			return err
		}
		if keep != nil && !keep(d.Event) {
			continue
		}
		if err := printEvent(p, d, o); err != nil {
			return err
		}
	}
	return nil
}

// filter keeps the events --kind and --task ask for (nil: every event).
func filter(o Options) func(bus.Event) bool {
	if o.Kind == "" && o.Task == "" {
		return nil
	}
	return func(ev bus.Event) bool {
		return strings.HasPrefix(string(ev.Kind), o.Kind) && (o.Task == "" || ev.TaskID == o.Task)
	}
}

// checkKind refuses a --kind no event kind starts with: it would print
// nothing, forever with -f.
func checkKind(prefix string) error {
	families := map[string]bool{}
	var names []string
	for _, k := range bus.Kinds {
		if strings.HasPrefix(string(k), prefix) {
			return nil
		}
		if fam, _, _ := strings.Cut(string(k), "."); !families[fam] {
			families[fam] = true
			names = append(names, fam)
		}
	}
	return errs.Usagef("--kind takes the start of a kind: "+strings.Join(names, ", ")+" (or a whole kind such as message.posted)",
		"no event kind starts with %q", prefix)
}

func printEvent(p *render.EventPrinter, d bus.Delivery, o Options) error {
	if o.JSON {
		_, err := p.W.Write(append(d.Raw, '\n'))
		return err
	}
	return p.Print(d.Event)
}

// Package logcmd implements `pm log`, the bus.
package logcmd

import (
	"fmt"
	"io"
	"strings"

	"github.com/spf13/cobra"

	"github.com/plasmodium/pm/internal/bus"
	"github.com/plasmodium/pm/internal/cmdutil"
	"github.com/plasmodium/pm/internal/render"
)

// Options are the inputs of pm log.
type Options struct {
	Tail   int
	Follow bool
	Kind   string
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
	c.Flags().BoolVar(&o.JSON, "json", false, "print events as JSON lines")
	return c
}

func run(f *cmdutil.Factory, o Options) error {
	s, err := f.Store()
	if err != nil {
		return err
	}
	b := s.Bus()
	// Tail reads backwards from the end, so a huge bus costs what is printed.
	past, end, err := b.Tail(o.Tail)
	if err != nil {
		return err
	}
	for _, d := range past {
		if err := printEvent(f.IO.Out, d, o); err != nil {
			return err
		}
	}
	if !o.Follow {
		return nil
	}
	// From the end cursor: a pm reset meanwhile restarts at the new bus's start.
	for d, err := range b.Subscribe(f.Context, end) {
		if err != nil {
			return err
		}
		if err := printEvent(f.IO.Out, d, o); err != nil {
			return err
		}
	}
	return nil
}

func printEvent(w io.Writer, d bus.Delivery, o Options) error {
	ev := d.Event
	if o.Kind != "" && !strings.HasPrefix(string(ev.Kind), o.Kind) {
		return nil
	}
	if o.JSON {
		_, err := w.Write(append(d.Raw, '\n'))
		return err
	}
	ids := strings.TrimSpace(strings.Join([]string{ev.TaskID, ev.PhaseID, ev.Agent}, " "))
	text := ev.Text
	if len(text) > 200 {
		text = strings.ToValidUTF8(text[:200], "") + "…" // cut on a rune boundary
	}
	text = render.Terminal(strings.ReplaceAll(text, "\n", " ")) // agent-written: escape controls
	_, err := fmt.Fprintf(w, "%s %-16s %-12s %s  %s\n", ev.Time.Local().Format("15:04:05.000"), render.Line(ev.Kind), render.Line(ev.Actor), render.Line(ids), text)
	return err
}

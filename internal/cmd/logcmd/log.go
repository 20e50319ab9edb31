// Package logcmd implements `pm log`, the bus.
package logcmd

import (
	"encoding/json"
	"fmt"
	"io"
	"strings"

	"github.com/spf13/cobra"

	"github.com/plasmodium/pm/internal/cmdutil"
	"github.com/plasmodium/pm/internal/jsonl"
	"github.com/plasmodium/pm/internal/render"
	"github.com/plasmodium/pm/internal/store"
	"github.com/plasmodium/pm/internal/watch"
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
	print := func(raw []byte) error { return printEvent(f.IO.Out, raw, o) }
	// Tail reads backwards from the end, so a huge bus costs what is printed.
	lines, end, err := jsonl.Tail(s.EventsPath(), o.Tail, s.BadLine)
	if err != nil {
		return err
	}
	for _, l := range lines {
		if err := print(l); err != nil {
			return err
		}
	}
	if !o.Follow {
		return nil
	}
	r := &jsonl.Reader{Path: s.EventsPath(), Offset: end, Bad: s.BadLine}
	return watch.Lines(f.Context, r, print, nil)
}

func printEvent(w io.Writer, raw []byte, o Options) error {
	var ev store.Event
	if err := json.Unmarshal(raw, &ev); err != nil {
		return nil
	}
	if o.Kind != "" && !strings.HasPrefix(ev.Kind, o.Kind) {
		return nil
	}
	if o.JSON {
		_, err := w.Write(append(raw, '\n'))
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

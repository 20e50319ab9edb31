// Package chat implements `pm chat`.
package chat

import (
	"fmt"

	"github.com/spf13/cobra"

	"github.com/plasmodium/pm/internal/cmdutil"
	"github.com/plasmodium/pm/internal/errs"
	"github.com/plasmodium/pm/internal/lite"
	"github.com/plasmodium/pm/internal/ops"
	"github.com/plasmodium/pm/internal/phase"
	"github.com/plasmodium/pm/internal/render"
	"github.com/plasmodium/pm/internal/state"
	"github.com/plasmodium/pm/internal/store"
)

// Options are the inputs of pm chat.
type Options struct {
	Phase  string
	Task   string
	Follow bool
	Wait   bool
	JSON   bool
}

// NewCmd builds `pm chat`.
func NewCmd(f *cmdutil.Factory) *cobra.Command {
	var o Options
	c := &cobra.Command{
		Use:   "chat",
		Short: "Read the current phase's messages (read the room)",
		Long: "Read the current phase's messages.\n\n--follow streams new messages as they land and exits when the phase closes.\n" +
			"--wait blocks until someone else posts, prints what is new since you last read, and exits\n(exit 5 if the phase closes first): the turn-by-turn form for agent CLIs.",
		Args: cobra.NoArgs,
		RunE: func(c *cobra.Command, _ []string) error {
			if o.Follow && o.Wait {
				return errs.Usagef("pick one", "--follow and --wait do not go together")
			}
			if o.Task != "" && (!o.Follow || o.Phase != "") {
				return errs.Usagef("pm chat --follow --task tk-...", "--task goes with --follow and without --phase")
			}
			return run(f, o)
		},
	}
	c.Flags().StringVar(&o.Phase, "phase", "", "phase to read (default: yours, or the only active one)")
	c.Flags().StringVar(&o.Task, "task", "", "with --follow: the task whose phase to follow, waiting for it to open one")
	c.Example = `  pm chat                           # the room so far
  pm chat --follow                  # stream it until it closes (waits for a phase to open)
  pm chat --follow --task tk-1a2b3c # that task's next phase
  pm chat --wait                    # block until someone else posts`
	c.Flags().BoolVarP(&o.Follow, "follow", "f", false, "keep printing new messages until the phase closes")
	c.Flags().BoolVar(&o.Wait, "wait", false, "block until there is a new message from someone else, print the new ones, exit")
	c.Flags().BoolVar(&o.JSON, "json", false, "print messages as JSON lines")
	return c
}

func run(f *cmdutil.Factory, o Options) error {
	sess, err := f.Session()
	if err != nil {
		return err
	}
	if o.Follow {
		return follow(f, sess, o)
	}
	if o.Wait {
		res, err := ops.Chat(f.Context, sess, ops.ChatInput{Phase: o.Phase, Wait: true})
		for _, raw := range res.Lines {
			if perr := printRaw(f, o.JSON, raw); perr != nil {
				return perr
			}
		}
		return err
	}
	return lite.Chat(f.IO.Out, f.IO.ErrOut, sess.Store, sess.State, sess.Actor, o.Phase, o.JSON)
}

// follow prints the phase's messages as they land until it closes.
func follow(f *cmdutil.Factory, sess *ops.Session, o Options) error {
	s, st, actor := sess.Store, sess.State, sess.Actor
	defer sess.KeepSupervisor(f.Context)()
	ph, err := followed(f, sess, o)
	if err != nil {
		return err
	}
	print := func(raw []byte) error { return printRaw(f, o.JSON, raw) }
	closed := func() (bool, error) {
		p, err := st.Phase(ph.TaskID, ph.ID)
		if err != nil {
			return false, err
		}
		*ph = *p
		return p.Status != store.PhaseActive, nil
	}
	// Followed by position from the room's first message (state.Phases.
	// FollowRoom: inotify on the files, a consumer on a hub).
	n, err := st.FollowRoom(f.Context, ph.TaskID, ph.ID, 0, closed, print)
	if err != nil {
		return err
	}
	phase.MarkSeen(s, st, actor, ph, n)
	if !o.JSON {
		fmt.Fprintf(f.IO.ErrOut, "-- phase closed: %s\n", render.PhaseLine(ph, n))
	}
	return nil
}

func printRaw(f *cmdutil.Factory, asJSON bool, raw []byte) error {
	if asJSON {
		_, err := f.IO.Out.Write(append(raw, '\n'))
		return err
	}
	m, err := store.DecodeMessage(raw)
	if err != nil {
		return nil
	}
	render.PrintMessage(f.IO.Out, m)
	return nil
}

// followed is the phase --follow streams: the named one, else the task's
// active phase, else (none open yet) the next one the task opens.
func followed(f *cmdutil.Factory, sess *ops.Session, o Options) (*store.Phase, error) {
	if o.Task == "" {
		ph, err := phase.Resolve(sess.Store, sess.State, sess.Actor, o.Phase)
		if o.Phase != "" || !errs.Is(err, errs.State) {
			return ph, err
		}
	}
	t, err := ops.ResolveTask(sess.Store, sess.State, sess.Actor, o.Task)
	if err != nil {
		return nil, err
	}
	if ph, err := state.ActivePhase(sess.State, t.ID); err != nil || ph != nil {
		return ph, err
	}
	if !o.JSON {
		fmt.Fprintf(f.IO.ErrOut, "-- waiting for %s to open a phase\n", t.ID)
	}
	return ops.WaitPhase(f.Context, sess, t.ID)
}

// Package mergecmd implements `pm merge`, `pm reject` and `pm diff`: the
// human's decisions on a task's branch (docs/spec.md, "Worktrees").
package mergecmd

import (
	"fmt"
	"io"
	"strings"

	"github.com/spf13/cobra"

	"github.com/plasmodium/pm/internal/cmdutil"
	"github.com/plasmodium/pm/internal/ops"
	"github.com/plasmodium/pm/internal/render"
)

// NewMergeCmd builds `pm merge`.
func NewMergeCmd(f *cmdutil.Factory) *cobra.Command {
	var in ops.MergeInput
	var asJSON bool
	c := &cobra.Command{
		Use:   "merge tk-...",
		Short: "Merge a task whose merge waits (review, conflict, local changes) into its branch",
		Args:  cobra.ExactArgs(1),
		RunE: func(c *cobra.Command, args []string) error {
			in.Task = args[0]
			sess, err := f.Session()
			if err != nil {
				return err
			}
			res, err := ops.MergeTask(f.Context, sess, in)
			if err != nil {
				return err
			}
			if asJSON {
				return cmdutil.PrintJSON(f.IO.Out, res)
			}
			m := res.Merge
			how := "merged"
			if m.FastForward {
				how = "fast-forwarded"
			}
			fmt.Fprintf(f.IO.Out, "%s %s into %s: %s (%s)\n", res.Task.ID, how, res.Task.IntoName(), short(m.Hash), render.Plural(len(m.Merged), "file"))
			if len(res.Unblocked) > 0 {
				fmt.Fprintf(f.IO.Out, "unblocked %s\n", strings.Join(res.Unblocked, ", "))
			}
			return nil
		},
		Example: "  pm merge tk-1a2b3c\n  pm merge tk-1a2b3c --theirs   # conflicting files: the task's version",
	}
	c.Flags().BoolVar(&in.Theirs, "theirs", false, "settle conflicting files with the task's version")
	c.Flags().BoolVar(&in.Ours, "ours", false, "settle conflicting files with the version of the branch merged into")
	c.Flags().BoolVar(&asJSON, "json", false, "print the result as JSON")
	return c
}

// NewRejectCmd builds `pm reject`.
func NewRejectCmd(f *cmdutil.Factory) *cobra.Command {
	var asJSON bool
	c := &cobra.Command{
		Use:     `reject tk-... "why"`,
		Short:   "Send a task's work back to its owner with the reason; it works on",
		Args:    cobra.ExactArgs(2),
		Example: `  pm reject tk-1a2b3c "the form does not validate the email"`,
		RunE: func(c *cobra.Command, args []string) error {
			sess, err := f.Session()
			if err != nil {
				return err
			}
			t, err := ops.RejectTask(f.Context, sess, ops.RejectInput{Task: args[0], Why: args[1]})
			if err != nil {
				return err
			}
			if asJSON {
				return cmdutil.PrintJSON(f.IO.Out, t)
			}
			fmt.Fprintf(f.IO.Out, "%s %s: owner @%s works on with the reason\n", t.ID, t.Status, t.Owner)
			return nil
		},
	}
	c.Flags().BoolVar(&asJSON, "json", false, "print the task as JSON")
	return c
}

// NewDiffCmd builds `pm diff`.
func NewDiffCmd(f *cmdutil.Factory) *cobra.Command {
	var asJSON, stat bool
	c := &cobra.Command{
		Use:     "diff tk-...",
		Short:   "Show a task's changes against where its branch started (stat and patch)",
		Args:    cobra.ExactArgs(1),
		Example: "  pm diff tk-1a2b3c\n  pm diff tk-1a2b3c --stat",
		RunE: func(c *cobra.Command, args []string) error {
			sess, err := f.Session()
			if err != nil {
				return err
			}
			res, err := ops.TaskDiff(f.Context, sess, ops.DiffInput{Task: args[0]})
			if err != nil {
				return err
			}
			if asJSON {
				return cmdutil.PrintJSON(f.IO.Out, res)
			}
			printDiff(f.IO.Out, res, stat, render.UseColor(f.IO.Out, f.Getenv))
			return nil
		},
	}
	c.Flags().BoolVar(&stat, "stat", false, "the stat only")
	c.Flags().BoolVar(&asJSON, "json", false, "print the diff as JSON")
	return c
}

// printDiff writes git's --stat then the patch, escaped (the content is
// an agent's), coloured on a terminal.
func printDiff(w io.Writer, res ops.DiffResult, stat, color bool) {
	paint := func(code, s string) string {
		if !color {
			return s
		}
		return "\x1b[" + code + "m" + s + "\x1b[0m"
	}
	fmt.Fprintf(w, "%s: %s since %s (%s)\n", res.Task, strings.TrimPrefix(res.Branch, "refs/heads/"), short(res.Base), strings.TrimPrefix(res.Into, "refs/heads/"))
	added, deleted := 0, 0
	for _, d := range res.Files {
		added, deleted = added+d.Added, deleted+d.Deleted
		change := fmt.Sprintf("%d", d.Added+d.Deleted)
		if d.Binary {
			change = "Bin"
		}
		fmt.Fprintf(w, " %s | %s %s%s\n", render.Line(d.Path), change, paint("32", strings.Repeat("+", min(d.Added, 40))), paint("31", strings.Repeat("-", min(d.Deleted, 40))))
	}
	fmt.Fprintf(w, " %s changed, %d insertions(+), %d deletions(-)\n", render.Plural(len(res.Files), "file"), added, deleted)
	if res.Uncommitted {
		fmt.Fprintln(w, " (the task is still working: this is its worktree as pm done would commit it now)")
	}
	if stat {
		return
	}
	for _, d := range res.Files {
		fmt.Fprintln(w)
		if d.Binary {
			fmt.Fprintf(w, "Binary file %s %s\n", render.Line(d.Path), d.Status)
			continue
		}
		for _, l := range strings.Split(strings.TrimSuffix(render.Terminal(d.Patch), "\n"), "\n") {
			switch {
			case strings.HasPrefix(l, "+++") || strings.HasPrefix(l, "---"):
				l = paint("1", l)
			case strings.HasPrefix(l, "@@"):
				l = paint("36", l)
			case strings.HasPrefix(l, "+"):
				l = paint("32", l)
			case strings.HasPrefix(l, "-"):
				l = paint("31", l)
			}
			fmt.Fprintln(w, l)
		}
	}
}

func short(h string) string {
	if len(h) > 7 {
		return h[:7]
	}
	if h == "" {
		return "the start"
	}
	return h
}

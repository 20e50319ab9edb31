// Package designcmd implements `pm design` and `pm designs`: the code
// designer's loop over one file (internal/design through ops.Design).
package designcmd

import (
	"fmt"
	"io"
	"path/filepath"
	"strings"

	"github.com/spf13/cobra"

	"github.com/plasmodium/pm/internal/cmdutil"
	"github.com/plasmodium/pm/internal/design"
	"github.com/plasmodium/pm/internal/errs"
	"github.com/plasmodium/pm/internal/ops"
	"github.com/plasmodium/pm/internal/render"
)

// Options are the inputs of pm design.
type Options struct {
	Goal      string
	Angles    []string
	MaxPasses int
	Test      string
	Resume    string
	Eval      string
	Apply     bool
	Yes       bool
	JSON      bool
}

// NewCmd builds `pm design`.
func NewCmd(f *cmdutil.Factory) *cobra.Command {
	var o Options
	c := &cobra.Command{
		Use:   `design FILE --goal "..." | design --resume ds-ID | design --eval DIR`,
		Short: "Review and improve a file from several angles until the reviews converge (code designer)",
		Long: "pm design reviews a temporary copy of FILE unit by unit (Go declarations, or blank-line blocks):\n" +
			"each pass, every angle (correctness, efficiency, style, security, ...) reviews the unit through the\n" +
			"worker model, the supervisor model decides what the worker changes, until two passes in a row change\n" +
			"nothing and find the same issues, or --max-passes. It prints a report and the diff; --apply writes\n" +
			"the result back after asking (--yes: without asking). State: .plasmodium/designs/ds-ID/.",
		Args: cobra.MaximumNArgs(1),
		RunE: func(c *cobra.Command, args []string) error {
			if err := checkFlags(c.Flags().Changed, o, args); err != nil {
				return err
			}
			return run(f, o, args)
		},
	}
	c.Flags().StringVar(&o.Goal, "goal", "", "what the code must do; the reviews judge it against this")
	c.Flags().StringSliceVar(&o.Angles, "angles", nil, "angles to review from, comma-separated (default: all)")
	c.Flags().IntVar(&o.MaxPasses, "max-passes", 0, "most passes per unit, 1 to 100 (default 8, or code_designer.max_passes)")
	c.Flags().StringVar(&o.Test, "test", "", "a shell command the supervisor may run (tool test), sandboxed, as if FILE had the candidate content (e.g. \"go test ./...\")")
	c.Flags().StringVar(&o.Resume, "resume", "", "go on with an interrupted design (or show a finished one)")
	c.Flags().StringVar(&o.Eval, "eval", "", "measure: fix the seeded bug of each program in DIR with the mode off and on (see docs/benchmarks.md)")
	c.Flags().BoolVar(&o.Apply, "apply", false, "write the result back to FILE after showing the diff and asking")
	c.Flags().BoolVar(&o.Yes, "yes", false, "with --apply: do not ask")
	c.Flags().BoolVar(&o.JSON, "json", false, "print the report as JSON")
	return c
}

// checkFlags refuses, before anything is read or created, a flag the mode
// does not use (silently ignoring it would run something else than what
// was asked) and a flag given an empty or out-of-range value. changed says
// whether a flag was given (--max-passes 0 given is refused; left out, 0
// is the default).
func checkFlags(changed func(string) bool, o Options, args []string) error {
	if changed("max-passes") && (o.MaxPasses < 1 || o.MaxPasses > ops.MaxDesignPasses) {
		return ops.MaxPassesError(o.MaxPasses)
	}
	if changed("angles") && !hasAngle(o.Angles) {
		return errs.Usagef("pm design ... --angles correctness,security (or leave --angles out for all)", "--angles names no angle, or an empty one: %q", strings.Join(o.Angles, ","))
	}
	if changed("eval") {
		if strings.TrimSpace(o.Eval) == "" {
			return errs.Usagef("pm design --eval testdata/designer-eval", "--eval needs a directory of programs")
		}
		if len(args) > 0 || o.Resume != "" || o.Apply || o.Yes || changed("goal") || changed("test") {
			return errs.Usagef("pm design --eval DIR [--angles ...] [--max-passes N] [--json]", "--eval takes no FILE, --goal, --test, --resume, --apply or --yes: each program has its own goal, and its own go test judges the fix")
		}
		return nil
	}
	if changed("test") && strings.TrimSpace(o.Test) == "" {
		return errs.Usagef(`give the command the supervisor may run, e.g. --test "go test ./...", or leave --test out`, "--test is empty")
	}
	if o.Yes && !o.Apply {
		return errs.Usagef(`pm design FILE --goal "..." --apply --yes (or pm design --resume ds-ID --apply --yes)`, "--yes goes with --apply: it answers --apply's question")
	}
	if o.Resume != "" && (changed("goal") || changed("angles") || changed("max-passes") || changed("test")) {
		return errs.Usagef("pm design --resume "+o.Resume+" (or a new design: pm design FILE --goal ...)", "--resume takes no --goal, --angles, --max-passes or --test: the design keeps the ones it started with")
	}
	return nil
}

// hasAngle reports a list of angle names with none empty.
func hasAngle(names []string) bool {
	for _, n := range names {
		if strings.TrimSpace(n) == "" {
			return false
		}
	}
	return len(names) > 0
}

func run(f *cmdutil.Factory, o Options, args []string) error {
	if o.Eval != "" {
		return runEval(f, o, args)
	}
	in := ops.DesignInput{Goal: o.Goal, Angles: o.Angles, MaxPasses: o.MaxPasses, Test: o.Test, Resume: o.Resume,
		Progress: func(e design.Entry) { progress(f.IO.ErrOut, e) }}
	switch {
	case o.Resume != "" && len(args) > 0:
		return errs.Usagef("pm design --resume ds-ID (the design knows its file)", "give FILE or --resume, not both")
	case o.Resume == "" && len(args) == 0:
		return errs.Usagef(`pm design FILE --goal "what the code must do"`, "name the file to design")
	case len(args) == 1:
		wd, err := f.Getwd()
		if err != nil {
			return err
		}
		in.File = args[0]
		if !filepath.IsAbs(in.File) {
			in.File = filepath.Join(wd, in.File)
		}
	}
	sess, err := f.Session()
	if err != nil {
		return err
	}
	res, err := ops.Design(f.Context, sess, in)
	if res != nil {
		if perr := printReport(f, o, res); perr != nil {
			return perr
		}
	}
	if err != nil {
		return err
	}
	if !o.Apply {
		if res.Report.Diff != "" {
			fmt.Fprintf(f.IO.ErrOut, "apply with: pm design --resume %s --apply\n", res.Report.ID)
		}
		return nil
	}
	return apply(f, o, sess, res.Report.ID, res.Report.Diff)
}

func printReport(f *cmdutil.Factory, o Options, res *ops.DesignResult) error {
	if o.JSON {
		return cmdutil.PrintJSON(f.IO.Out, res.Report)
	}
	fmt.Fprint(f.IO.Out, render.Terminal(res.Report.Markdown()))
	if res.Report.Diff != "" {
		fmt.Fprintf(f.IO.Out, "\n## Diff\n\n%s", render.Terminal(res.Report.Diff))
	} else {
		fmt.Fprintln(f.IO.Out, "\nNo changes.")
	}
	return nil
}

// apply asks before writing the design back: y/N on a terminal, --yes in a
// script; with neither it refuses and changes nothing.
func apply(f *cmdutil.Factory, o Options, sess *ops.Session, id, diff string) error {
	if diff == "" {
		fmt.Fprintln(f.IO.ErrOut, "nothing to apply: the design changed nothing")
		return nil
	}
	if !o.Yes {
		yes, asked := f.Confirm(fmt.Sprintf("Apply design %s to the file?", id))
		if !asked {
			return errs.Usagef("pm design --resume "+id+" --apply --yes", "not applied: --apply asks for confirmation and there is no terminal to ask on")
		}
		if !yes {
			fmt.Fprintln(f.IO.ErrOut, "not applied")
			return nil
		}
	}
	if err := ops.DesignApply(f.Context, sess, id); err != nil {
		return err
	}
	fmt.Fprintf(f.IO.ErrOut, "applied design %s\n", id)
	return nil
}

// progress prints one line per step on stderr, so a long design shows it
// is moving; the report is on stdout.
func progress(w io.Writer, e design.Entry) {
	switch e.Kind {
	case design.EntryResponse:
		r := e.Response
		fmt.Fprintf(w, "unit %d pass %d: %s %s (%s, %d tokens, %dms)\n", e.Unit, e.Pass, r.RequestID, r.Status, render.Line(r.Metrics.Model), r.Metrics.TokensUsed, r.Metrics.DurationMS)
	case design.EntryPlan:
		fmt.Fprintf(w, "unit %d pass %d: supervisor plans %s\n", e.Unit, e.Pass, render.Line(string(e.Plan.Type)))
	case design.EntryState:
		fmt.Fprintf(w, "design: %s\n", e.Status)
	}
}

// NewListCmd builds `pm designs`.
func NewListCmd(f *cmdutil.Factory) *cobra.Command {
	var asJSON bool
	c := &cobra.Command{
		Use:   "designs",
		Short: "List code designs (pm design) and how each ended",
		Args:  cobra.NoArgs,
		RunE: func(c *cobra.Command, _ []string) error {
			sess, err := f.Session()
			if err != nil {
				return err
			}
			ds, err := ops.Designs(f.Context, sess)
			if err != nil {
				return err
			}
			if asJSON {
				return cmdutil.PrintJSON(f.IO.Out, ds)
			}
			if len(ds) == 0 {
				fmt.Fprintln(f.IO.Out, "no designs yet")
				return nil
			}
			for _, d := range ds {
				state := string(d.Status)
				if d.Outcome != "" {
					state += " (" + string(d.Outcome) + ")"
				}
				fmt.Fprintf(f.IO.Out, "%s %-26s %s  %d/%d units changed  %s\n", d.ID, state, render.Line(d.File), d.Modified, d.Units, render.Line(d.Goal))
			}
			return nil
		},
	}
	c.Flags().BoolVar(&asJSON, "json", false, "print as JSON")
	return c
}

// runEval runs pm design --eval DIR.
func runEval(f *cmdutil.Factory, o Options, _ []string) error {
	sess, err := f.Session()
	if err != nil {
		return err
	}
	rep, err := ops.DesignEval(f.Context, sess, ops.DesignEvalInput{Dir: o.Eval, Angles: o.Angles, MaxPasses: o.MaxPasses})
	if err != nil {
		return err
	}
	if o.JSON {
		return cmdutil.PrintJSON(f.IO.Out, rep)
	}
	fmt.Fprint(f.IO.Out, render.Terminal(rep.Text()))
	return nil
}

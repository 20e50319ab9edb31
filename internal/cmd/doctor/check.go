package doctor

import (
	"fmt"

	"github.com/plasmodium/pm/internal/check"
	"github.com/plasmodium/pm/internal/cmdutil"
	"github.com/plasmodium/pm/internal/errs"
	"github.com/plasmodium/pm/internal/render"
)

// CheckResult is pm doctor --check --json.
type CheckResult struct {
	OK       bool            `json:"ok"`
	Findings []check.Finding `json:"findings"`
	// NotChecked is what does not apply to this project (check.NotChecked:
	// on a hub, what needs another machine, and the files' caches).
	NotChecked []string `json:"not_checked,omitempty"`
	// Fixed says what --fix did, one line each.
	Fixed []string `json:"fixed,omitempty"`
}

// runCheck is pm doctor --check. It opens the store without a session: a
// session would revive a dead supervisor before the check could see it.
// On a hub it checks the hub's records and says what it does not check.
func runCheck(f *cmdutil.Factory, o Options) error {
	s, err := f.Store()
	if err != nil {
		return err
	}
	st, err := f.State(s)
	if err != nil {
		return err
	}
	found, err := check.Run(s, st)
	if err != nil {
		return err
	}
	if found == nil {
		found = []check.Finding{}
	}
	skipped := check.NotChecked(s)
	var fixed []string
	if o.Fix {
		if fixed, err = fix(f, s, found); err != nil {
			return err
		}
	}
	if o.JSON {
		if err := cmdutil.PrintJSON(f.IO.Out, CheckResult{OK: len(found) == 0, Findings: found, NotChecked: skipped, Fixed: fixed}); err != nil {
			return err
		}
	} else {
		for _, fd := range found {
			fmt.Fprintf(f.IO.Out, "%s  %s  %s\n", fd.Kind, render.Line(fd.Subject), render.Line(fd.Text))
		}
		switch {
		case len(found) == 0 && skipped != nil:
			fmt.Fprintf(f.IO.Out, "the hub's records: nothing stranded; this machine: no orphan process (project %s on %s)\n", s.Config().Store.Project, s.Config().Store.URL)
		case len(found) == 0:
			fmt.Fprintln(f.IO.Out, "nothing stranded, no orphan process, counts equal to the logs")
		}
		for _, line := range skipped {
			fmt.Fprintf(f.IO.Out, "not checked on a hub: %s\n", line)
		}
		for _, line := range fixed {
			fmt.Fprintf(f.IO.Out, "fix: %s\n", render.Line(line))
		}
	}
	if len(found) > 0 && fixed != nil {
		return errs.Failf("pm doctor --check again once the supervisor or the workers have looked",
			"%s found", render.Plural(len(found), "problem"))
	}
	if len(found) > 0 {
		return errs.Failf("any pm command repairs what it sees and revives the supervisor (pm status); pm kill tk-... --restart starts a task afresh",
			"%s found", render.Plural(len(found), "problem"))
	}
	return nil
}

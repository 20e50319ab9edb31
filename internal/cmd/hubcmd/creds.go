package hubcmd

import (
	"fmt"
	"os"
	"path/filepath"
	"text/tabwriter"

	"github.com/spf13/cobra"

	"github.com/plasmodium/pm/internal/cmdutil"
	"github.com/plasmodium/pm/internal/errs"
	"github.com/plasmodium/pm/internal/hubauth"
)

// credsOptions are the inputs of pm hub creds.
type credsOptions struct {
	Store, Project, Name, Out string
	Revoke, List              bool
}

// newCredsCmd builds `pm hub creds`: it runs here (it signs files; it
// needs no server), on a machine that holds the hub's store.
func newCredsCmd(f *cmdutil.Factory) *cobra.Command {
	var o credsOptions
	c := &cobra.Command{
		Use:   "creds --project P --name MACHINE [--out FILE]",
		Short: "Issue (or --revoke, --list) a machine's credential for one project of a hub run with --accounts",
		Long: `pm hub creds gives one machine its own credential for one project of a hub run
with --accounts: a NATS credentials file (mode 0600, never written over an
existing file) for a user of the project's own account, which reaches that
project's records and nothing of any other project's. Run it where the hub's
store is (--store, as pm hub's); the running hub takes a new project and a
revocation at once, without a restart.

  pm hub creds --project web-3f9a2c --name gpu-1          writes ./web-3f9a2c-gpu-1.creds
  pm hub creds --revoke --project web-3f9a2c --name gpu-1 cuts gpu-1 off (its connections closed)
  pm hub creds --list                                      projects, machines, revoked ones

On the machine: pm init --store nats://HUB:4222 --creds web-3f9a2c-gpu-1.creds
(see docs/distributed.md).`,
		Args: cobra.NoArgs,
		RunE: func(c *cobra.Command, _ []string) error { return runCreds(f, o) },
	}
	c.Flags().StringVar(&o.Store, "store", "", "the hub's store directory, as given to pm hub (default: $XDG_DATA_HOME/pm/hub, else ~/.local/share/pm/hub)")
	c.Flags().StringVar(&o.Project, "project", "", "the project (its name on the hub; a new one gets its account)")
	c.Flags().StringVar(&o.Name, "name", "", "the machine's name, unique in the project")
	c.Flags().StringVar(&o.Out, "out", "", "the credentials file to write (default: ./PROJECT-NAME.creds)")
	c.Flags().BoolVar(&o.Revoke, "revoke", false, "revoke the machine's credential instead")
	c.Flags().BoolVar(&o.List, "list", false, "list the projects and their machines instead (--project: that one)")
	return c
}

func runCreds(f *cmdutil.Factory, o credsOptions) error {
	if o.Revoke && o.List {
		return errs.Usagef("give --revoke or --list, not both", "pm hub creds: --revoke with --list")
	}
	if !o.List && (o.Project == "" || o.Name == "") {
		return errs.Usagef("pm hub creds --project P --name MACHINE", "pm hub creds: --project and --name are required")
	}
	if !o.List {
		if err := hubauth.CheckNames(o.Project, o.Name); err != nil {
			return err
		}
	}
	store, err := StoreDir(f, o.Store)
	if err != nil {
		return err
	}
	// A whole authority only (the hub made it, or it was copied whole):
	// one made or completed here would be trusted by no node of the hub.
	// With the resolver of this node's hub: a revocation keeps those it
	// learned from the others.
	a, err := hubauth.OpenStore(store)
	if err != nil {
		return err
	}
	switch {
	case o.List:
		return listCreds(f, a, o.Project)
	case o.Revoke:
		if err := a.Revoke(o.Project, o.Name, f.Now()); err != nil {
			return err
		}
		fmt.Fprintf(f.IO.Out, "Revoked %s's credential for project %s: a running hub with --accounts --store %s closes its connections now.\n", o.Name, o.Project, store)
		return nil
	}
	return issueCreds(f, a, o, store)
}

// issueCreds writes a new credential to a file that did not exist: an
// existing file (another machine's credential, say) is never replaced.
func issueCreds(f *cmdutil.Factory, a *hubauth.Authority, o credsOptions, store string) error {
	out := o.Out
	if out == "" {
		out = o.Project + "-" + o.Name + ".creds"
	}
	if !filepath.IsAbs(out) {
		wd, err := f.Getwd()
		if err != nil {
			return err
		}
		out = filepath.Join(wd, out)
	}
	if _, err := os.Lstat(out); err == nil {
		return errs.Statef("give --out a new file, or remove "+out, "pm hub creds: %s exists", out)
	}
	// The file is made (never over an existing one) before anything is
	// issued, and the machine is recorded only once its credential is
	// written whole and synced (IssueTo): a file that cannot be written
	// leaves no credential issued and the name free.
	file, err := os.OpenFile(out, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o600)
	if err != nil {
		return errs.Failf("give --out a file in a directory you can write", "pm hub creds: %v", err)
	}
	closed := false // by deliver, which IssueTo may not reach
	err = a.IssueTo(o.Project, o.Name, out, f.Now(), func(creds []byte) error {
		_, err := file.Write(creds)
		if err == nil {
			err = file.Sync()
		}
		if cerr := file.Close(); err == nil {
			err = cerr
		}
		closed = true
		if err != nil {
			return errs.Failf("give --out a file on a disk with room (and no file size limit), then run pm hub creds again",
				"pm hub creds: %v (nothing issued)", err)
		}
		return nil
	})
	if !closed {
		file.Close()
	}
	if err != nil {
		os.Remove(out)
		return err
	}
	fmt.Fprintf(f.IO.Out, "Wrote %s's credential for project %s to %s (mode 0600; it is %s's alone: move it there, keep it out of agents' reach).\n",
		o.Name, o.Project, out, o.Name)
	fmt.Fprintf(f.IO.Out, "On %s: pm init --store nats://HUB:4222 --creds %s\n", o.Name, filepath.Base(out))
	fmt.Fprintf(f.IO.Out, "Revoke it: pm hub creds --revoke --project %s --name %s --store %s\n", o.Project, o.Name, store)
	return nil
}

func listCreds(f *cmdutil.Factory, a *hubauth.Authority, only string) error {
	accs, err := a.Accounts()
	if err != nil {
		return err
	}
	w := tabwriter.NewWriter(f.IO.Out, 0, 4, 2, ' ', 0)
	fmt.Fprintln(w, "PROJECT\tMACHINE\tISSUED\tREVOKED")
	found := false
	for _, acc := range accs {
		if only != "" && acc.Project != only {
			continue
		}
		found = true
		ms, err := a.Machines(acc.Project)
		if err != nil {
			return err
		}
		for _, m := range ms {
			revoked := "-"
			if !m.Revoked.IsZero() {
				revoked = m.Revoked.Format("2006-01-02 15:04:05Z")
			}
			fmt.Fprintf(w, "%s\t%s\t%s\t%s\n", acc.Project, m.Name, m.Issued.Format("2006-01-02 15:04:05Z"), revoked)
		}
	}
	if only != "" && !found {
		return errs.NotFoundf("pm hub creds --list shows every project", "the hub has no accounts for project %s", only)
	}
	return w.Flush()
}

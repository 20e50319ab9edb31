// Package serve runs `pm hub` in the pm-hub executable: the embedded
// server (internal/hub) for hubcmd's options, until interrupted.
package serve

import (
	"fmt"

	"github.com/plasmodium/pm/internal/cmd/hubcmd"
	"github.com/plasmodium/pm/internal/cmdutil"
	"github.com/plasmodium/pm/internal/hub"
	"github.com/plasmodium/pm/internal/hubauth"
)

// Run starts the node, prints its URL and serves until f.Context ends.
func Run(f *cmdutil.Factory, o hubcmd.Options, _ []string) error {
	store, err := hubcmd.StoreDir(f, o.Store)
	if err != nil {
		return err
	}
	auth := hub.Auth{User: o.User, NKeys: o.NKeys, TLSCert: o.TLSCert, TLSKey: o.TLSKey, TLSCA: o.TLSCA}
	if o.Accounts {
		auth.Accounts = true
		auth.NewAccounts = o.NewAccounts
	} else if hubauth.Status(store) == hubauth.Whole {
		// Credentials from pm hub creds are not accepted by a hub with
		// shared credentials: say so, or their machines only see refusals.
		fmt.Fprintf(f.IO.ErrOut, "pm hub: %s holds machines' credentials (pm hub creds), but this hub runs without --accounts: they are refused\n",
			hubauth.Path(store))
	}
	if o.User != "" {
		auth.Password = f.Getenv(hubcmd.PasswordEnv)
	}
	h, err := hub.Start(hub.Config{Name: o.Name, StoreDir: store, Listen: o.Listen, Cluster: o.Cluster,
		ClusterName: o.ClusterName, Routes: o.Routes, Auth: auth, Log: f.IO.ErrOut})
	if err != nil {
		return err
	}
	defer h.Close()
	durability := "single node, every write synced to disk"
	if h.Clustered() {
		durability = fmt.Sprintf("node %s of cluster %s, routes on %s, streams replicated to three nodes", h.Name(), h.ClusterName(), h.ClusterAddr())
	}
	fmt.Fprintf(f.IO.Out, "pm hub: %s (%s; %s; store %s)\n", h.ClientURL(), durability, auth.Describe(), store)
	<-f.Context.Done()
	return nil
}

// Package hubcmd implements `pm hub`: pm's engine for several machines, an
// embedded NATS JetStream server (internal/hub), run until interrupted.
//
// The server runs in its own executable, pm-hub, beside pm and pm-full:
// nats-server's packages cost every process that links them start-up
// time and a timer that samples /proc once a second for its whole life
// (server/pse), which pm-full's short commands, the supervisor and every
// agent host must not pay. pm-full's `pm hub` parses and checks the same
// flags (this package), then execs pm-hub with them (Exec); pm-hub runs
// them (package serve). This package links no NATS server or client; its
// `pm hub creds` (creds.go) signs credentials with internal/hubauth (NATS
// JWTs and nkeys only) in the process that runs it.
package hubcmd

import (
	"os"
	"path/filepath"
	"syscall"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"

	"github.com/plasmodium/pm/internal/cmdutil"
	"github.com/plasmodium/pm/internal/errs"
)

// HubName is the executable that runs the server, beside pm-full.
const HubName = "pm-hub"

// DefaultListen is where pm hub takes clients when --listen is not given:
// loopback, reachable from this machine only. A hub other machines can
// reach must have credentials (--user, --nkey or --tls-ca; internal/hub
// refuses one without), docs/distributed.md.
const DefaultListen = "127.0.0.1:4222"

// PasswordEnv holds the password of --user: never a flag, which any
// process of the machine could read in the hub's command line.
const PasswordEnv = "NATS_PASSWORD"

// Options are the inputs of pm hub.
type Options struct {
	Store       string
	Listen      string
	Cluster     string
	ClusterName string
	Routes      []string
	Name        string
	User        string
	NKeys       []string
	TLSCert     string
	TLSKey      string
	TLSCA       string
	// Accounts gives each project its own NATS account and each machine
	// its own credential (pm hub creds), kept in hubauth.Path(Store).
	Accounts bool
	// NewAccounts lets the first node of a cluster make the accounts
	// (a new operator) when its store has none; the others are refused
	// until STORE/accounts is copied from it.
	NewAccounts bool
}

// RunFunc runs the hub for parsed options; args are the flags as given.
type RunFunc func(f *cmdutil.Factory, o Options, args []string) error

// NewCmd builds `pm hub`, run by run.
func NewCmd(f *cmdutil.Factory, run RunFunc) *cobra.Command {
	var o Options
	c := &cobra.Command{
		Use:   "hub",
		Short: "Run pm's engine for several machines (embedded NATS JetStream) until interrupted",
		Long: `pm hub runs a NATS server with JetStream (the pm-hub executable beside pm): one
node by default, its streams in --store and synced to disk on every write; with
--cluster and --routes, one of three nodes that replicate every stream (R3), so
a write survives the loss of any one of them. It prints the URL clients use.

  pm hub                                             one node on 127.0.0.1:4222
  pm hub --name a --listen 0.0.0.0:4222 --cluster 10.0.0.1:6222 \
         --routes 10.0.0.2:6222,10.0.0.3:6222 --user pm   one of three (run on each)

A hub other machines can reach (--listen or --cluster not on loopback) must
have credentials, or it is refused: --user NAME with the password in
$NATS_PASSWORD (the routes between nodes use it too), --nkey with users'
public nkeys, or --tls-ca (clients show a certificate it signed). --tls-cert
and --tls-key make it speak TLS only. See docs/distributed.md.`,
		Args: cobra.NoArgs,
		RunE: func(c *cobra.Command, _ []string) error {
			if o.NewAccounts && !o.Accounts {
				return errs.Usagef("pm hub --accounts --new-accounts (the first node of a cluster with accounts)", "pm hub: --new-accounts without --accounts")
			}
			var args []string
			c.Flags().Visit(func(fl *pflag.Flag) {
				v := fl.Value.String()
				if sv, ok := fl.Value.(pflag.SliceValue); ok {
					v = joinComma(sv.GetSlice())
				}
				args = append(args, "--"+fl.Name+"="+v)
			})
			return run(f, o, args)
		},
	}
	c.Flags().StringVar(&o.Store, "store", "", "directory for the node's streams (default: $XDG_DATA_HOME/pm/hub, else ~/.local/share/pm/hub)")
	c.Flags().StringVar(&o.Listen, "listen", DefaultListen, "host:port for clients (port 0: any free one)")
	c.Flags().StringVar(&o.Cluster, "cluster", "", "host:port for the other nodes' routes; makes this node one of a cluster")
	c.Flags().StringVar(&o.ClusterName, "cluster-name", "", "the cluster's name, the same on every node (default: pm)")
	c.Flags().StringSliceVar(&o.Routes, "routes", nil, "the other nodes' --cluster addresses, comma-separated")
	c.Flags().StringVar(&o.Name, "name", "", "this node's name, unique in the cluster and kept across restarts (default: the host name)")
	c.Flags().StringVar(&o.User, "user", "", "clients (and the other nodes) log in as this user, with the password in $"+PasswordEnv)
	c.Flags().StringSliceVar(&o.NKeys, "nkey", nil, "users' public nkeys (U...), comma-separated: clients log in with their seeds (store.nkey)")
	c.Flags().StringVar(&o.TLSCert, "tls-cert", "", "PEM certificate: the hub speaks TLS only")
	c.Flags().StringVar(&o.TLSKey, "tls-key", "", "PEM key of --tls-cert")
	c.Flags().StringVar(&o.TLSCA, "tls-ca", "", "PEM CA: clients (and routes) must show a certificate it signed")
	c.Flags().BoolVar(&o.Accounts, "accounts", false, "each project its own NATS account, each machine its own credential (pm hub creds); keys in STORE/accounts")
	c.Flags().BoolVar(&o.NewAccounts, "new-accounts", false, "with --accounts on a cluster: make STORE/accounts (a new operator) if it has none; the first node only, the others start from a copy of it")
	c.AddCommand(newCredsCmd(f))
	return c
}

func joinComma(s []string) string {
	out := ""
	for i, v := range s {
		if i > 0 {
			out += ","
		}
		out += v
	}
	return out
}

// Exec replaces this process with pm-hub running the same flags.
func Exec(f *cmdutil.Factory, _ Options, args []string) error {
	self, err := os.Executable()
	if err != nil {
		return err
	}
	hub := filepath.Join(filepath.Dir(self), HubName)
	err = syscall.Exec(hub, append([]string{HubName}, args...), os.Environ())
	return errs.Failf("install all three: make install (or go build -o DIR/pm-hub ./cmd/pm-hub beside pm-full)",
		"pm hub runs %s beside %s, which cannot run: %v", hub, self, err)
}

// StoreDir is --store, else the user's data directory: a hub belongs to
// the machine, not to one project.
func StoreDir(f *cmdutil.Factory, flag string) (string, error) {
	if flag != "" {
		return filepath.Abs(flag)
	}
	if d := f.Getenv("XDG_DATA_HOME"); d != "" {
		return filepath.Join(d, "pm", "hub"), nil
	}
	home := f.Getenv("HOME")
	if home == "" {
		return "", errs.Usagef("name a directory with --store DIR", "pm hub: no HOME for the default store")
	}
	return filepath.Join(home, ".local", "share", "pm", "hub"), nil
}

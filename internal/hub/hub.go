package hub

import (
	"context"
	"fmt"
	"io"
	"net"
	"net/url"
	"os"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/nats-io/nats-server/v2/server"
	"github.com/nats-io/nkeys"

	"github.com/plasmodium/pm/internal/errs"
	"github.com/plasmodium/pm/internal/hubauth"
	"github.com/plasmodium/pm/internal/listen"
)

// DefaultClusterName names the cluster of a hub started with --cluster.
const DefaultClusterName = "pm"

// readyWait bounds how long Start waits for the server's listeners: it is
// an in-process start on this machine, so only a broken one takes long.
const readyWait = 10 * time.Second

// Config says how to run one node.
type Config struct {
	// Name is the node's name, unique in its cluster and the same across
	// restarts (JetStream knows its peers by name). Default: the host name.
	Name string
	// StoreDir holds the node's streams. Required.
	StoreDir string
	// Listen is host:port for clients; port 0 takes any free one.
	Listen string
	// Cluster is host:port for the other nodes' routes; empty runs a
	// single node. Port 0 takes any free one.
	Cluster string
	// ClusterName is the cluster's name (DefaultClusterName when empty).
	ClusterName string
	// Routes are the other nodes' cluster addresses (host:port or
	// nats-route://host:port); a node's own address may be among them.
	Routes []string
	// Auth is who may connect (auth.go). Without one that authenticates
	// (Auth.Authenticates), Listen and Cluster must be loopback.
	Auth Auth
	// Log receives the server's notices, warnings and errors; nil: none.
	Log io.Writer
}

// Hub is one running node.
type Hub struct {
	srv       *server.Server
	clustered bool
	accounts  *keeper // with Auth.Accounts: pushes new account JWTs
}

// Start runs one node and returns once it accepts clients.
func Start(c Config) (*Hub, error) {
	opts, err := c.options()
	if err != nil {
		return nil, err
	}
	// The addresses are checked the way pm's other servers check theirs,
	// so a port in use says which flag to change; the server binds them
	// right after.
	if err := probe(c.Listen, "--listen"); err != nil {
		return nil, err
	}
	if c.Cluster != "" {
		if err := probe(c.Cluster, "--cluster"); err != nil {
			return nil, err
		}
	}
	if err := os.MkdirAll(c.StoreDir, 0o700); err != nil {
		return nil, errs.Failf("name a directory you can write with --store", "hub store %s: %v", c.StoreDir, err)
	}
	// With nkeys, the node's own in-process client (announce) logs in
	// with a key made for this start, known to nothing else.
	var self nkeys.KeyPair
	if len(opts.Nkeys) > 0 {
		if self, err = nkeys.CreateUser(); err != nil {
			return nil, err
		}
		pub, err := self.PublicKey()
		if err != nil {
			return nil, err
		}
		opts.Nkeys = append(opts.Nkeys, &server.NkeyUser{Nkey: pub})
	}
	var authority *hubauth.Authority
	if c.Auth.Accounts {
		open := hubauth.MakeStore
		if !c.makesAuthority() {
			if err := c.ownOperator(); err != nil {
				return nil, err
			}
			open = hubauth.OpenStore
		}
		if authority, err = open(c.StoreDir); err != nil {
			return nil, err
		}
		if err := trust(opts, authority); err != nil {
			return nil, err
		}
	}
	srv, err := server.NewServer(opts)
	if err != nil {
		return nil, errs.Usagef("pm hub --help lists the flags", "hub: %v", err)
	}
	log := &logger{w: c.Log, name: opts.ServerName}
	srv.SetLoggerV2(log, false, false, false)
	srv.Start()
	ready := srv.ReadyForConnections(readyWait)
	if fatal := log.fatal(); fatal != "" || !ready {
		srv.Shutdown()
		srv.WaitForShutdown()
		if fatal == "" {
			fatal = fmt.Sprintf("not accepting connections after %s", readyWait)
		}
		return nil, errs.Failf("check the addresses (--listen, --cluster) and the store directory (--store), then run pm hub again", "hub: %s", fatal)
	}
	h := &Hub{srv: srv, clustered: c.Cluster != ""}
	if authority != nil {
		if h.accounts, err = keepAccounts(srv, opts.AccountResolver.(*server.DirAccResolver), authority, log, c.Cluster == ""); err != nil {
			h.Close()
			return nil, errs.Failf("check the store directory (--store) and its accounts (STORE/accounts, STORE/accounts-jwt)", "hub: %v", err)
		}
		if c.Cluster != "" {
			if err := h.accounts.samePeers(context.Background(), c.Routes, readyWait); err != nil {
				h.Close()
				return nil, err
			}
		}
		return h, nil
	}
	if c.Cluster == "" {
		ctx, cancel := context.WithTimeout(context.Background(), readyWait)
		err := announce(ctx, srv, c.Auth, self)
		cancel()
		if err != nil {
			// pm doctor then says the hub does not say; the hub serves.
			log.Warnf("cannot say that this node syncs every write (pm doctor will not know): %v", err)
		}
	}
	return h, nil
}

// ownOperator refuses a node of a cluster whose store holds no whole
// authority unless told to make one: a fresh operator (or system account)
// there would be trusted by this node alone, so its peers' credentials
// would fail on it and its own on them (a cluster silently split). The
// first node makes it (Auth.NewAccounts), completing one a crash left
// half-made; the others start from a whole copy of it.
func (c Config) ownOperator() error {
	dir := hubauth.Path(c.StoreDir)
	copyIt := "copy STORE/accounts from the cluster's first node before this node's first start (e.g. scp -rp first:STORE/accounts " + dir + ")"
	switch hubauth.Status(c.StoreDir) {
	case hubauth.Whole:
		return nil
	case hubauth.Half:
		return errs.Statef("remove "+dir+" and "+copyIt+" again, whole (docs/distributed.md)",
			"hub: %s is half-made (a copy cut short, or a crash while it was made): this node would complete it with a system account of its own, not its peers'", dir)
	}
	return errs.Statef(copyIt+"; on the first node only, start with --new-accounts (docs/distributed.md)",
		"hub: %s holds no accounts: this node of a cluster would trust an operator of its own, not its peers'", dir)
}

// makesAuthority says whether this node makes (or completes) the
// authority: a single node, a cluster's node with no routes to others, or
// its first node told to (--new-accounts). Any other opens a whole copy.
func (c Config) makesAuthority() bool {
	return c.Cluster == "" || len(c.Routes) == 0 || c.Auth.NewAccounts
}

// options turns a Config into the server's options, refusing what the
// server would misread (a port 0 means 4222 to it; "any" is -1).
func (c Config) options() (*server.Options, error) {
	if c.StoreDir == "" {
		return nil, errs.Usagef("name the store directory with --store DIR", "hub: no store directory")
	}
	host, port, err := hostPort(c.Listen, "--listen")
	if err != nil {
		return nil, err
	}
	o := &server.Options{
		ServerName: c.Name,
		Host:       host,
		Port:       port,
		JetStream:  true,
		StoreDir:   c.StoreDir,
		NoSigs:     true,
		// A single node has no replica: an acknowledged write is one synced.
		SyncAlways: c.Cluster == "",
	}
	if o.ServerName == "" {
		if o.ServerName, err = os.Hostname(); err != nil {
			return nil, errs.Usagef("name this node with --name", "hub: no host name: %v", err)
		}
	}
	if c.Cluster == "" {
		if len(c.Routes) > 0 {
			return nil, errs.Usagef("give this node's own cluster address with --cluster host:port", "hub: --routes without --cluster")
		}
		return o, c.secure(o)
	}
	o.Cluster.Name = c.ClusterName
	if o.Cluster.Name == "" {
		o.Cluster.Name = DefaultClusterName
	}
	if o.Cluster.Host, o.Cluster.Port, err = hostPort(c.Cluster, "--cluster"); err != nil {
		return nil, err
	}
	for _, r := range c.Routes {
		u, err := routeURL(r)
		if err != nil {
			return nil, err
		}
		o.Routes = append(o.Routes, u)
	}
	return o, c.secure(o)
}

// secure applies c.Auth and refuses a node other machines could reach
// that lets anyone in: records, and the power to write them, would be
// every network neighbour's.
func (c Config) secure(o *server.Options) error {
	if err := c.Auth.apply(o); err != nil {
		return err
	}
	routesOpen := c.Cluster != "" && !Loopback(o.Cluster.Host)
	if routesOpen && c.Auth.User == "" && c.Auth.TLSCA == "" {
		// A route is a node's own connection: an nkey does not guard it.
		return errs.Usagef("give the nodes --user NAME with $NATS_PASSWORD, or --tls-cert/--tls-key/--tls-ca, the same on each (docs/distributed.md)",
			"hub: --cluster %s is reachable from other machines, and its routes have no credentials", c.Cluster)
	}
	if c.Auth.Authenticates() {
		return nil
	}
	try := "keep it on this machine (--listen 127.0.0.1:4222), or make clients prove who they are: --user NAME with $NATS_PASSWORD, --nkey, or --tls-ca (docs/distributed.md)"
	if !Loopback(o.Host) {
		return errs.Usagef(try, "hub: --listen %s is reachable from other machines, and the hub has no credentials", c.Listen)
	}
	return nil
}

// hostPort splits an address for the server, port 0 meaning any.
func hostPort(addr, flag string) (string, int, error) {
	host, p, err := net.SplitHostPort(addr)
	if err != nil {
		return "", 0, errs.Usagef("give "+flag+" as host:port, e.g. "+flag+" 127.0.0.1:4222", "hub: %s %q: %v", flag, addr, err)
	}
	port, err := strconv.Atoi(p)
	if err != nil || port < 0 || port > 65535 {
		return "", 0, errs.Usagef("give "+flag+" a port number from 0 (any) to 65535", "hub: %s %q: bad port", flag, addr)
	}
	if port == 0 {
		port = server.RANDOM_PORT
	}
	return host, port, nil
}

// routeURL reads one of --routes: host:port, or a nats-route:// (or
// nats://) URL naming one.
func routeURL(r string) (*url.URL, error) {
	try := "give each route as host:port of another node's --cluster, e.g. --routes 10.0.0.2:6222,10.0.0.3:6222"
	if !strings.Contains(r, "://") {
		r = "nats-route://" + r
	}
	u, err := url.Parse(r)
	if err != nil || u.Host == "" || (u.Scheme != "nats-route" && u.Scheme != "nats") {
		return nil, errs.Usagef(try, "hub: route %q is not host:port", r)
	}
	if _, _, err := hostPort(u.Host, "--routes"); err != nil {
		return nil, errs.Usagef(try, "hub: route %q: %v", r, err)
	}
	return u, nil
}

// probe binds addr and lets go, so a port in use is internal/listen's
// error naming flag. Port 0 needs no check.
func probe(addr, flag string) error {
	if _, p, _ := net.SplitHostPort(addr); p == "0" {
		return nil
	}
	ln, err := listen.TCP(addr, flag)
	if err != nil {
		return err
	}
	return ln.Close()
}

// ClientURL is the nats:// URL clients connect to.
func (h *Hub) ClientURL() string { return h.srv.ClientURL() }

// ClusterAddr is the address other nodes route to ("" for a single node).
func (h *Hub) ClusterAddr() string {
	if a := h.srv.ClusterAddr(); a != nil {
		return a.String()
	}
	return ""
}

// ClusterName is the node's cluster ("" for a single node).
func (h *Hub) ClusterName() string { return h.srv.ClusterName() }

// Name is the node's name.
func (h *Hub) Name() string { return h.srv.Name() }

// Clustered reports whether the node is one of a cluster.
func (h *Hub) Clustered() bool { return h.clustered }

// Server is the embedded server, for tests that ask it who leads.
func (h *Hub) Server() *server.Server { return h.srv }

// Close shuts the node down and waits until it has.
func (h *Hub) Close() {
	if h.accounts != nil {
		h.accounts.close()
	}
	h.srv.Shutdown()
	h.srv.WaitForShutdown()
}

// logger is the server's log, with its fatal errors kept for Start rather
// than ending the process.
type logger struct {
	w    io.Writer
	name string
	mu   sync.Mutex
	msg  string
}

func (l *logger) fatal() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.msg
}

func (l *logger) line(level, format string, v []any) {
	if l.w != nil {
		fmt.Fprintf(l.w, "hub %s %s: %s\n", l.name, level, fmt.Sprintf(format, v...))
	}
}

func (l *logger) Noticef(format string, v ...any) { l.line("notice", format, v) }
func (l *logger) Warnf(format string, v ...any)   { l.line("warning", format, v) }
func (l *logger) Errorf(format string, v ...any)  { l.line("error", format, v) }
func (l *logger) Debugf(format string, v ...any)  {}
func (l *logger) Tracef(format string, v ...any)  {}
func (l *logger) Fatalf(format string, v ...any) {
	l.line("fatal", format, v)
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.msg == "" {
		l.msg = fmt.Sprintf(format, v...)
	}
}

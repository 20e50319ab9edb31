package hub

import (
	"fmt"
	"net"
	"net/url"
	"strings"

	"github.com/nats-io/nats-server/v2/server"
	"github.com/nats-io/nkeys"

	"github.com/plasmodium/pm/internal/errs"
)

// Auth is who may connect to a node: a user and password, or the public
// nkeys of its users (one or the other), and TLS.
type Auth struct {
	User     string
	Password string
	// NKeys are users' public nkeys (U...); each connects with its seed.
	NKeys []string
	// TLSCert and TLSKey make the node speak TLS only: a plain client is
	// refused. With TLSCA it also verifies clients' certificates (mutual
	// TLS), which is then a credential of its own. A cluster's routes use
	// the same certificate and CA.
	TLSCert, TLSKey, TLSCA string
	// Accounts makes a hub whose clients are projects' machines: each
	// project its own NATS account, each machine a user of it (pm hub
	// creds), the keys in the authority of its store (STORE/accounts,
	// internal/hubauth). User then guards the routes between nodes only;
	// NKeys cannot be given (the server takes no users of its own beside
	// an operator's).
	Accounts bool
	// NewAccounts lets a node of a cluster (one with routes) make the
	// authority when Accounts holds none: the first node only. Without
	// it such a node is refused, since it would trust an operator of its
	// own, not its peers' (pm hub --new-accounts; a single node makes
	// its authority as it always did).
	NewAccounts bool
}

// Authenticates reports whether a client must prove who it is: a
// password, an nkey or a client certificate the node verifies.
func (a Auth) Authenticates() bool {
	return a.User != "" || len(a.NKeys) > 0 || a.TLSCA != "" || a.Accounts
}

// apply sets a's options on o, refusing what cannot work.
func (a Auth) apply(o *server.Options) error {
	if a.User != "" && a.Password == "" {
		return errs.Usagef("export NATS_PASSWORD=... before pm hub --user "+a.User, "hub: --user %s without a password", a.User)
	}
	if a.User != "" && len(a.NKeys) > 0 {
		return errs.Usagef("give --user or --nkey, not both", "hub: a user with a password and nkeys at once")
	}
	if (a.TLSCert == "") != (a.TLSKey == "") {
		return errs.Usagef("give both --tls-cert and --tls-key", "hub: one of --tls-cert and --tls-key")
	}
	if a.Accounts && len(a.NKeys) > 0 {
		return errs.Usagef("give --accounts (each machine its credential: pm hub creds) or --nkey (shared keys), not both", "hub: --nkey with --accounts")
	}
	if a.TLSCA != "" && a.TLSCert == "" {
		return errs.Usagef("give the node's own --tls-cert and --tls-key with --tls-ca", "hub: --tls-ca without a certificate")
	}
	if a.User != "" {
		if !a.Accounts {
			o.Username, o.Password = a.User, a.Password
		}
		if o.Cluster.Port != 0 {
			// The nodes prove themselves to one another the same way.
			o.Cluster.Username, o.Cluster.Password = a.User, a.Password
			for _, r := range o.Routes {
				r.User = url.UserPassword(a.User, a.Password)
			}
		}
	}
	for _, k := range a.NKeys {
		if !nkeys.IsValidPublicUserKey(k) {
			return errs.Usagef("give each --nkey as a user's public key (U..., from nk -gen user -pubout)", "hub: %q is not a user's public nkey", k)
		}
		o.Nkeys = append(o.Nkeys, &server.NkeyUser{Nkey: k})
	}
	if a.TLSCert == "" {
		return nil
	}
	tc, err := server.GenTLSConfig(&server.TLSConfigOpts{CertFile: a.TLSCert, KeyFile: a.TLSKey, CaFile: a.TLSCA, Verify: a.TLSCA != ""})
	if err != nil {
		return errs.Usagef("check --tls-cert, --tls-key and --tls-ca (PEM files this user can read)", "hub: TLS: %v", err)
	}
	o.TLSConfig, o.TLS, o.TLSVerify, o.TLSTimeout = tc, true, a.TLSCA != "", 2
	if o.Cluster.Port != 0 {
		rc, err := server.GenTLSConfig(&server.TLSConfigOpts{CertFile: a.TLSCert, KeyFile: a.TLSKey, CaFile: a.TLSCA, Verify: a.TLSCA != ""})
		if err != nil {
			return errs.Usagef("check --tls-cert, --tls-key and --tls-ca", "hub: TLS for routes: %v", err)
		}
		// A node dials its routes too: it trusts the CA it verifies
		// them by (without one, the system's roots).
		rc.RootCAs = rc.ClientCAs
		o.Cluster.TLSConfig, o.Cluster.TLSTimeout = rc, 2
	}
	return nil
}

// Describe says who may connect, for pm hub's first line.
func (a Auth) Describe() string {
	var who []string
	switch {
	case a.Accounts:
		who = append(who, "each project's machines with their own credentials (pm hub creds)")
		if a.User != "" {
			who = append(who, "routes as user "+a.User)
		}
	case a.User != "":
		who = append(who, "user "+a.User+" with its password")
	case len(a.NKeys) > 0:
		who = append(who, fmt.Sprintf("%d nkey users", len(a.NKeys)))
	}
	if a.TLSCA != "" {
		who = append(who, "certificates of its CA")
	}
	s := "anyone on this machine (it listens on loopback only)"
	if len(who) > 0 {
		s = strings.Join(who, " and ")
	}
	if a.TLSCert != "" {
		return "TLS only; clients: " + s
	}
	return "clients: " + s
}

// Loopback reports whether host (of --listen or --cluster) is reachable
// from this machine only: a loopback address or localhost. An empty host
// or 0.0.0.0 is every interface.
func Loopback(host string) bool {
	if host == "localhost" {
		return true
	}
	ip := net.ParseIP(host)
	return ip != nil && ip.IsLoopback()
}

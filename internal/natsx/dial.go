package natsx

import (
	"context"
	"errors"
	"os"
	"strings"

	"github.com/nats-io/nats.go"

	"github.com/plasmodium/pm/internal/config"
	"github.com/plasmodium/pm/internal/errs"
)

// Dial connects to the hub a project's config names (store.url), with its
// credentials and TLS, and waits until its JetStream answers or ctx ends.
// getenv reads the password's variable. What keeps it from connecting is
// an error whose Try line names the key or the variable to change.
func Dial(ctx context.Context, s config.Store, getenv func(string) string) (*Conn, error) {
	if !s.Remote() {
		return nil, errs.Usagef("pm init --store nats://HOST:4222 makes a project on a hub", "this project's records are local (no store.url)")
	}
	if err := config.CheckStoreURL(s.URL); err != nil {
		return nil, errs.Usagef("give the hub as nats://HOST:4222 (several: nats://a:4222,nats://b:4222)", "store.url %v", err)
	}
	opts, err := Options(s, getenv)
	if err != nil {
		return nil, err
	}
	c, err := Connect(ctx, strings.Join(s.URLs(), ","), opts...)
	if err != nil {
		return nil, explain(err, s)
	}
	return c, nil
}

// Options are the credentials and TLS options of s, each file checked
// readable first so a missing one is named, not a handshake's failure.
func Options(s config.Store, getenv func(string) string) ([]nats.Option, error) {
	for _, f := range s.Files() {
		file, err := os.Open(f.Path)
		if err != nil {
			return nil, errs.Failf("pm config set store."+f.Key+" FILE (a file this user can read on this machine)", "store.%s: %v", f.Key, err)
		}
		file.Close()
	}
	var opts []nats.Option
	switch {
	case s.Creds != "":
		opts = append(opts, nats.UserCredentials(s.Creds))
	case s.NKey != "":
		o, err := nats.NkeyOptionFromSeed(s.NKey)
		if err != nil {
			return nil, errs.Failf("pm config set store.nkey FILE (a file holding an nkey seed, SU...)", "store.nkey %s: %v", s.NKey, err)
		}
		opts = append(opts, o)
	case s.User != "":
		pw := getenv(s.PasswordVar())
		if pw == "" {
			return nil, errs.Failf("export "+s.PasswordVar()+"=... (the hub's password for "+s.User+")", "store.user is %s, but $%s is empty", s.User, s.PasswordVar())
		}
		opts = append(opts, nats.UserInfo(s.User, pw))
	}
	if s.TLS.CA != "" {
		opts = append(opts, nats.RootCAs(s.TLS.CA))
	}
	if s.TLS.Cert != "" {
		opts = append(opts, nats.ClientCert(s.TLS.Cert, s.TLS.Key))
	}
	return opts, nil
}

// explain gives a refused connection the Try line of its cause.
func explain(err error, s config.Store) error {
	msg := err.Error()
	switch {
	case errors.Is(err, nats.ErrAuthorization) || strings.Contains(msg, "Authorization Violation") || strings.Contains(msg, "authorization violation"):
		return errs.Failf("check the credentials against the hub's: store.user and $"+s.PasswordVar()+", store.nkey or store.creds",
			"the hub at %s refused this machine's credentials: %s", s.URL, msg)
	case errors.Is(err, nats.ErrSecureConnRequired) || strings.Contains(msg, "secure connection required"):
		return errs.Failf("the hub requires TLS: use tls://HOST:PORT in store.url, with store.tls.ca naming its CA",
			"the hub at %s requires TLS: %s", s.URL, msg)
	case strings.Contains(msg, "x509:") || strings.Contains(msg, "tls:"):
		return errs.Failf("pm config set store.tls.ca FILE (the CA that signed the hub's certificate); a hub that verifies clients also needs store.tls.cert and store.tls.key",
			"TLS with the hub at %s failed: %s", s.URL, msg)
	}
	return err
}

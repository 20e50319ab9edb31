package config

import (
	"fmt"
	"net/url"
	"path/filepath"
	"strings"
	"time"

	"github.com/plasmodium/pm/internal/lockedfile"
)

// Store is where the project's records live (docs/distributed.md): with
// URL empty, the state directory's files; with a nats:// URL, a hub's
// JetStream (pm hub, or a NATS cluster of one's own), shared by every
// machine whose config names the same URL and Project. The keys here
// choose where pm sends the project's records and which credentials it
// presents, so a config agents can write may set none of them
// (configtrust.go: the routing key "store").
type Store struct {
	// URL is the hub: nats://host:port (tls://host:port for TLS), several
	// comma-separated for the nodes of a cluster. No user or password in
	// it: those are User and PasswordEnv.
	URL string `json:"url,omitempty"`
	// Project is the project's name on the hub; its records are under it
	// and nothing else's (natsstate). pm init --store makes one.
	Project string `json:"project,omitempty"`
	// Creds is a NATS credentials file (a user JWT and its nkey seed).
	Creds string `json:"creds,omitempty"`
	// NKey is a file holding an nkey seed (SU...), for a hub started with
	// pm hub --nkey.
	NKey string `json:"nkey,omitempty"`
	// User is the user name for a hub with user and password; the password
	// is read from the variable PasswordEnv names, never from this file.
	User string `json:"user,omitempty"`
	// PasswordEnv names that variable (default NATS_PASSWORD): a name
	// ending in PASSWORD, which pm never passes to an agent
	// (secret.IsSecretEnv).
	PasswordEnv string `json:"password_env,omitempty"`
	// TLS is the hub's CA and this machine's client certificate.
	TLS StoreTLS `json:"tls,omitzero"`
	// LeaseSeconds is how long an agent's lease and a worker's
	// registration last unrenewed (default DefaultLeaseSeconds): the
	// time from a machine's loss to its agents running elsewhere. The
	// hub keeps the value of the first machine that used the project.
	LeaseSeconds int `json:"lease_seconds,omitempty"`
}

// DefaultLeaseSeconds is Store.LeaseSeconds when it is not set.
const DefaultLeaseSeconds = 5

// LeaseTTL is LeaseSeconds as a duration.
func (s Store) LeaseTTL() time.Duration {
	if s.LeaseSeconds > 0 {
		return time.Duration(s.LeaseSeconds) * time.Second
	}
	return DefaultLeaseSeconds * time.Second
}

// StoreTLS configures TLS to the hub. Any of it set turns TLS on.
type StoreTLS struct {
	// CA is a PEM file of the CA that signed the hub's certificate
	// (default: the system's roots).
	CA string `json:"ca,omitempty"`
	// Cert and Key are this machine's client certificate and key (PEM),
	// for a hub that verifies clients (pm hub --tls-ca).
	Cert string `json:"cert,omitempty"`
	Key  string `json:"key,omitempty"`
}

// DefaultPasswordEnv is Store.PasswordEnv when it is not set.
const DefaultPasswordEnv = "NATS_PASSWORD"

// Remote reports whether the records live on a hub.
func (s Store) Remote() bool { return s.URL != "" }

// PasswordVar is the variable the password is read from.
func (s Store) PasswordVar() string {
	if s.PasswordEnv != "" {
		return s.PasswordEnv
	}
	return DefaultPasswordEnv
}

// StoreFile is one file a store key names.
type StoreFile struct{ Key, Path string }

// Files are the files the section names (credentials, TLS), in a fixed
// order, so the first bad one reported is always the same.
func (s Store) Files() []StoreFile {
	var out []StoreFile
	for _, f := range []StoreFile{{"creds", s.Creds}, {"nkey", s.NKey}, {"tls.ca", s.TLS.CA}, {"tls.cert", s.TLS.Cert}, {"tls.key", s.TLS.Key}} {
		if f.Path != "" {
			out = append(out, f)
		}
	}
	return out
}

// URLs are URL's nodes, each trimmed.
func (s Store) URLs() []string {
	var out []string
	for _, u := range strings.Split(s.URL, ",") {
		if u = strings.TrimSpace(u); u != "" {
			out = append(out, u)
		}
	}
	return out
}

// ValidProject reports whether name may name a project on a hub: 1 to 48
// lower-case letters, digits and dashes, starting with a letter or digit.
// No underscore or dot: natsx.ProjectNames separates a project's buckets
// and streams from one another with them, so no name reaches another's.
// (Checked by hand, not by a regexp: config is linked into the small pm,
// whose every start would compile it, internal/lite.)
func ValidProject(name string) bool {
	if name == "" || len(name) > 48 || name[0] == '-' {
		return false
	}
	for _, r := range name {
		if (r < 'a' || r > 'z') && (r < '0' || r > '9') && r != '-' {
			return false
		}
	}
	return true
}

// passwordVar reports the shape of PasswordEnv: an upper-case variable
// name ending in PASSWORD, a secret variable by its name.
func passwordVar(name string) bool {
	if !strings.HasSuffix(name, "PASSWORD") || name[0] < 'A' || name[0] > 'Z' {
		return false
	}
	for _, r := range name {
		if (r < 'A' || r > 'Z') && (r < '0' || r > '9') && r != '_' {
			return false
		}
	}
	return true
}

// StoreError is a store key with a bad value: which, why and what to do.
type StoreError struct {
	Path, Key, Problem, Fix string
}

func (e *StoreError) Error() string {
	return fmt.Sprintf("%s: store.%s %s", e.Path, e.Key, e.Problem)
}

// Try says what to change.
func (e *StoreError) Try() string { return e.Fix }

// (No package net here: config is linked into the small pm, which must
// not link it, internal/lite.)

// CheckStoreURL checks a store.url (pm init --store checks its flag with
// it before anything is written).
func CheckStoreURL(text string) error {
	s := Store{URL: text}
	if len(s.URLs()) == 0 {
		return fmt.Errorf("is empty")
	}
	for _, raw := range s.URLs() {
		u, err := url.Parse(raw)
		if err != nil || (u.Scheme != "nats" && u.Scheme != "tls") || u.Host == "" {
			return fmt.Errorf("has %q, which is not nats://host:port (or tls://host:port)", raw)
		}
		if u.User != nil {
			return fmt.Errorf("has a user or password in %q: they go in store.user and $%s, not in the URL", u.Redacted(), DefaultPasswordEnv)
		}
		if (u.Path != "" && u.Path != "/") || u.RawQuery != "" || u.Fragment != "" {
			return fmt.Errorf("has %q, which has more than nats://host:port", raw)
		}
		if strings.HasSuffix(u.Host, ":") {
			return fmt.Errorf("has %q with an empty port", raw)
		}
	}
	return nil
}

// CheckStore checks a store section as loading config.json would (pm
// init --store, before it writes one).
func CheckStore(s Store) error { return Config{Store: s}.validateStore("pm init") }

// validateStore checks the store section: all of it or none, names and
// paths in their shapes. Whether the files exist and the hub answers is
// for the dial (natsstate.Dial), on the machine that dials.
func (c Config) validateStore(path string) error {
	s := c.Store
	bad := func(key, problem, fix string) error {
		return &StoreError{Path: path, Key: key, Problem: problem, Fix: fix}
	}
	if !s.Remote() {
		if s != (Store{}) {
			return bad("url", "is not set, but other store keys are (records are in this directory's files)",
				"pm config unset store, or make the project on a hub: pm init --store nats://HOST:4222")
		}
		return nil
	}
	if err := CheckStoreURL(s.URL); err != nil {
		return bad("url", err.Error(), "give the hub as nats://HOST:4222 (several: nats://a:4222,nats://b:4222)")
	}
	if !ValidProject(s.Project) {
		return bad("project", fmt.Sprintf("is %q; want lower-case letters, digits and dashes (at most 48)", s.Project),
			"pm config set store.project NAME (the name pm init --store printed)")
	}
	n := 0
	for _, set := range []bool{s.Creds != "", s.NKey != "", s.User != ""} {
		if set {
			n++
		}
	}
	if n > 1 {
		return bad("creds", "is one of several credentials set (store.creds, store.nkey, store.user)", "keep one: pm config unset store.nkey (or store.creds, store.user)")
	}
	if s.PasswordEnv != "" && s.User == "" {
		return bad("password_env", "is set without store.user", "pm config set store.user NAME, or pm config unset store.password_env")
	}
	if s.PasswordEnv != "" && !passwordVar(s.PasswordEnv) {
		return bad("password_env", fmt.Sprintf("is %q, not a name ending in PASSWORD (a variable pm never gives an agent)", s.PasswordEnv),
			"pm config set store.password_env "+DefaultPasswordEnv)
	}
	if s.LeaseSeconds < 0 {
		return bad("lease_seconds", fmt.Sprintf("is %d; want a number of seconds, at least 1", s.LeaseSeconds), "pm config set store.lease_seconds 5")
	}
	if (s.TLS.Cert == "") != (s.TLS.Key == "") {
		return bad("tls", "has one of cert and key: a client certificate needs both", "pm config set store.tls.cert FILE and store.tls.key FILE, or unset both")
	}
	for _, f := range s.Files() {
		if !filepath.IsAbs(f.Path) {
			return bad(f.Key, fmt.Sprintf("is %q, not an absolute path", f.Path), "pm config set store."+f.Key+" /absolute/path")
		}
	}
	return nil
}

// SetStore sets config.json's store section in the state directory root
// (pm init --store, on the project it just made), as SetPreset sets the
// runtime.
func SetStore(root string, st Store) error {
	path := filepath.Join(root, "config.json")
	return lockedfile.With(path, func() error {
		cfg, err := LoadConfig(path)
		if err != nil {
			return err
		}
		cfg.Store = st
		return lockedfile.WriteJSON(path, cfg)
	})
}

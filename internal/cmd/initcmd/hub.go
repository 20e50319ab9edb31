package initcmd

import (
	"context"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"time"

	"github.com/plasmodium/pm/internal/cmdutil"
	"github.com/plasmodium/pm/internal/config"
	"github.com/plasmodium/pm/internal/errs"
	"github.com/plasmodium/pm/internal/hubauth"
	"github.com/plasmodium/pm/internal/ids"
	"github.com/plasmodium/pm/internal/lockedfile"
	"github.com/plasmodium/pm/internal/natsx"
	"github.com/plasmodium/pm/internal/state/hubproject"
)

// dialWait bounds pm init --store's wait for the hub (a cluster electing
// its leader answers within it; a hub that does not is refused).
const dialWait = 30 * time.Second

// HubFlags are pm init's flags for a project on a hub.
type HubFlags struct {
	URL, Project, Creds, NKey, User, TLSCA, TLSCert, TLSKey string
}

// credential is the credentials file pm init was given, read once: the
// bytes whose project was checked are the ones kept (keepCreds), never a
// second read of a file that may have changed in between.
type credential struct {
	data    []byte
	project string // the project pm hub creds issued it for; "" for another NATS credential
}

// storeConfig turns the flags into the store section, files made absolute
// (config.json holds absolute paths, valid from any directory), and reads
// the credentials file once.
func (h HubFlags) storeConfig() (config.Store, credential, error) {
	s := config.Store{URL: h.URL, Project: h.Project, User: h.User}
	var cred credential
	if h.URL == "" {
		if h != (HubFlags{}) {
			return s, cred, errs.Usagef("pm init --store nats://HOST:4222 [--project NAME] ...", "--project, --creds, --nkey, --user and --tls-* go with --store")
		}
		return s, cred, nil
	}
	if err := config.CheckStoreURL(h.URL); err != nil {
		return s, cred, errs.Usagef("give the hub as --store nats://HOST:4222 (several: nats://a:4222,nats://b:4222)", "--store %v", err)
	}
	if h.Project != "" && !config.ValidProject(h.Project) {
		return s, cred, errs.Usagef("give the name pm init --store printed on the first machine", "--project %q is not a project name (lower-case letters, digits and dashes)", h.Project)
	}
	for _, f := range []struct {
		flag string
		in   string
		out  *string
	}{{"--creds", h.Creds, &s.Creds}, {"--nkey", h.NKey, &s.NKey}, {"--tls-ca", h.TLSCA, &s.TLS.CA}, {"--tls-cert", h.TLSCert, &s.TLS.Cert}, {"--tls-key", h.TLSKey, &s.TLS.Key}} {
		if f.in == "" {
			continue
		}
		abs, err := filepath.Abs(f.in)
		if err != nil {
			return s, cred, errs.Usagef("give "+f.flag+" a file path", "%s %q: %v", f.flag, f.in, err)
		}
		*f.out = abs
	}
	if s.Creds != "" {
		// A credential pm hub creds issued is for one project: that one.
		var err error
		if cred.data, err = readCreds(s.Creds); err == nil {
			cred.project, err = hubauth.ProjectIn(cred.data)
		}
		if err != nil {
			return s, cred, errs.Usagef("give --creds the credentials file pm hub creds wrote (or one of your NATS cluster's)", "--creds %s: %v", h.Creds, err)
		}
		p := cred.project
		if p != "" && s.Project != "" && s.Project != p {
			return s, cred, errs.Usagef("pm init --store "+h.URL+" --creds "+h.Creds+" (it joins project "+p+")",
				"--creds %s is a credential for project %s, not %s", h.Creds, p, s.Project)
		}
		if p != "" {
			s.Project = p
		}
	}
	// The section as config.json will hold it must load: the same checks.
	if err := config.CheckStore(withProject(s)); err != nil {
		return s, cred, errs.Usagef(config.ConfigTry(err, "config.json"), "%v", err)
	}
	return s, cred, nil
}

// MaxCredsFile bounds the --creds file pm init reads: a NATS credentials
// file is about a kilobyte (a user JWT and its seed).
const MaxCredsFile = 64 << 10

// readCreds reads the --creds file, refusing one over MaxCredsFile bytes
// (a device, a wrong file) rather than reading it whole.
func readCreds(path string) ([]byte, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	b, err := io.ReadAll(io.LimitReader(f, MaxCredsFile+1))
	if err != nil {
		return nil, err
	}
	if len(b) > MaxCredsFile {
		return nil, fmt.Errorf("over %d bytes: not a credentials file", MaxCredsFile)
	}
	return b, nil
}

// onHub makes (or, with --project, joins) the project on the hub, before
// anything is written here: a hub that cannot be reached, refuses the
// credentials or lacks the project leaves this directory as it was.
// It returns the section config.json gets.
func onHub(f *cmdutil.Factory, dir string, s config.Store, cred credential) (config.Store, bool, error) {
	ctx, cancel := context.WithTimeout(f.Context, dialWait)
	defer cancel()
	c, err := natsx.Dial(ctx, withProject(s), f.Getenv)
	if err != nil {
		return s, false, err
	}
	defer c.Close()
	joined := s.Project != ""
	if joined && cred.project == s.Project {
		// With a credential for the project's own account (pm hub
		// creds), the first machine to join makes the project there
		// (the account is the project's, its name no typo); machines
		// that start at once all end in it, one making it.
		host, _ := os.Hostname()
		made, err := hubproject.Ensure(ctx, c, s.Project, host, dir, f.Now())
		return s, !made, err
	}
	if joined {
		if err := hubproject.Join(ctx, c, s.Project); err != nil {
			return s, false, err
		}
	} else if s.Project != "" {
		host, _ := os.Hostname()
		if err := hubproject.New(ctx, c, s.Project, host, dir, f.Now()); err != nil {
			return s, false, err
		}
	} else {
		s.Project = ids.Default.New(slug(filepath.Base(dir)))
		host, _ := os.Hostname()
		if err := hubproject.New(ctx, c, s.Project, host, dir, f.Now()); err != nil {
			return s, false, err
		}
	}
	return s, joined, nil
}

// withProject gives Dial a project to check the section with before one
// is named.
func withProject(s config.Store) config.Store {
	if s.Project == "" {
		s.Project = "probe"
	}
	return s
}

var notSlug = regexp.MustCompile(`[^a-z0-9]+`)

// slug is a project name's readable start: the directory's name in the
// letters a project name allows.
func slug(base string) string {
	s := strings.Trim(notSlug.ReplaceAllString(strings.ToLower(base), "-"), "-")
	if len(s) > 32 {
		s = strings.TrimRight(s[:32], "-")
	}
	if s == "" {
		return "pm"
	}
	return s
}

// sameHub reports an existing project's config with its store, for pm init
// run again: the same hub and project is "already", anything else is
// refused (records are not moved between stores).
func sameHub(root string, s config.Store) error {
	cfg, err := config.LoadConfig(filepath.Join(root, "config.json"))
	if err != nil {
		return nil // already() reports a config that does not load
	}
	have := cfg.Store
	switch {
	case s.URL == "": // pm init again: whatever it has, kept
		return nil
	case !have.Remote():
		return errs.Statef("run pm init --store in a directory of its own; records are not moved from files to a hub",
			"%s is already a project with its records in its files", root)
	case have.URL != s.URL || (s.Project != "" && have.Project != s.Project):
		return errs.Statef("pm init --store "+have.URL+" --project "+have.Project+" (what it has), or a directory of its own",
			"%s is already a project on the hub %s (project %s)", root, have.URL, have.Project)
	}
	return nil
}

// CredsFile is where pm init keeps a credential pm hub creds issued: in
// the state directory, which no sandboxed command can read (it is hidden
// from agents, docs/security.md), mode 0600.
const CredsFile = "hub.creds"

// keepCreds copies a credential pm hub creds issued (it names its
// project) into the state directory root and points store.creds at the
// copy: the file the person brought may sit anywhere an agent can read.
// Another credentials file (a NATS cluster of the user's) is left where
// it is named.
func keepCreds(root string, s config.Store, cred credential) (config.Store, error) {
	if cred.project == "" {
		return s, nil
	}
	dst := filepath.Join(root, CredsFile)
	if err := lockedfile.WriteAtomicMode(dst, cred.data, 0o600); err != nil {
		return s, errs.Failf("check that "+root+" is writable", "keep the credential: %v", err)
	}
	s.Creds = dst
	return s, nil
}

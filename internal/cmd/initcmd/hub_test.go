package initcmd

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/plasmodium/pm/internal/errs"
	"github.com/plasmodium/pm/internal/hubauth"
)

// credsFor writes a credential pm hub creds would issue for project p.
func credsFor(t *testing.T, a *hubauth.Authority, p, machine string) []byte {
	t.Helper()
	b, err := a.Issue(p, machine, "", time.Now())
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// The credentials file is read once (review: it was parsed for its
// project, then read again to be kept): the credential kept in the state
// directory is the one whose project was checked, even when the file the
// person named is replaced in between by another project's.
func TestCredsReadOnce(t *testing.T) {
	a, err := hubauth.MakeStore(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	mine, theirs := credsFor(t, a, "p", "m1"), credsFor(t, a, "q", "m1")
	file := filepath.Join(t.TempDir(), "m1.creds")
	if err := os.WriteFile(file, mine, 0o600); err != nil {
		t.Fatal(err)
	}
	s, cred, err := HubFlags{URL: "nats://127.0.0.1:4222", Creds: file}.storeConfig()
	if err != nil {
		t.Fatal(err)
	}
	if s.Project != "p" {
		t.Fatalf("project %q, want p (the credential's)", s.Project)
	}
	if err := os.WriteFile(file, theirs, 0o600); err != nil { // replaced after the check
		t.Fatal(err)
	}
	root := t.TempDir()
	kept, err := keepCreds(root, s, cred)
	if err != nil {
		t.Fatal(err)
	}
	b, err := os.ReadFile(kept.Creds)
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(b, mine) {
		t.Fatalf("kept a credential other than the one checked (project p): the file was read again")
	}
}

// The credentials file is read with a bound (review: it was read whole,
// whatever its size): a file over MaxCredsFile is refused with a Try line,
// even when its first bytes are a good credential.
func TestCredsFileBounded(t *testing.T) {
	a, err := hubauth.MakeStore(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	big := append(credsFor(t, a, "p", "m1"), bytes.Repeat([]byte("\n"), MaxCredsFile)...)
	file := filepath.Join(t.TempDir(), "big.creds")
	if err := os.WriteFile(file, big, 0o600); err != nil {
		t.Fatal(err)
	}
	_, _, err = HubFlags{URL: "nats://127.0.0.1:4222", Creds: file}.storeConfig()
	if err == nil || errs.TryOf(err) == "" || !strings.Contains(err.Error(), "over") {
		t.Fatalf("a credentials file over %d bytes: %v, want a refusal with a Try line", MaxCredsFile, err)
	}
}

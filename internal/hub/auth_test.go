package hub_test

import (
	"bufio"
	"net"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/nats-io/nkeys"

	"github.com/plasmodium/pm/internal/config"
	"github.com/plasmodium/pm/internal/errs"
	"github.com/plasmodium/pm/internal/hub"
	"github.com/plasmodium/pm/internal/hub/hubtest"
	"github.com/plasmodium/pm/internal/natsx"
)

// dial is a client as pm's config makes it (natsx.Dial), password in env.
func dial(t *testing.T, s config.Store, env map[string]string) error {
	t.Helper()
	c, err := natsx.Dial(ctxFor(t), s, func(k string) string { return env[k] })
	if err == nil {
		c.Close()
	}
	return err
}

func wantRefused(t *testing.T, err error, try string) {
	t.Helper()
	if err == nil {
		t.Fatal("connected")
	}
	if !strings.Contains(errs.TryOf(err), try) {
		t.Fatalf("refused with %q, Try %q; want Try with %q", err, errs.TryOf(err), try)
	}
}

// A hub with a user and password lets in that user with that password,
// and no one else, each refusal saying which credentials to check.
func TestUserPassword(t *testing.T) {
	h := hubtest.SingleWith(t, func(c *hub.Config) { c.Auth = hub.Auth{User: "pm", Password: "s3cret-pw"} })
	s := config.Store{URL: h.URL(0), Project: "p", User: "pm"}
	if err := dial(t, s, map[string]string{"NATS_PASSWORD": "s3cret-pw"}); err != nil {
		t.Fatal(err)
	}
	err := dial(t, s, map[string]string{"NATS_PASSWORD": "wrong"})
	wantRefused(t, err, "store.user and $NATS_PASSWORD")
	if strings.Contains(err.Error(), "wrong") {
		t.Fatalf("the refusal shows the password: %v", err)
	}
	wantRefused(t, dial(t, config.Store{URL: h.URL(0), Project: "p"}, nil), "credentials")
	s.PasswordEnv = "HUB_PASSWORD"
	if err := dial(t, s, map[string]string{"HUB_PASSWORD": "s3cret-pw"}); err != nil {
		t.Fatal(err)
	}
}

// A hub that knows users by their nkeys lets in the holder of a seed and
// refuses another seed.
func TestNKeys(t *testing.T) {
	seedFile := func(kp nkeys.KeyPair) string {
		seed, err := kp.Seed()
		if err != nil {
			t.Fatal(err)
		}
		f := filepath.Join(t.TempDir(), "user.nk")
		if err := os.WriteFile(f, seed, 0o600); err != nil {
			t.Fatal(err)
		}
		return f
	}
	user, err := nkeys.CreateUser()
	if err != nil {
		t.Fatal(err)
	}
	stranger, err := nkeys.CreateUser()
	if err != nil {
		t.Fatal(err)
	}
	pub, err := user.PublicKey()
	if err != nil {
		t.Fatal(err)
	}
	h := hubtest.SingleWith(t, func(c *hub.Config) { c.Auth = hub.Auth{NKeys: []string{pub}} })
	if err := dial(t, config.Store{URL: h.URL(0), Project: "p", NKey: seedFile(user)}, nil); err != nil {
		t.Fatal(err)
	}
	wantRefused(t, dial(t, config.Store{URL: h.URL(0), Project: "p", NKey: seedFile(stranger)}, nil), "store.nkey")
}

// A hub with a certificate speaks TLS only: a client that trusts its CA
// connects, one that does not is told to name the CA, and a plain client
// never gets an answer to its PING. With --tls-ca it verifies clients too.
func TestTLS(t *testing.T) {
	certs := hubtest.MakeCerts(t)
	h := hubtest.SingleWith(t, func(c *hub.Config) {
		c.Auth = hub.Auth{TLSCert: certs.ServerCert, TLSKey: certs.ServerKey}
	})
	if err := dial(t, config.Store{URL: h.URL(0), Project: "p", TLS: config.StoreTLS{CA: certs.CA}}, nil); err != nil {
		t.Fatal(err)
	}
	wantRefused(t, dial(t, config.Store{URL: h.URL(0), Project: "p", TLS: config.StoreTLS{CA: certs.OtherCA}}, nil), "store.tls.ca")
	plainRefused(t, h.URL(0))

	m := hubtest.SingleWith(t, func(c *hub.Config) {
		c.Auth = hub.Auth{TLSCert: certs.ServerCert, TLSKey: certs.ServerKey, TLSCA: certs.CA}
	})
	mutual := config.Store{URL: m.URL(0), Project: "p", TLS: config.StoreTLS{CA: certs.CA, Cert: certs.ClientCert, Key: certs.ClientKey}}
	if err := dial(t, mutual, nil); err != nil {
		t.Fatal(err)
	}
	wantRefused(t, dial(t, config.Store{URL: m.URL(0), Project: "p", TLS: config.StoreTLS{CA: certs.CA}}, nil), "store.tls")
}

// plainRefused speaks the NATS protocol without TLS to url: the server
// says TLS is required and never answers the PING.
func plainRefused(t *testing.T, raw string) {
	t.Helper()
	u, err := url.Parse(raw)
	if err != nil {
		t.Fatal(err)
	}
	conn, err := net.Dial("tcp", u.Host)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	if err := conn.SetDeadline(time.Now().Add(30 * time.Second)); err != nil {
		t.Fatal(err)
	}
	r := bufio.NewReader(conn)
	info, err := r.ReadString('\n')
	if err != nil || !strings.Contains(info, `"tls_required":true`) {
		t.Fatalf("INFO %q, %v: want tls_required", info, err)
	}
	if _, err := conn.Write([]byte("CONNECT {\"verbose\":false}\r\nPING\r\n")); err != nil {
		return // refused already
	}
	for {
		line, err := r.ReadString('\n')
		if err != nil {
			return // the server closed the connection: refused
		}
		if strings.HasPrefix(line, "PONG") {
			t.Fatal("a plain client got an answer from a TLS hub")
		}
	}
}

// A hub other machines can reach needs credentials: refused before it
// starts without them, started with them. Its routes need a password or
// a verified certificate (an nkey does not guard a route).
func TestReachableNeedsCredentials(t *testing.T) {
	dir := t.TempDir()
	pub := func() string {
		kp, err := nkeys.CreateUser()
		if err != nil {
			t.Fatal(err)
		}
		p, err := kp.PublicKey()
		if err != nil {
			t.Fatal(err)
		}
		return p
	}()
	for _, c := range []struct {
		name string
		cfg  hub.Config
		ok   bool
		want string
	}{
		{"loopback, none", hub.Config{Listen: "127.0.0.1:0"}, true, ""},
		{"localhost, none", hub.Config{Listen: "localhost:0"}, true, ""},
		{"every interface, none", hub.Config{Listen: "0.0.0.0:0"}, false, "--listen 0.0.0.0:0 is reachable from other machines"},
		{"empty host, none", hub.Config{Listen: ":0"}, false, "reachable from other machines"},
		{"every interface, password", hub.Config{Listen: "0.0.0.0:0", Auth: hub.Auth{User: "pm", Password: "pw"}}, true, ""},
		{"every interface, nkey", hub.Config{Listen: "0.0.0.0:0", Auth: hub.Auth{NKeys: []string{pub}}}, true, ""},
		{"routes open, nkey", hub.Config{Listen: "127.0.0.1:0", Cluster: "0.0.0.0:0", Auth: hub.Auth{NKeys: []string{pub}}}, false, "its routes have no credentials"},
		{"routes open, none", hub.Config{Listen: "127.0.0.1:0", Cluster: "0.0.0.0:0"}, false, "its routes have no credentials"},
		{"user without password", hub.Config{Listen: "127.0.0.1:0", Auth: hub.Auth{User: "pm"}}, false, "without a password"},
		{"bad nkey", hub.Config{Listen: "127.0.0.1:0", Auth: hub.Auth{NKeys: []string{"SUABC"}}}, false, "not a user's public nkey"},
		{"ca alone", hub.Config{Listen: "127.0.0.1:0", Auth: hub.Auth{TLSCA: "/ca.pem"}}, false, "--tls-ca without a certificate"},
		{"user and nkey", hub.Config{Listen: "127.0.0.1:0", Auth: hub.Auth{User: "pm", Password: "pw", NKeys: []string{pub}}}, false, "and nkeys at once"},
	} {
		t.Run(c.name, func(t *testing.T) {
			c.cfg.StoreDir, c.cfg.Name = dir, "n"
			h, err := hub.Start(c.cfg)
			if c.ok {
				if err != nil {
					t.Fatal(err)
				}
				h.Close()
				return
			}
			if err == nil {
				h.Close()
				t.Fatal("started")
			}
			if !errs.Is(err, errs.Usage) || !strings.Contains(err.Error(), c.want) || errs.TryOf(err) == "" {
				t.Fatalf("error %q (code %d), Try %q; want usage, %q", err, errs.CodeOf(err), errs.TryOf(err), c.want)
			}
		})
	}
}

// Three nodes with a password form a cluster (their routes present it)
// and replicate: a client with the password gets R3.
func TestClusterWithPassword(t *testing.T) {
	h := hubtest.ThreeWith(t, func(c *hub.Config) { c.Auth = hub.Auth{User: "pm", Password: "pw"} })
	c, err := natsx.Dial(ctxFor(t), config.Store{URL: h.URLs(), Project: "p", User: "pm"}, func(string) string { return "pw" })
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	if c.Replicas() != 3 {
		t.Fatalf("replicas %d", c.Replicas())
	}
	if _, err := c.JS.AccountInfo(ctxFor(t)); err != nil {
		t.Fatal(err)
	}
}

func writeFile(t *testing.T, name string, data []byte) string {
	t.Helper()
	f := filepath.Join(t.TempDir(), name)
	if err := os.WriteFile(f, data, 0o600); err != nil {
		t.Fatal(err)
	}
	return f
}

// Three nodes with TLS and a CA form a cluster: their routes speak TLS
// and verify one another's certificates; a client with the CA and a
// certificate gets R3.
func TestClusterWithTLS(t *testing.T) {
	certs := hubtest.MakeCerts(t)
	h := hubtest.ThreeWith(t, func(c *hub.Config) {
		c.Auth = hub.Auth{TLSCert: certs.ServerCert, TLSKey: certs.ServerKey, TLSCA: certs.CA}
	})
	s := config.Store{URL: h.URLs(), Project: "p", TLS: config.StoreTLS{CA: certs.CA, Cert: certs.ClientCert, Key: certs.ClientKey}}
	c, err := natsx.Dial(ctxFor(t), s, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	if c.Replicas() != 3 {
		t.Fatalf("replicas %d", c.Replicas())
	}
}

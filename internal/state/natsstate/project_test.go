package natsstate_test

import (
	"context"
	"net"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/plasmodium/pm/internal/config"
	"github.com/plasmodium/pm/internal/errs"
	"github.com/plasmodium/pm/internal/hub/hubtest"
	"github.com/plasmodium/pm/internal/state"
	"github.com/plasmodium/pm/internal/state/natsstate"
)

func noEnv(string) string { return "" }

func dialCtx(t *testing.T) context.Context {
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	t.Cleanup(cancel)
	return ctx
}

// A project is made once on a hub; a config naming it opens its state and
// bus from any connection (a second machine sees the first one's
// records); a config naming a project the hub lacks is refused, never
// given an empty one.
func TestDialCreatedProject(t *testing.T) {
	h := hubtest.Single(t)
	ctx := dialCtx(t)
	cfg := config.Store{URL: h.URL(0), Project: "web"}
	if _, err := natsstate.Dial(ctx, cfg, noEnv); !errs.Is(err, errs.NotFound) || !strings.Contains(errs.TryOf(err), "pm init --store") {
		t.Fatalf("Dial of a project not made: %v (Try %q)", err, errs.TryOf(err))
	}
	c := h.Connect(0)
	if err := natsstate.Create(ctx, c, natsstate.ProjectInfo{Name: "web", CreatedAt: time.Now()}); err != nil {
		t.Fatal(err)
	}
	if err := natsstate.Create(ctx, c, natsstate.ProjectInfo{Name: "web"}); !errs.Is(err, errs.State) || !strings.Contains(errs.TryOf(err), "--project web") {
		t.Fatalf("second Create: %v (Try %q)", err, errs.TryOf(err))
	}
	first, err := natsstate.Dial(ctx, cfg, noEnv)
	if err != nil {
		t.Fatal(err)
	}
	defer first.Close()
	if _, err := first.CreateAgent(&state.Agent{Name: "oak_0001", Status: state.AgentPending, CreatedAt: time.Now()}); err != nil {
		t.Fatal(err)
	}
	if _, err := first.Bus().Publish(ctx, "ev1", []byte("hello")); err != nil {
		t.Fatal(err)
	}
	second, err := natsstate.Dial(ctx, cfg, noEnv)
	if err != nil {
		t.Fatal(err)
	}
	if a, err := second.Agent("oak_0001"); err != nil || a.Status != state.AgentPending {
		t.Fatalf("the second connection reads %v, %v", a, err)
	}
	if end, err := second.Bus().End(ctx); err != nil || end != 1 {
		t.Fatalf("the second connection's bus ends at %d, %v", end, err)
	}
	second.Close()
	if !second.Conn().NC.IsClosed() {
		t.Fatal("Close left the connection open")
	}
	info, err := natsstate.Lookup(ctx, c, "web")
	if err != nil || info.Name != "web" {
		t.Fatalf("Lookup: %v, %v", info, err)
	}
}

// What keeps Dial from a hub is refused with a Try line naming the key or
// variable to change, and before any request for files it cannot read.
func TestDialRefuses(t *testing.T) {
	h := hubtest.Single(t)
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	closed := "nats://" + ln.Addr().String()
	ln.Close()
	missing := filepath.Join(t.TempDir(), "none")
	for _, c := range []struct {
		name string
		cfg  config.Store
		code errs.Code
		try  string
	}{
		{"local", config.Store{}, errs.Usage, "pm init --store"},
		{"bad url", config.Store{URL: "http://x:1", Project: "p"}, errs.Usage, "nats://HOST:4222"},
		{"nobody listens", config.Store{URL: closed, Project: "p"}, errs.Failure, "store.url"},
		{"no creds file", config.Store{URL: h.URL(0), Project: "p", Creds: missing}, errs.Failure, "store.creds"},
		{"no nkey file", config.Store{URL: h.URL(0), Project: "p", NKey: missing}, errs.Failure, "store.nkey"},
		{"no ca file", config.Store{URL: h.URL(0), Project: "p", TLS: config.StoreTLS{CA: missing}}, errs.Failure, "store.tls.ca"},
		{"no password", config.Store{URL: h.URL(0), Project: "p", User: "pm"}, errs.Failure, "export NATS_PASSWORD"},
		{"bad project", config.Store{URL: h.URL(0), Project: "Bad_Name"}, errs.Usage, "store.project"},
	} {
		t.Run(c.name, func(t *testing.T) {
			st, err := natsstate.Dial(dialCtx(t), c.cfg, noEnv)
			if err == nil {
				st.Close()
				t.Fatal("dialled")
			}
			if !errs.Is(err, c.code) || !strings.Contains(errs.TryOf(err), c.try) {
				t.Fatalf("error %q (code %d), Try %q; want code %d, Try with %q", err, errs.CodeOf(err), errs.TryOf(err), c.code, c.try)
			}
		})
	}
}

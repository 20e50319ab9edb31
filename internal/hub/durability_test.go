package hub_test

import (
	"strings"
	"testing"

	"github.com/nats-io/nkeys"

	"github.com/plasmodium/pm/internal/config"
	"github.com/plasmodium/pm/internal/hub"
	"github.com/plasmodium/pm/internal/hub/hubtest"
	"github.com/plasmodium/pm/internal/natsx"
	"github.com/plasmodium/pm/internal/state/natsstate"
)

// What pm doctor says an acknowledged write survives: on a single pm hub
// every stream is R1 on a node that said it syncs every write; on three,
// R3 with a majority of replicas current; a stream not on the hub is missing.
func TestDurability(t *testing.T) {
	for _, set := range hubtest.Sets() {
		t.Run(set.Name, func(t *testing.T) {
			h := set.Start(t)
			ctx := ctxFor(t)
			c := h.Connect(0)
			st, err := natsstate.Open(ctx, c, "p")
			if err != nil {
				t.Fatal(err)
			}
			ds, err := natsx.Durability(ctx, c, append(st.Streams(), "PM_NONE"))
			if err != nil {
				t.Fatal(err)
			}
			for _, d := range ds[:len(ds)-1] {
				switch set.Name {
				case "single":
					if d.Replicas != 1 || d.Synced == nil || !*d.Synced || !strings.Contains(d.Survives, "every write synced") {
						t.Errorf("%+v on a single node", d)
					}
				case "three":
					// A replica may still be catching up just after the
					// stream is made: a majority is current.
					if d.Replicas != 3 || d.Current < 2 || d.Synced != nil || !strings.HasPrefix(d.Survives, "the loss of any one node") {
						t.Errorf("%+v on three nodes", d)
					}
				}
			}
			if last := ds[len(ds)-1]; !last.Missing {
				t.Errorf("a stream not on the hub: %+v", last)
			}
		})
	}
}

// A single node with credentials says it syncs too: its own in-process
// client logs in (a password, or a key of its own beside the users').
func TestDurabilityWithCredentials(t *testing.T) {
	kp, err := nkeys.CreateUser()
	if err != nil {
		t.Fatal(err)
	}
	pub, err := kp.PublicKey()
	if err != nil {
		t.Fatal(err)
	}
	certs := hubtest.MakeCerts(t)
	for _, a := range []hub.Auth{{User: "pm", Password: "pw"}, {NKeys: []string{pub}},
		{TLSCert: certs.ServerCert, TLSKey: certs.ServerKey, TLSCA: certs.CA}} {
		h := hubtest.SingleWith(t, func(c *hub.Config) { c.Auth = a })
		seed, err := kp.Seed()
		if err != nil {
			t.Fatal(err)
		}
		s := config.Store{URL: h.URL(0), Project: "p"}
		switch {
		case a.User != "":
			s.User = "pm"
		case len(a.NKeys) > 0:
			s.NKey = writeFile(t, "user.nk", seed)
		default:
			s.TLS = config.StoreTLS{CA: certs.CA, Cert: certs.ClientCert, Key: certs.ClientKey}
		}
		c, err := natsx.Dial(ctxFor(t), s, func(string) string { return "pw" })
		if err != nil {
			t.Fatal(err)
		}
		ds, err := natsx.Durability(ctxFor(t), c, []string{natsx.HubStream})
		c.Close()
		if err != nil || ds[0].Synced == nil || !*ds[0].Synced {
			t.Fatalf("with %s: %+v, %v", a.Describe(), ds, err)
		}
	}
}

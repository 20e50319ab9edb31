package hub_test

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/plasmodium/pm/internal/hub"
	"github.com/plasmodium/pm/internal/hub/hubtest"
	"github.com/plasmodium/pm/internal/hubauth"
)

// BenchmarkAccountsRevoke times a revocation on a hub holding many
// projects' accounts, from Revoke to the node having pushed the new JWT:
// the node's passes over the whole authority (each project's keys, JWT,
// machines and the resolver's JWT) before the push, and the ones its own
// push wakes meanwhile, are what it costs.
func BenchmarkAccountsRevoke(b *testing.B) {
	for _, n := range []int{100, 1000} {
		b.Run(fmt.Sprintf("accounts=%d", n), func(b *testing.B) {
			store := b.TempDir()
			a, err := hubauth.MakeStore(store)
			if err != nil {
				b.Fatal(err)
			}
			for i := range n {
				if _, err := a.Issue(fmt.Sprintf("p%04d", i), "m0", "", time.Now()); err != nil {
					b.Fatal(err)
				}
			}
			h := hubtest.SingleWith(b, func(c *hub.Config) { c.StoreDir, c.Auth.Accounts = store, true })
			node := h.Nodes[0]
			ctx := context.Background()
			b.ResetTimer()
			for i := range b.N {
				m := fmt.Sprintf("m%d", i+1)
				if _, err := a.Issue("p0000", m, "", time.Now()); err != nil {
					b.Fatal(err)
				}
				if err := a.Revoke("p0000", m, time.Now()); err != nil {
					b.Fatal(err)
				}
				acc, err := a.Account("p0000")
				if err != nil {
					b.Fatal(err)
				}
				if err := node.WaitPushed(ctx, acc.JWT); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}

// Package hubopen registers the opener of projects on a hub with
// stateopen (stateopen.RegisterHub): natsstate.Dial with the trusted
// config's store section, and the hub's bus (natsbus) as the store's.
// Only pm-full links it (internal/cmdutil imports it), so the small pm
// links no NATS client: it hands a hub project's commands to pm-full.
//
// Invariants:
//   - the records and the bus of one opening share one connection, closed
//     with the records (stateopen.Opened.Close);
//   - connecting is bounded (dialWait): an unreachable hub is an error
//     with natsx's Try line within it, never a wait without end, and never
//     the state directory's files instead.
package hubopen

import (
	"context"
	"os"
	"time"

	"github.com/plasmodium/pm/internal/bus"
	"github.com/plasmodium/pm/internal/errs"
	"github.com/plasmodium/pm/internal/natsx/natsbus"
	"github.com/plasmodium/pm/internal/state"
	"github.com/plasmodium/pm/internal/state/natsstate"
	"github.com/plasmodium/pm/internal/state/stateopen"
	"github.com/plasmodium/pm/internal/store"
)

// dialWait bounds connecting to the hub and finding the project: a cluster
// electing its leaders answers within it.
const dialWait = 15 * time.Second

func init() { stateopen.RegisterHub(Open) }

// Open opens the records and the bus of the hub project s's config names
// (store.url, store.project), reading the password's variable from the
// environment.
func Open(ctx context.Context, s *store.Store) (state.State, bus.Bus, func() error, error) {
	cfg := s.Config().Store
	dctx, cancel := context.WithTimeout(ctx, dialWait)
	defer cancel()
	st, err := natsstate.Dial(dctx, cfg, os.Getenv)
	if err != nil {
		if dctx.Err() != nil && ctx.Err() == nil {
			return nil, nil, nil, errs.Failf("start the hub (pm hub) or check store.url in "+s.ConfigPath()+"; pm doctor reports the store",
				"the hub %s did not answer within %s: %v", cfg.URL, dialWait, err)
		}
		return nil, nil, nil, err
	}
	st.Now, st.IDs = s.Now, s.IDs
	st.EntryLimit = s.Config().Limits.LogEntryBytes
	st.Bounds = state.LogBoundsOf(s.Config())
	b := natsbus.NewBus(context.WithoutCancel(ctx), st.Bus(), s.Now, s.Secrets)
	return st, b, func() error { st.Close(); return nil }, nil
}

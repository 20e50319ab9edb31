// Package stateopen is the one place an open project (its store: config,
// paths, logs, bus) becomes its records (state.State): every surface (the
// cobra commands and pm's short commands, the model tools, MCP, the
// dashboard, the agent host, the supervisor) gets its records from Open,
// once per process or command session, and closes them with it.
//
// Which backend a project's records live on is decided here and nowhere
// else: today always its state directory's files (fsstate); a second
// backend (a hub's, internal/state/natsstate, when the config names one) is
// a case of Open. Nothing else constructs a backend, so choosing one here
// moves every command's records (internal/state's layering test keeps it
// so).
//
// Invariants:
//   - Open is the only constructor of a backend outside tests and the
//     backends' own packages;
//   - what Open returns is closed once, by whoever opened it, when the
//     process or session that opened it ends (litestream's Open/Close
//     shape); a record written before Close is acknowledged already
//     (internal/state's doc.go), so Close loses nothing.
package stateopen

import (
	"context"
	"sync"

	"github.com/plasmodium/pm/internal/state"
	"github.com/plasmodium/pm/internal/state/fsstate"
	"github.com/plasmodium/pm/internal/store"
)

// Opened is a project's records as Open returns them: the state, and
// Close, which releases what opening took.
type Opened struct {
	state.State
	once  sync.Once
	close func() error // nil: nothing to release
}

// Close releases what Open took (a hub's connection and watches; nothing
// for the files). It is safe to call more than once, and on nil (nothing
// was opened).
func (o *Opened) Close() error {
	if o == nil {
		return nil
	}
	var err error
	o.once.Do(func() {
		if o.close != nil {
			err = o.close()
		}
	})
	return err
}

// Open opens the records of the project s is the state directory of. ctx
// bounds what the records hold open beyond a call (a connection's
// watches); the files need nothing.
func Open(ctx context.Context, s *store.Store) (*Opened, error) {
	_ = ctx
	return &Opened{State: fsstate.New(s)}, nil
}

// CheckCaches is the backend's own check of its caches
// (state.CacheChecker), none for a backend without: what Open returns
// keeps it reachable behind the State it embeds.
func (o *Opened) CheckCaches() ([]state.CacheFinding, error) {
	if cc, ok := o.State.(state.CacheChecker); ok {
		return cc.CheckCaches()
	}
	return nil, nil
}

// Package stateopen is the one place an open project (its store: config,
// paths, logs, bus) becomes its records (state.State): every surface (the
// cobra commands and pm's short commands, the model tools, MCP, the
// dashboard, the agent host, the supervisor) gets its records from Open,
// once per process or command session, and closes them with it.
//
// Which backend a project's records live on is decided here and nowhere
// else: the state directory's files (fsstate), or, when the trusted
// config names a hub (store.url: docs/distributed.md), the hub's
// (internal/state/natsstate, through the opener internal/state/hubopen
// registers: only pm-full links it, so the small pm links no NATS client
// and hands a hub project's commands to pm-full). Nothing else constructs
// a backend, so choosing one here moves every command's records
// (internal/state's layering test keeps it so).
//
// Invariants:
//   - Open is the only constructor of a backend outside tests and the
//     backends' own packages;
//   - a project on a hub is opened on the hub or not at all: a hub that
//     cannot be reached, refuses the credentials or lacks the project, or
//     an executable without the hub opener, is an error with a Try line,
//     never the state directory's files instead;
//   - on a hub, the store's bus is the hub's (Hub returns it; Open sets
//     store.EventBus before returning), so events and records are in one
//     place, and a follower on any machine resumes from a cursor;
//   - what Open returns is closed once, by whoever opened it, when the
//     process or session that opened it ends (litestream's Open/Close
//     shape); a record written before Close is acknowledged already
//     (internal/state's doc.go), so Close loses nothing.
package stateopen

import (
	"context"
	"sync"

	"github.com/plasmodium/pm/internal/bus"
	"github.com/plasmodium/pm/internal/errs"
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

// Hub opens the records and the bus of a project whose config names a hub
// (s.OnHub), and what releases them. internal/state/hubopen registers the
// one pm-full links.
type Hub func(ctx context.Context, s *store.Store) (st state.State, b bus.Bus, close func() error, err error)

var (
	hubMu sync.Mutex
	hub   Hub
)

// RegisterHub makes h the opener of projects on a hub (hubopen's init).
func RegisterHub(h Hub) {
	hubMu.Lock()
	defer hubMu.Unlock()
	hub = h
}

// HubLinked reports whether this executable can open a project on a hub:
// the small pm cannot, and hands such a project's commands to pm-full.
func HubLinked() bool {
	hubMu.Lock()
	defer hubMu.Unlock()
	return hub != nil
}

// Open opens the records of the project s is the state directory of. ctx
// bounds what the records hold open beyond a call (a connection's
// watches); the files need nothing. On a hub it also makes the hub's bus
// the store's (s.EventBus).
func Open(ctx context.Context, s *store.Store) (*Opened, error) {
	if !s.OnHub() {
		return &Opened{State: fsstate.New(s)}, nil
	}
	hubMu.Lock()
	h := hub
	hubMu.Unlock()
	if h == nil {
		return nil, errs.Failf("run the command with pm-full (installed beside pm), which opens a hub's records",
			"this project's records are on the hub %s, and this executable cannot open a hub", s.Config().Store.URL)
	}
	st, b, closeFn, err := h(ctx, s)
	if err != nil {
		return nil, err
	}
	s.EventBus = b
	return &Opened{State: st, close: closeFn}, nil
}

// Unwrap is the state Open opened (state.WorkersOf and
// state.AgentLeasesOf look there).
func (o *Opened) Unwrap() state.State { return o.State }

// CheckCaches is the backend's own check of its caches
// (state.CacheChecker), none for a backend without: what Open returns
// keeps it reachable behind the State it embeds.
func (o *Opened) CheckCaches() ([]state.CacheFinding, error) {
	if cc, ok := o.State.(state.CacheChecker); ok {
		return cc.CheckCaches()
	}
	return nil, nil
}

package doctor

import (
	"context"
	"fmt"
	"strings"
	"time"

	"github.com/plasmodium/pm/internal/cmdutil"
	"github.com/plasmodium/pm/internal/errs"
	"github.com/plasmodium/pm/internal/natsx"
	"github.com/plasmodium/pm/internal/natsx/room"
	"github.com/plasmodium/pm/internal/state/hubproject"
)

// storeWait bounds pm doctor's wait for a hub: long enough for a cluster
// electing a leader, short enough to report one that is down.
const storeWait = 10 * time.Second

// StoreReport is where the project's records are and, on a hub, what an
// acknowledged write to each of its streams survives.
type StoreReport struct {
	Kind      string                   `json:"kind"` // "files" or "hub"
	Dir       string                   `json:"dir,omitempty"`
	URL       string                   `json:"url,omitempty"`
	Project   string                   `json:"project,omitempty"`
	Reachable bool                     `json:"reachable"`
	Error     string                   `json:"error,omitempty"` // why it is not
	Try       string                   `json:"try,omitempty"`
	Server    string                   `json:"server,omitempty"`  // the node answering
	Cluster   string                   `json:"cluster,omitempty"` // its cluster, if any
	Streams   []natsx.StreamDurability `json:"streams,omitempty"`
	// RoomFence is what refuses a room append of a host that lost its
	// agent's lease: "hub" (the rooms stream holds the fence subjects:
	// a say and its host's fence mark are one atomic batch) or
	// "host-clock" (a project made before: the host's mark before the
	// call, the append after it unconditioned). "" when not read.
	RoomFence string `json:"room_fence,omitempty"`
}

// Room fences, as RoomFence says them.
const (
	fenceByHub   = "hub"
	fenceByClock = "host-clock"
)

// Store reports the project's store. On a hub it dials, finds the project
// and reads its streams' state: it makes and changes nothing there.
func Store(f *cmdutil.Factory) *StoreReport {
	s, err := f.Store()
	if err != nil {
		return nil // no project here: Confinement says so
	}
	cfg := s.Config().Store
	if !cfg.Remote() {
		return &StoreReport{Kind: "files", Dir: s.Root, Reachable: true}
	}
	r := &StoreReport{Kind: "hub", URL: cfg.URL, Project: cfg.Project}
	ctx, cancel := context.WithTimeout(f.Context, storeWait)
	defer cancel()
	fail := func(err error) *StoreReport {
		r.Error, r.Try = err.Error(), errs.TryOf(err)
		return r
	}
	c, err := natsx.Dial(ctx, cfg, f.Getenv)
	if err != nil {
		return fail(err)
	}
	defer c.Close()
	r.Reachable, r.Server, r.Cluster = true, c.NC.ConnectedServerName(), c.NC.ConnectedClusterName()
	if err := hubproject.Check(ctx, c, cfg.Project); err != nil {
		return fail(err)
	}
	names, err := natsx.ProjectNames(cfg.Project)
	if err != nil {
		return fail(err)
	}
	if r.Streams, err = natsx.Durability(ctx, c, names.Streams()); err != nil {
		return fail(err)
	}
	r.RoomFence = roomFence(ctx, c, names)
	return r
}

// roomFence reads which fence the project's room appends have, from its
// rooms stream's configuration (room.Batches): pm never changes it,
// so a project made before the fence subjects moved there keeps the
// host's clock. "" when the stream cannot be read (Durability says why).
func roomFence(ctx context.Context, c *natsx.Conn, names natsx.Names) string {
	op, cancel := natsx.Op(ctx)
	defer cancel()
	s, err := c.JS.Stream(op, names.Rooms)
	if err != nil {
		return ""
	}
	if room.Batches(s.CachedInfo().Config, names.FencePrefix) {
		return fenceByHub
	}
	return fenceByClock
}

// print writes r for a person.
func (r *StoreReport) print(b *strings.Builder) {
	if r == nil {
		return
	}
	if r.Kind == "files" {
		fmt.Fprintf(b, "\nstore: this machine's files, %s\n", r.Dir)
		return
	}
	fmt.Fprintf(b, "\nstore: hub %s, project %s\n", r.URL, r.Project)
	if !r.Reachable || r.Error != "" {
		fmt.Fprintf(b, "  not usable: %s\n", r.Error)
		if r.Try != "" {
			fmt.Fprintf(b, "  Try: %s\n", r.Try)
		}
		if !r.Reachable {
			return
		}
	}
	where := "node " + r.Server
	if r.Cluster != "" {
		where += " of cluster " + r.Cluster
	}
	fmt.Fprintf(b, "  reachable: yes, %s\n", where)
	if len(r.Streams) > 0 {
		b.WriteString("  an acknowledged write survives, per stream:\n")
	}
	for _, d := range r.Streams {
		fmt.Fprintf(b, "    %-28s %s\n", d.Stream, d.Survives)
	}
	switch r.RoomFence {
	case fenceByHub:
		b.WriteString("  room appends fenced by the hub: a say and its host's fence mark are stored together or not at all\n")
	case fenceByClock:
		b.WriteString("  room appends fenced by the host's clock only: a project made before the hub fenced them keeps its streams as they are\n")
	}
}

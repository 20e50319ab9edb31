package natsstate

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"time"

	"github.com/nats-io/nats.go/jetstream"

	"github.com/plasmodium/pm/internal/config"
	"github.com/plasmodium/pm/internal/errs"
	"github.com/plasmodium/pm/internal/natsx"
)

// ProjectsBucket lists the projects made on a hub, one key each (its
// name). No project's own bucket can be called so (theirs are pm_NAME).
const ProjectsBucket = "PM_PROJECTS"

// ProjectInfo is a project's entry in ProjectsBucket: who made it, when,
// from where. Joining a project reads it; nothing else depends on it.
type ProjectInfo struct {
	Name      string    `json:"name"`
	CreatedAt time.Time `json:"created_at"`
	Host      string    `json:"host,omitempty"` // the machine pm init --store ran on
	Dir       string    `json:"dir,omitempty"`  // its project directory there
}

func projects(ctx context.Context, c *natsx.Conn) (jetstream.KeyValue, error) {
	// Each request of it has its own deadline and rides out a change of
	// leader (natsx.Conn.KeyValue).
	kv, err := c.KeyValue(ctx, jetstream.KeyValueConfig{Bucket: ProjectsBucket, History: 1,
		Replicas: c.Replicas(), Storage: jetstream.FileStorage})
	if err != nil {
		return nil, fmt.Errorf("natsstate: bucket %s: %w", ProjectsBucket, err)
	}
	return kv, nil
}

// Create makes project info.Name on c's hub: its entry, then its buckets
// and streams. A name already taken is refused (exit 5): two projects on
// one hub never share records, and joining one is Lookup's.
func Create(ctx context.Context, c *natsx.Conn, info ProjectInfo) error {
	if _, err := natsx.ProjectNames(info.Name); err != nil {
		return err
	}
	kv, err := projects(ctx, c)
	if err != nil {
		return err
	}
	b, err := json.Marshal(info)
	if err != nil {
		return err
	}
	// Repeated while the hub changes leaders (natsx.Do): a repeat of a
	// create that landed finds the entry, which is ours when it holds our
	// bytes (the time to the nanosecond, the host and the directory).
	unanswered := false
	err = natsx.Do(ctx, func(op context.Context) error {
		_, err := kv.Create(op, info.Name, b)
		unanswered = unanswered || natsx.Transient(err)
		return err
	})
	if errors.Is(err, jetstream.ErrKeyExists) && unanswered {
		var e jetstream.KeyValueEntry
		if gerr := natsx.Do(ctx, func(op context.Context) (err error) { e, err = kv.Get(op, info.Name); return err }); gerr == nil && bytes.Equal(e.Value(), b) {
			err = nil
		}
	}
	if errors.Is(err, jetstream.ErrKeyExists) {
		return errs.Statef("join it with pm init --store URL --project "+info.Name+", or pick another name with --project",
			"the hub already has a project %s", info.Name)
	} else if err != nil {
		return err
	}
	return nil
}

// Lookup reads project's entry on c's hub; a project the hub does not
// have is not found (exit 4), never made by a read.
func Lookup(ctx context.Context, c *natsx.Conn, project string) (*ProjectInfo, error) {
	if _, err := natsx.ProjectNames(project); err != nil {
		return nil, err
	}
	kv, err := projects(ctx, c)
	if err != nil {
		return nil, err
	}
	var e jetstream.KeyValueEntry
	err = natsx.Do(ctx, func(op context.Context) (err error) { e, err = kv.Get(op, project); return err })
	if errors.Is(err, jetstream.ErrKeyNotFound) {
		return nil, errs.NotFoundf("pm init --store URL (without --project) makes a project there; check store.url and store.project",
			"the hub has no project %s", project)
	}
	if err != nil {
		return nil, err
	}
	var info ProjectInfo
	if err := json.Unmarshal(e.Value(), &info); err != nil {
		return nil, fmt.Errorf("natsstate: project %s's entry: %w", project, err)
	}
	return &info, nil
}

// Dial opens the project cfg names on its hub: connects with cfg's
// credentials and TLS (natsx.Dial), finds the project (Lookup: a config
// that names a project the hub does not have is refused, never given an
// empty one), and opens its state and bus. Close ends them. getenv reads
// the password's variable.
func Dial(ctx context.Context, cfg config.Store, getenv func(string) string) (*State, error) {
	c, err := natsx.Dial(ctx, cfg, getenv)
	if err != nil {
		return nil, err
	}
	if _, err := Lookup(ctx, c, cfg.Project); err != nil {
		c.Close()
		return nil, err
	}
	life, cancel := context.WithCancel(context.WithoutCancel(ctx))
	s, err := open(ctx, life, c, cfg.Project)
	if err != nil {
		cancel()
		c.Close()
		return nil, err
	}
	s.LeaseTTLWanted = cfg.LeaseTTL()
	s.close = func() {
		cancel()
		c.Close()
	}
	return s, nil
}

// Conn is the state's connection to its hub.
func (s *State) Conn() *natsx.Conn { return s.c }

// Close ends a state Dial opened: its watches and renewals, then its
// connection. A state Open made on a caller's connection is the caller's
// to end (Close does nothing).
func (s *State) Close() {
	if s.close != nil {
		s.close()
	}
}

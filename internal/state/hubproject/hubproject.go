// Package hubproject makes and checks a project's place on a hub (pm init
// --store makes or joins it before anything is written on this machine; pm
// doctor checks it is there). It is apart from stateopen so that the small
// pm, which opens its records through stateopen, never links the NATS
// client.
//
// Invariant: nothing outside internal/state names the hub backend; these
// are the only hub operations the commands call besides the opener.
package hubproject

import (
	"context"
	"time"

	"github.com/plasmodium/pm/internal/errs"
	"github.com/plasmodium/pm/internal/natsx"
	"github.com/plasmodium/pm/internal/state/natsstate"
)

// New registers a new project named name on the hub c reaches (with
// where it was made, for a person reading the registry) and makes its
// buckets and streams.
func New(ctx context.Context, c *natsx.Conn, name, host, dir string, now time.Time) error {
	if err := natsstate.Create(ctx, c, natsstate.ProjectInfo{Name: name, CreatedAt: now, Host: host, Dir: dir}); err != nil {
		return err
	}
	return prepare(ctx, c, name)
}

// Ensure makes project name on the hub c reaches, or joins it when
// another machine made it first: the first machines of a project whose
// account is its own (pm hub creds) may run pm init at once, and each
// must end in the one project, none refused. made says which it did.
func Ensure(ctx context.Context, c *natsx.Conn, name, host, dir string, now time.Time) (made bool, err error) {
	err = natsstate.Create(ctx, c, natsstate.ProjectInfo{Name: name, CreatedAt: now, Host: host, Dir: dir})
	if errs.Is(err, errs.State) { // the name is taken: by the other machine, a moment ago
		return false, Join(ctx, c, name)
	}
	if err != nil {
		return false, err
	}
	return true, prepare(ctx, c, name)
}

// Join checks that project is on the hub c reaches (exit 4 when it is
// not) and that its buckets and streams are there.
func Join(ctx context.Context, c *natsx.Conn, project string) error {
	if err := Check(ctx, c, project); err != nil {
		return err
	}
	return prepare(ctx, c, project)
}

// Check reports whether project is registered on the hub c reaches: nil,
// or its not-found error.
func Check(ctx context.Context, c *natsx.Conn, project string) error {
	_, err := natsstate.Lookup(ctx, c, project)
	return err
}

// prepare opens the project's records once, which makes what they need.
func prepare(ctx context.Context, c *natsx.Conn, project string) error {
	st, err := natsstate.Open(ctx, c, project)
	if err != nil {
		return err
	}
	st.Close()
	return nil
}

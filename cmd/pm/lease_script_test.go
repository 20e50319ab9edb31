package main_test

import (
	"context"
	"time"

	"github.com/rogpeppe/go-internal/testscript"

	"github.com/plasmodium/pm/internal/natsx"
	"github.com/plasmodium/pm/internal/state/natsstate"
)

// leasefree URL PROJECT AGENT: waits, at most a minute, until no host
// holds AGENT's lease on the hub at URL (a killed host's lease running
// out: nothing says so to a waiter, so its holder is read again, paced).
// Without credentials: for a hub started without any.
func cmdLeaseFree(ts *testscript.TestScript, neg bool, args []string) {
	if neg || len(args) != 3 {
		ts.Fatalf("usage: leasefree URL PROJECT AGENT")
	}
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	c, err := natsx.Connect(ctx, args[0])
	ts.Check(err)
	defer c.Close()
	st, err := natsstate.Open(ctx, c, args[1])
	ts.Check(err)
	for {
		holder, err := st.AgentHolder(ctx, args[2])
		if err == nil && holder == "" {
			return
		}
		select {
		case <-ctx.Done():
			ts.Fatalf("leasefree %s: still held by %q after a minute (%v)", args[2], holder, err)
		case <-time.After(100 * time.Millisecond):
		}
	}
}

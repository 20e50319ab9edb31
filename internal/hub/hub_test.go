package hub_test

import (
	"context"
	"net"
	"strings"
	"testing"
	"time"

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"

	"github.com/plasmodium/pm/internal/errs"
	"github.com/plasmodium/pm/internal/hub"
	"github.com/plasmodium/pm/internal/hub/hubtest"
	"github.com/plasmodium/pm/internal/natsx"
)

func ctxFor(t *testing.T) context.Context {
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	t.Cleanup(cancel)
	return ctx
}

// A single node syncs and keeps what it acknowledged across a restart on
// the same store; its streams have one replica.
func TestSingleNodeKeepsAcknowledgedWrites(t *testing.T) {
	h := hubtest.Single(t)
	ctx := ctxFor(t)
	c := h.Connect(0)
	if c.Replicas() != 1 {
		t.Fatalf("replicas %d on a single node", c.Replicas())
	}
	if !h.Nodes[0].Server().JetStreamConfig().SyncAlways {
		t.Fatal("a single node acknowledges writes it has not synced")
	}
	if _, err := c.Stream(ctx, jetstream.StreamConfig{Name: "T", Subjects: []string{"t.>"}}); err != nil {
		t.Fatal(err)
	}
	ack, err := c.JS.Publish(ctx, "t.a", []byte("kept"))
	if err != nil {
		t.Fatal(err)
	}
	c.Close()
	h.Stop(0)
	h.Start(0)
	c = h.Connect(0)
	s, err := c.JS.Stream(ctx, "T")
	if err != nil {
		t.Fatal(err)
	}
	m, err := s.GetMsg(ctx, ack.Sequence)
	if err != nil || string(m.Data) != "kept" {
		t.Fatalf("after restart: %v %v", m, err)
	}
}

// On three nodes a write acknowledged by the stream is read back after its
// leader is stopped: another node holds it and leads.
func TestClusterAcknowledgedWriteSurvivesLeaderLoss(t *testing.T) {
	h := hubtest.Three(t)
	ctx := ctxFor(t)
	c := h.Connect(0)
	if c.Replicas() != 3 {
		t.Fatalf("replicas %d on a cluster", c.Replicas())
	}
	if _, err := c.Stream(ctx, jetstream.StreamConfig{Name: "T", Subjects: []string{"t.>"}}); err != nil {
		t.Fatal(err)
	}
	ack, err := c.JS.Publish(ctx, "t.a", []byte("kept"))
	if err != nil {
		t.Fatal(err)
	}
	leader := -1
	for i, n := range h.Nodes {
		if n.Server().JetStreamIsStreamLeader("$G", "T") {
			leader = i
		}
	}
	if leader < 0 {
		t.Fatal("no node leads stream T")
	}
	other := (leader + 1) % 3
	oc := h.Connect(other)
	elected := make(chan *nats.Msg, 4)
	sub, err := oc.NC.ChanSubscribe("$JS.EVENT.ADVISORY.STREAM.LEADER_ELECTED.T", elected)
	if err != nil {
		t.Fatal(err)
	}
	defer sub.Unsubscribe()
	if err := oc.NC.Flush(); err != nil {
		t.Fatal(err)
	}
	h.Stop(leader)
	select {
	case <-elected:
	case <-ctx.Done():
		t.Fatal("no new leader for stream T after stopping its leader")
	}
	s, err := oc.JS.Stream(ctx, "T")
	if err != nil {
		t.Fatal(err)
	}
	m, err := s.GetMsg(ctx, ack.Sequence)
	if err != nil || string(m.Data) != "kept" {
		t.Fatalf("after the leader's loss: %v %v", m, err)
	}
}

// Bad addresses and flags are refused before anything starts, each with a
// Try line naming what to change.
func TestStartRefuses(t *testing.T) {
	busy, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer busy.Close()
	dir := t.TempDir()
	for _, c := range []struct {
		name string
		cfg  hub.Config
		code errs.Code
		want string // in the error
		try  string // in the Try line
	}{
		{"listen in use", hub.Config{StoreDir: dir, Listen: busy.Addr().String()}, errs.State, "is in use", "--listen 127.0.0.1:0"},
		{"cluster in use", hub.Config{StoreDir: dir, Listen: "127.0.0.1:0", Cluster: busy.Addr().String()}, errs.State, "is in use", "--cluster 127.0.0.1:0"},
		{"no store", hub.Config{Listen: "127.0.0.1:0"}, errs.Usage, "no store directory", "--store"},
		{"bad listen", hub.Config{StoreDir: dir, Listen: "4222"}, errs.Usage, "--listen", "host:port"},
		{"bad port", hub.Config{StoreDir: dir, Listen: "127.0.0.1:99999"}, errs.Usage, "bad port", "--listen"},
		{"routes alone", hub.Config{StoreDir: dir, Listen: "127.0.0.1:0", Routes: []string{"127.0.0.1:6222"}}, errs.Usage, "--routes without --cluster", "--cluster"},
		{"bad route", hub.Config{StoreDir: dir, Listen: "127.0.0.1:0", Cluster: "127.0.0.1:0", Routes: []string{"http://x:1"}}, errs.Usage, "not host:port", "--routes"},
	} {
		t.Run(c.name, func(t *testing.T) {
			h, err := hub.Start(c.cfg)
			if err == nil {
				h.Close()
				t.Fatal("started")
			}
			if !errs.Is(err, c.code) || !strings.Contains(err.Error(), c.want) || !strings.Contains(errs.TryOf(err), c.try) {
				t.Fatalf("error %q (code %d), Try %q; want code %d, %q, Try with %q", err, errs.CodeOf(err), errs.TryOf(err), c.code, c.want, c.try)
			}
		})
	}
}

// WrongLast is the compare-and-set refusal on one node and on three.
func TestWrongLast(t *testing.T) {
	for _, set := range hubtest.Sets() {
		t.Run(set.Name, func(t *testing.T) {
			h := set.Start(t)
			ctx := ctxFor(t)
			c := h.Connect(0)
			if _, err := c.Stream(ctx, jetstream.StreamConfig{Name: "T", Subjects: []string{"t.>"}}); err != nil {
				t.Fatal(err)
			}
			if _, err := c.JS.Publish(ctx, "t.a", nil, jetstream.WithExpectLastSequencePerSubject(0)); err != nil {
				t.Fatal(err)
			}
			_, err := c.JS.Publish(ctx, "t.a", nil, jetstream.WithExpectLastSequencePerSubject(0))
			if !natsx.WrongLast(err) {
				t.Fatalf("second first write: %v, want a wrong last sequence", err)
			}
			if natsx.WrongLast(context.Canceled) {
				t.Fatal("any error is a wrong last sequence")
			}
		})
	}
}

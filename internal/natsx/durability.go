package natsx

import (
	"context"
	"fmt"
)

// StreamDurability is what an acknowledged write to one stream survives,
// as the hub reports it now.
type StreamDurability struct {
	Stream   string `json:"stream"`
	Missing  bool   `json:"missing,omitempty"`
	Replicas int    `json:"replicas"`
	// Current counts the replicas that hold every acknowledged write now,
	// the leader's included.
	Current int    `json:"current"`
	Leader  string `json:"leader,omitempty"`
	// Synced is, for one replica, whether its node syncs every write
	// before acknowledging it; nil when the node does not say (a server
	// that is not pm hub, HubStream).
	Synced   *bool  `json:"synced,omitempty"`
	Survives string `json:"survives"`
}

// Durability reports each of streams. It reads and changes nothing else.
func Durability(ctx context.Context, c *Conn, streams []string) ([]StreamDurability, error) {
	synced, node := hubSays(ctx, c)
	var out []StreamDurability
	for _, name := range streams {
		d := StreamDurability{Stream: name}
		op, cancel := Op(ctx)
		s, err := c.JS.Stream(op, name)
		if err == nil {
			info, ierr := s.Info(op)
			err = ierr
			if err == nil {
				d.Replicas, d.Current = info.Config.Replicas, 1
				if cl := info.Cluster; cl != nil {
					d.Leader = cl.Leader
					for _, p := range cl.Replicas {
						if p.Current && !p.Offline {
							d.Current++
						}
					}
				}
			}
		}
		cancel()
		if NotFound(err) {
			d.Missing, d.Survives = true, "nothing: the stream is not on the hub"
			out = append(out, d)
			continue
		}
		if err != nil {
			return out, fmt.Errorf("stream %s: %w", name, err)
		}
		if d.Replicas <= 1 && synced != nil && (d.Leader == "" || d.Leader == node) {
			d.Synced = synced
		}
		d.Survives = survives(d)
		out = append(out, d)
	}
	return out, nil
}

// hubSays reads what a pm hub said of its node at start (HubStream).
func hubSays(ctx context.Context, c *Conn) (*bool, string) {
	op, cancel := Op(ctx)
	defer cancel()
	s, err := c.JS.Stream(op, HubStream)
	if err != nil {
		return nil, ""
	}
	info, err := s.Info(op)
	if err != nil {
		return nil, ""
	}
	v, ok := info.Config.Metadata[SyncedKey]
	if !ok {
		return nil, ""
	}
	b := v == "true"
	return &b, info.Config.Metadata[NodeKey]
}

func survives(d StreamDurability) string {
	switch {
	case d.Replicas >= 3:
		s := fmt.Sprintf("the loss of any one node (R%d: a write is acknowledged once a majority holds it)", d.Replicas)
		if d.Current < d.Replicas {
			s += fmt.Sprintf("; now only %d of %d replicas are current", d.Current, d.Replicas)
		}
		return s
	case d.Replicas == 2:
		return "the loss of no node for sure (R2: a majority of two is both)"
	case d.Synced == nil:
		return "R1, on one node that does not say whether it syncs every write (not a pm hub): a crash of that machine may lose the last writes"
	case *d.Synced:
		return "the crash of its machine, not the loss of its disk (R1 on one node, every write synced before it is acknowledged)"
	}
	return "R1 on one node that does not sync every write: a crash of that machine can lose the last acknowledged writes"
}

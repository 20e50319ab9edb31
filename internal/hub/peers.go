package hub

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net"
	"strconv"
	"time"

	"github.com/nats-io/nats-server/v2/server"
	"github.com/nats-io/nats.go"

	"github.com/plasmodium/pm/internal/errs"
)

// peerAsk bounds one question to a peer; peerRetry is the pause before
// asking again a peer not yet answering in this node's system account
// (its subscriptions cross the route just after the route is up).
const (
	peerAsk   = time.Second
	peerRetry = 50 * time.Millisecond
)

// samePeers refuses a node of a cluster with accounts whose running
// peers trust another operator (a node given another authority's copy of
// STORE/accounts): it would start and split the accounts silently, each
// side refusing the other's credentials. A peer is asked over the route,
// in this node's system account, for its server variables (VARZ): one
// that trusts this node's operator shares its system account and answers
// with the operator's key; one that trusts another does not share it and
// never answers here. The peers are the routes given that accept a
// connection now (the first node of a cluster has none up: nothing to
// compare), each asked once its route is up, all within wait.
func (k *keeper) samePeers(ctx context.Context, routes []string, wait time.Duration) error {
	op, err := k.auth.Operator()
	if err != nil {
		return err
	}
	ctx, cancel := context.WithTimeout(ctx, wait)
	defer cancel()
	up := k.peersUp(ctx, routes)
	if up == 0 {
		return nil
	}
	agreed := map[string]bool{}
	for {
		ids, err := k.routed()
		if err != nil {
			return err
		}
		var silent string
		for id, name := range ids {
			if agreed[id] {
				continue
			}
			key, err := k.peerOperator(ctx, id)
			switch {
			case err != nil:
				silent = name
			case key != op.Subject:
				return k.otherOperator(name, op.Subject, "trusts operator "+key)
			default:
				agreed[id] = true
			}
		}
		if len(agreed) >= up && silent == "" {
			return nil
		}
		select {
		case <-ctx.Done():
			if silent == "" {
				// The peers up did not route to this node within the
				// wait (another cluster name, route credentials): none
				// that routes here was seen trusting another operator.
				return nil
			}
			return k.otherOperator(silent, op.Subject, "does not answer in this node's system account")
		case <-time.After(peerRetry):
		}
	}
}

// otherOperator is samePeers' refusal.
func (k *keeper) otherOperator(peer, mine, why string) error {
	return errs.Statef("remove "+k.auth.Dir+", copy STORE/accounts from the cluster's first node (e.g. scp -rp first:STORE/accounts "+k.auth.Dir+"), then start this node again (docs/distributed.md)",
		"hub: this node trusts operator %s (%s), but its peer %s %s: it holds another authority's accounts, and would split the cluster's", mine, k.auth.Dir, peer, why)
}

// peersUp counts the routes given, other than this node's own address,
// that accept a connection now, each looked up and dialled within ctx
// (and a dial within peerAsk).
func (k *keeper) peersUp(ctx context.Context, routes []string) int {
	own := k.srv.ClusterAddr()
	n := 0
	for _, r := range routes {
		u, err := routeURL(r)
		if err != nil || self(ctx, u.Host, own) {
			continue
		}
		d := net.Dialer{Timeout: peerAsk}
		c, err := d.DialContext(ctx, "tcp", u.Host)
		if err != nil {
			continue
		}
		c.Close()
		n++
	}
	return n
}

// self reports whether addr (a route given) is this node's own cluster
// address: its port, on a loopback address or one of this machine's. Its
// name is looked up within ctx: a resolver that does not answer is not
// waited on past the start's wait.
func self(ctx context.Context, addr string, own *net.TCPAddr) bool {
	if own == nil {
		return false
	}
	host, port, err := net.SplitHostPort(addr)
	if err != nil || port != strconv.Itoa(own.Port) {
		return false
	}
	addrs, err := net.DefaultResolver.LookupIPAddr(ctx, host)
	if err != nil {
		return false
	}
	local, _ := net.InterfaceAddrs()
	for _, ia := range addrs {
		ip := ia.IP
		if ip.IsLoopback() || ip.Equal(own.IP) || ip.IsUnspecified() {
			return true
		}
		for _, a := range local {
			if n, ok := a.(*net.IPNet); ok && n.IP.Equal(ip) {
				return true
			}
		}
	}
	return false
}

// routed is the peers this node has a route to now: server id to name.
func (k *keeper) routed() (map[string]string, error) {
	rz, err := k.srv.Routez(&server.RoutezOptions{})
	if err != nil {
		return nil, err
	}
	ids := map[string]string{}
	for _, r := range rz.Routes {
		ids[r.RemoteID] = r.RemoteName
	}
	return ids, nil
}

// peerOperator asks server id, in this node's system account, for the
// operator it trusts.
func (k *keeper) peerOperator(ctx context.Context, id string) (string, error) {
	ask, cancel := context.WithTimeout(ctx, peerAsk)
	defer cancel()
	msg, err := k.sys.RequestWithContext(ask, fmt.Sprintf("$SYS.REQ.SERVER.%s.VARZ", id), nil)
	if err != nil {
		return "", err
	}
	var resp struct {
		Data *struct {
			Operators []struct {
				Subject string `json:"sub"`
			} `json:"trusted_operators_claim"`
		} `json:"data"`
		Error *struct {
			Description string `json:"description"`
		} `json:"error"`
	}
	if err := json.Unmarshal(msg.Data, &resp); err != nil {
		return "", err
	}
	if resp.Error != nil {
		return "", errors.New(resp.Error.Description)
	}
	if resp.Data == nil || len(resp.Data.Operators) == 0 {
		return "", nats.ErrNoResponders
	}
	return resp.Data.Operators[0].Subject, nil
}

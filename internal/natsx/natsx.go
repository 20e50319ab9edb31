package natsx

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"

	"github.com/plasmodium/pm/internal/errs"
)

// Conn is one connection to a hub and its JetStream context.
type Conn struct {
	NC *nats.Conn
	JS jetstream.JetStream
}

// Connect dials url (one or more nats:// URLs, comma-separated) and waits
// until JetStream answers or ctx ends. The URLs are tried in the order
// given (a machine names its own or nearest node first), the next one only
// when the one before cannot be reached; once connected, the client also
// knows every node of the cluster (the server's gossip) and moves to one
// of them if its node goes.
func Connect(ctx context.Context, url string, opts ...nats.Option) (*Conn, error) {
	opts = append([]nats.Option{nats.Name("pm"), nats.MaxReconnects(-1), nats.DontRandomize()}, opts...)
	nc, err := nats.Connect(url, opts...)
	if err != nil {
		return nil, &errs.Error{Code: errs.Failure, Msg: "connect to " + url, Err: err,
			Try: "start a hub (pm hub) or check store.url: is the server up and reachable?"}
	}
	js, err := jetstream.New(nc)
	if err != nil {
		nc.Close()
		return nil, err
	}
	if err := ready(ctx, js); err != nil {
		nc.Close()
		return nil, err
	}
	return &Conn{NC: nc, JS: js}, nil
}

// ready asks for the account's JetStream until it answers: a cluster that
// has just started answers "not available" until its nodes elect a
// leader. This is the one retry loop on a hub's start-up; nothing else in
// pm waits by asking again.
func ready(ctx context.Context, js jetstream.JetStream) error {
	backoff := 10 * time.Millisecond
	var notEnabledSince time.Time
	for {
		// A request no leader takes is never answered: each attempt has
		// its own deadline.
		attempt, cancel := context.WithTimeout(ctx, time.Second)
		_, err := js.AccountInfo(attempt)
		cancel()
		if err == nil {
			return nil
		}
		// An account pushed to one node of a cluster reaches the others a
		// moment later, and until then they answer "not enabled" (CI saw
		// it on the node after pm init's): wait that moment, not longer.
		if errors.Is(err, jetstream.ErrJetStreamNotEnabledForAccount) {
			if notEnabledSince.IsZero() {
				notEnabledSince = time.Now()
			} else if time.Since(notEnabledSince) > AccountSpread {
				return errs.Failf("enable JetStream for this account on the server (pm hub does)", "hub: %v", err)
			}
		}
		select {
		case <-ctx.Done():
			return errs.Failf("is a majority of the hub's nodes up? pm hub on each of them", "hub: JetStream not ready: %v", err)
		case <-time.After(backoff):
		}
		backoff = min(2*backoff, 500*time.Millisecond)
	}
}

// AccountSpread is how long a connection waits for JetStream to be enabled
// for its account on the node it reached: the time an account's update
// takes to spread through a cluster.
const AccountSpread = 5 * time.Second

// Close drains nothing: what was acknowledged is stored.
func (c *Conn) Close() { c.NC.Close() }

// Replicas is how many copies pm's streams keep on this hub: 3 on a
// cluster, 1 on a single node.
func (c *Conn) Replicas() int {
	if c.NC.ConnectedClusterName() != "" {
		return 3
	}
	return 1
}

// Stream opens the stream cfg names, making it with cfg and the hub's
// replication when the hub has none of that name. A stream that exists is
// taken as it is (one lookup: a command opens a project's streams at every
// start, and an update costs the server a write); pm changes no stream's
// configuration once made.
func (c *Conn) Stream(ctx context.Context, cfg jetstream.StreamConfig) (jetstream.Stream, error) {
	var s jetstream.Stream
	err := Do(ctx, func(op context.Context) (err error) { s, err = c.JS.Stream(op, cfg.Name); return err })
	if err == nil {
		return s, nil
	} else if !errors.Is(err, jetstream.ErrStreamNotFound) {
		return nil, fmt.Errorf("stream %s: %w", cfg.Name, err)
	}
	cfg.Replicas = c.Replicas()
	cfg.Storage = jetstream.FileStorage
	// The same configuration again is no change: safe to repeat.
	err = Do(ctx, func(op context.Context) (err error) { s, err = c.JS.CreateOrUpdateStream(op, cfg); return err })
	if err != nil {
		return nil, fmt.Errorf("stream %s: %w", cfg.Name, err)
	}
	return s, nil
}

// KeyValue opens the bucket cfg names, making it with cfg when the hub has
// none of that name; an existing bucket is taken as it is (as Stream),
// but for where its reads go. cfg's replication and storage are the
// caller's.
//
// Its reads go to the stream's leader, which answers a write only once
// it holds it: a bucket answers reads from any replica by default (direct
// gets, which nats.go turns on for every bucket it makes), and a replica
// one write behind answers an older revision or no key, so a read right
// after an acknowledged write could miss it (a project just made read as
// missing, a lease just taken as free, a worker just registered as gone:
// TestKeyValueReadsItsLastWrite). A bucket with direct reads on (just
// made, or made before pm turned them off) has them turned off before its
// handle is made, whose reads follow the stream's configuration as it
// reads it then. Each request rides out a change of leader (Do) and is
// safe to repeat (a create that landed is an existing bucket, the update
// the same configuration again).
func (c *Conn) KeyValue(ctx context.Context, cfg jetstream.KeyValueConfig) (jetstream.KeyValue, error) {
	var s jetstream.Stream
	err := Do(ctx, func(op context.Context) (err error) { s, err = c.JS.Stream(op, KVStream(cfg.Bucket)); return err })
	if errors.Is(err, jetstream.ErrStreamNotFound) {
		// CreateKeyValue, not CreateOrUpdate: a bucket made meanwhile
		// is taken as it is.
		err = Do(ctx, func(op context.Context) error {
			_, err := c.JS.CreateKeyValue(op, cfg)
			if errors.Is(err, jetstream.ErrBucketExists) {
				return nil
			}
			return err
		})
		if err == nil {
			err = Do(ctx, func(op context.Context) (err error) { s, err = c.JS.Stream(op, KVStream(cfg.Bucket)); return err })
		}
	}
	if err != nil {
		return nil, fmt.Errorf("bucket %s: %w", cfg.Bucket, err)
	}
	if sc := s.CachedInfo().Config; sc.AllowDirect {
		sc.AllowDirect = false
		if err := Do(ctx, func(op context.Context) error { _, err := c.JS.UpdateStream(op, sc); return err }); err != nil {
			return nil, fmt.Errorf("bucket %s: reads from its leader: %w", cfg.Bucket, err)
		}
	}
	var kv jetstream.KeyValue
	err = Do(ctx, func(op context.Context) (err error) { kv, err = c.JS.KeyValue(op, cfg.Bucket); return err })
	return kv, err
}

// WrongLast reports a publish refused because the subject's (or the
// stream's) last sequence was not the one it expected (10071), or because
// another write of the subject was still in flight at a replicated
// stream's leader (InProcess). Either way nothing was stored, and reading
// again and retrying is right. Only 10071 is a verdict: a caller that
// reads the refusal as one (a lease lost, a fence moved, a key taken)
// rules InProcess out first, as Put does.
func WrongLast(err error) bool {
	var api *jetstream.APIError
	if !errors.As(err, &api) {
		return false
	}
	return api.ErrorCode == jetstream.JSErrCodeStreamWrongLastSequence || InProcess(err)
}

// InProcess reports a compare-and-set that a replicated stream's leader
// refused because a write of the same subject is in flight there, not
// applied yet (10164). That is no verdict, and it is not only another
// writer's: nats-server answers a write before it clears the write's
// in-flight mark, so the writer's own next compare-and-set, sent at once,
// can meet it (lease.TestOneHoldersConcurrentAppends failed on it in CI).
// Asked again a moment later (WhileInProcess), the answer is a verdict.
func InProcess(err error) bool {
	var api *jetstream.APIError
	return errors.As(err, &api) && api.ErrorCode == jetstream.JSErrCodeStreamWrongLastSequenceConstant
}

// NotFound reports a message, key or stream that is not there.
func NotFound(err error) bool {
	return errors.Is(err, jetstream.ErrMsgNotFound) || errors.Is(err, jetstream.ErrKeyNotFound) ||
		errors.Is(err, jetstream.ErrStreamNotFound)
}

// OpTimeout bounds one request to the hub. A request that no stream leader
// takes (one is being elected) is never answered: without its own
// deadline it would wait as long as its caller's context.
const OpTimeout = 5 * time.Second

// Op is ctx bounded by OpTimeout, for one request.
func Op(ctx context.Context) (context.Context, context.CancelFunc) {
	return context.WithTimeout(ctx, OpTimeout)
}

package hub

import (
	"context"
	"fmt"

	"github.com/nats-io/nats-server/v2/server"
	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"
	"github.com/nats-io/nkeys"

	"github.com/plasmodium/pm/internal/natsx"
)

// announce makes natsx.HubStream on a single node, saying in its
// metadata that the node syncs every write: pm doctor reads it to say
// what an acknowledged write survives. It connects in-process (no port,
// no TLS); with nkeys it logs in with a key made for this start only.
func announce(ctx context.Context, srv *server.Server, a Auth, self nkeys.KeyPair) error {
	var login nats.Option
	switch {
	case a.User != "":
		login = nats.UserInfo(a.User, a.Password)
	case self != nil:
		pub, err := self.PublicKey()
		if err != nil {
			return err
		}
		login = nats.Nkey(pub, self.Sign)
	}
	return announceWith(ctx, srv, login)
}

// announceWith makes natsx.HubStream in the account login (nil: none)
// reaches: with accounts, each project's account has its own.
func announceWith(ctx context.Context, srv *server.Server, login nats.Option) error {
	opts := []nats.Option{nats.InProcessServer(srv), nats.Name("pm hub")}
	if login != nil {
		opts = append(opts, login)
	}
	nc, err := nats.Connect("", opts...)
	if err != nil {
		return err
	}
	defer nc.Close()
	js, err := jetstream.New(nc)
	if err != nil {
		return err
	}
	_, err = js.CreateOrUpdateStream(ctx, jetstream.StreamConfig{Name: natsx.HubStream, Subjects: []string{"pm.hub.announce"},
		Storage: jetstream.FileStorage, MaxMsgs: 1,
		Metadata: map[string]string{natsx.SyncedKey: fmt.Sprint(srv.JetStreamConfig().SyncAlways), natsx.NodeKey: srv.Name()}})
	return err
}

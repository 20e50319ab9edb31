// Package hub runs pm's engine for teams on several machines: a NATS
// server with JetStream, embedded as a Go library (issue 24). One node by
// default, its streams written to a store directory and synced on every
// write; three nodes when each is given a cluster address and the routes
// of the others, its streams replicated to all three (R3).
//
// Invariants:
//   - Start returns a server that accepts connections, or an error and no
//     server: an address in use or not of this machine is refused before
//     anything starts (internal/listen's errors, with the flag to change),
//     and a listener the server itself could not open (it logs a fatal
//     error) shuts it down and is returned, never left half-running.
//   - A single node syncs every write to disk before it acknowledges it
//     (SyncAlways): an acknowledged write survives the machine's crash. A
//     cluster acknowledges a write once a majority holds it (R3), so it
//     survives the loss of any one node; it syncs on the server's interval.
//   - A node other machines can reach has credentials: Start refuses a
//     --listen or --cluster that is not loopback unless clients must show
//     a password, an nkey or a certificate of the node's CA (Auth), and a
//     reachable --cluster unless its routes show a password or a verified
//     certificate. With a certificate the node speaks TLS only.
//   - A single node says that it syncs every write: at start it makes
//     the stream natsx.HubStream with that in its metadata, through an
//     in-process client of its own (announce.go); pm doctor reads it. A
//     node that could not is still served, and doctor says it does not
//     know.
//   - With Auth.Accounts (pm hub --accounts) the node runs in operator
//     mode: it trusts the operator of that authority (internal/hubauth),
//     each project is its own account (nothing exported between them), and
//     no user of the server's own is taken (a --user guards the routes
//     only). Account JWTs live in the nats account resolver in the store;
//     at start the authority's are stored there unless it holds newer ones
//     (a node's stale copy never lifts a revocation). While it runs, a
//     watch on the authority pushes each changed JWT: to this node first
//     (stored before the push returns, so a revoked machine is refused here
//     from then on), then to the cluster through the system account; the
//     server closes a revoked machine's connections. A single node makes
//     natsx.HubStream in each project's account as well.
//   - A revocation is never lifted by a node's re-signing: at start and at
//     every change of its resolver (a JWT another node signed), a node
//     adds the revocations its resolver holds to its own copy of the
//     authority (hubauth.Reconcile) before it pushes anything, so every
//     JWT it pushes holds every revocation it has seen.
//   - A node of a cluster (routes given) whose store holds no whole
//     authority (hubauth.Status) is refused unless Auth.NewAccounts: a
//     fresh operator, or a system account completing a half-made copy,
//     would be trusted by it alone. Only a single node or a cluster's
//     first node opens it with hubauth.MakeStore (which makes or
//     completes it); any other opens it with hubauth.OpenStore, which
//     refuses one not whole.
//   - A node of a cluster with accounts trusts its running peers'
//     operator or does not start: once its routes are up it asks each
//     peer, in its own system account, for the operator the peer trusts
//     (peers.go); a peer of another authority (which never answers there,
//     or names another key) makes Start shut the node down and refuse.
//   - Close shuts the server down and waits for its goroutines and
//     listeners to end: a test that closes its hubs leaks nothing.
//   - The server's own log goes to Config.Log (nothing when nil), never to
//     a process-exiting logger: nats-server's Fatalf exits the process with
//     its default logger; here it becomes Start's error.
package hub

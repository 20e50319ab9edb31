// Package natsx is the one way pm's JetStream packages (natsx/room,
// natsx/natsbus, natsx/lease, natsstate) reach a hub: a connection with its
// JetStream context, the replication its streams get, and the reading of
// JetStream's errors they share.
//
// Invariants:
//   - Every stream pm creates gets Replicas(): 3 on a cluster (a write is
//     acknowledged once two of three nodes hold it), 1 on a single node
//     (which syncs every write, internal/hub). Nothing picks its own.
//   - Connect returns once the hub's JetStream answers: a cluster still
//     electing its leader is waited for (with a deadline), never reported
//     as missing JetStream.
//   - A compare-and-set refusal (a wrong last sequence, which a single
//     node reports as 10071 and a replicated stream as 10164) is one
//     predicate, WrongLast.
package natsx

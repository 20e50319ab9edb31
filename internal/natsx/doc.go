// Package natsx is the one way pm's JetStream packages (natsx/room,
// natsx/natsbus, natsx/lease, natsstate) reach a hub: a connection with its
// JetStream context, the replication its streams get, and the reading of
// JetStream's errors they share.
//
// Invariants:
//   - A project's buckets, streams and subjects are ProjectNames': each
//     holds the project's name between separators no name may hold, so
//     two projects on one hub never share one.
//   - Dial is the one way from a config (store.url and its credentials
//     and TLS files) to a connection: every file is checked readable
//     first, and a refusal (no server, wrong credentials, TLS required or
//     untrusted) comes back with a Try line naming the key to change.
//   - Durability only reads: per stream its replicas, how many are
//     current and, for one replica, whether its node said it syncs every
//     write (a pm hub's HubStream); never a guess where the hub is silent.
//   - Every stream pm creates gets Replicas(): 3 on a cluster (a write is
//     acknowledged once two of three nodes hold it), 1 on a single node
//     (which syncs every write, internal/hub). Nothing picks its own.
//     Stream and KeyValue make a stream or bucket only when the hub has
//     none of that name; one that exists is taken as it is (a lookup at
//     each command's start, not an update): pm changes no stream's
//     configuration once it is made, but one: a key-value bucket's reads
//     go to its stream's leader (KeyValue turns off the direct reads
//     nats.go makes every bucket with, on a bucket that has them), since
//     a replica one write behind answers a read after an acknowledged
//     write with the revision before it, or no key.
//   - Connect returns once the hub's JetStream answers: a cluster still
//     electing its leader is waited for (with a deadline), never reported
//     as missing JetStream.
//   - Every request has its own deadline (Op, OpTimeout): a request no
//     stream leader takes (one is being elected) is never answered, and
//     would otherwise wait as long as its caller's context. What is retried
//     after such a timeout is made idempotent by its caller (a message id,
//     an expected sequence).
//   - Nothing polls: Follow and Wake are ordered consumers the hub pushes
//     to; Wake starts after the stream's last sequence as read before its
//     consumer exists, so every message stored after it returns signals.
//     Its consumer may sit on a replica that pushes a message before the
//     stream's leader (which answers reads) has stored it: a reader woken
//     reads only once Stored says the leader holds what it was woken by
//     (the one wait that asks again: the leader's own store, bounded).
//   - A Wake's consumer error (the consumer deleted, its heartbeats
//     missed, its node gone) signals too, so its waiter reads again; one
//     the ordered consumer does not recover from by itself makes a new
//     consumer after the last message pushed. A waiter never sleeps on a
//     consumer that is gone.
//   - ReadSubject reads a subject the cheapest way: its last message
//     (one request, enough when nothing or only that one is new), then a
//     get per message for a few, and a consumer only for a longer read.
//   - A request safe to repeat rides out a cluster's change of leader
//     through Do: repeated while it fails Transient (no answer in time, no
//     responder, JetStream or the stream's leader unavailable for now),
//     bounded by RideOut (then an error with a Try line asking whether a
//     majority of the nodes is up); never a refusal, and never past its
//     caller's context. Do's loop (ride) is the one retry loop of
//     requests: Stored asks again through it. Connect tries the URLs in
//     the order given (a machine names its own node first).
//   - Put is the one write that is safe to repeat whatever it expects: a
//     message id of the caller's and, for a compare-and-set, the
//     subject's expected last sequence; a repeat refused because its first
//     attempt moved the subject on is recognised as that attempt (the
//     subject's last message carries its id). natsstate's records and
//     natsx/lease's leases write through it.
//   - Create is the one create-if-absent of a key (kv.Create's rule: no
//     message yet, or a delete or expiry marker last, Gone): Puts
//     expecting 0, then the marker's sequence, each attempt with its own
//     message id; a refusal whose subject's last message carries one of
//     those ids is the write landed. A lease's take and natsstate's
//     createKey (a record made once, a prompt object) are it.
//   - A compare-and-set refusal is one predicate, WrongLast: a wrong last
//     sequence (10071), or a write of the subject still in flight at a
//     replicated stream's leader (10164, InProcess). Only the first is a
//     verdict: the leader answers a write before it clears its in-flight
//     mark, so a writer's own next write can meet it. Put, and a lease's
//     batch, ask again while InProcess (WhileInProcess); a caller that
//     reads again and retries anyway (a room's append) needs nothing more.
package natsx

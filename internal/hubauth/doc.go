// Package hubauth keeps the keys of a hub run with accounts (pm hub
// --accounts): the operator that every node trusts, the system account,
// one NATS account per project, and the machines given a credential for
// one project (pm hub creds). It signs NATS JWTs; it links no NATS server
// or client, so pm hub creds runs without either.
//
// Its directory (the authority) holds, each file written whole by rename:
//
//	operator.nk, operator.jwt   the operator's seed and its JWT
//	sys.nk, sys.jwt             the system account's (the hub's own events)
//	projects/P/account.nk       project P's account seed
//	projects/P/account.jwt      its JWT: JetStream on, the revoked machines
//	projects/P/machines.json    the machines issued a credential for P
//
// Invariants:
//   - A seed never leaves the authority except in a machine's credentials
//     file, which holds that machine's own user seed only: a machine
//     never receives an account's, the operator's or another machine's.
//     The directory is 0700 and every file 0600; pm hub creds writes a
//     credentials file 0600 and never over an existing file.
//   - A project is one account: a credential for P is a user of P's
//     account and nothing else, so it reaches no subject, stream or
//     bucket of another project, nor the system account (NATS accounts
//     share nothing they do not export; pm's export none).
//   - Revoking a machine puts its user's key in P's account JWT's
//     revocations; a hub that reads the JWT refuses that key and closes
//     its connections (internal/hub pushes it, without a restart). Other
//     machines' keys, of P or of any project, are untouched.
//   - A re-signing never lifts a revocation another node made: the only
//     ways to open an authority, OpenStore(STORE) and MakeStore(STORE),
//     give it the node's resolver (STORE/accounts-jwt), and Revoke and Reconcile add
//     the revocations of the JWT the resolver holds to the account's
//     (each at the later time), so the revocations only grow.
//   - Whether an authority exists is derived from its files (Status): it
//     is whole when the operator's and the system account's seeds and
//     JWTs are there and agree, the operator's JWT (naming the system
//     account) written last; a crash before that leaves it half-made,
//     which MakeStore completes with the keys it has (a seed is never
//     replaced). OpenStore opens a whole authority only: it refuses one
//     none or half made and changes nothing, so only a hub's single or
//     first node (which calls MakeStore) ever makes an operator or a
//     system account, never pm hub creds nor a cluster's later node.
//   - Reconcile is one pass over the projects, returning their accounts
//     as they then stand; a project whose account JWT and resolver JWT
//     are the texts this Authority last reconciled is two reads, so a
//     push (one project changed) costs a full look at that project only.
//   - IssueTo records a machine only after its credential was delivered
//     (written by the caller): a failed write issues nothing.
//   - Changes are made under the authority's lock (internal/lockedfile),
//     so two pm hub creds at once neither lose a machine nor make two
//     accounts for one project.
//   - A credential says its project: the user JWT carries the tag
//     "pm-project:P" (ProjectIn), so pm init --creds joins the project
//     the credential is for and no other.
package hubauth

// Package bench measures pm as its users meet it: as many short-lived OS
// processes sharing one state directory. It builds (or is given) the pm
// binary, generates state in a temporary directory, runs real pm processes
// and reports figures against the goals of docs/benchmarks.md.
//
// The harness (cmd/pmbench) is not a test: nothing here asserts a wall-clock
// threshold. Correctness checks that do not depend on speed (no lost or torn
// line, a phase closing at exactly its limit) are reported as failures.
//
// Overheads and LandingFlow (overhead.go) are the exception to "real
// processes": what pm adds to each llm call per role is measured in
// process, and the replayed landing flow's ledger is priced at
// ReferenceModel's price.
//
// The hub figures (hub.go, issue 24) run a three-node hub in the harness's
// own process (internal/hub on loopback), real pm processes in several
// project directories joined to one hub project, and the engine's floor
// (raw JetStream on the same cluster) in the same run. The failover figure
// (failover.go) runs real pm worker processes on a one-node hub, kills one
// -9 and times its agent's start on the other, against the lease TTL.
//
// Every loop is bounded by a count and every process by a deadline, so a run
// always stops by itself.
package bench

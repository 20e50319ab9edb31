// Package check looks at the whole state of a state directory for what only
// a crash could leave, without changing anything: pm doctor --check, and
// the kill -9 stress run that ends each trial with it.
//
// Invariants:
//   - it only reads (the state, /proc, the repository's lock files); the
//     repairs belong to the commands and the supervisor that see a state;
//   - the records come through the state interfaces (any backend); what
//     only a backend's own caches can get wrong (fsstate's count marks and
//     indexes) is that backend's check, state.CacheChecker, asked when the
//     backend has one;
//   - on a hub (store.url set) it checks the records (rooms, roles,
//     blockers, unreadable agents), the agents' hosts through their
//     leases (state.AgentLeaseReader: a host holds its agent's lease for
//     its life, on whatever machine) and the live workers, and this
//     machine's checkout and processes (a git index lock, processes of
//     runs no running agent has); not what needs another machine (its
//     supervisor, its worktrees), nor the files' caches: NotChecked says
//     which, and pm doctor --check prints it;
//   - whether a stranded agent will be started again is the same rule as
//     the supervisor's and the workers' (agent.Wanted; its worker while
//     live, any live worker for a gone one's); on a hub a wanted agent
//     placed on no worker is any machine's supervisor's, which this one
//     cannot see, so it is never reported dead-running: it names the worker a
//     finding is for (Finding.Worker), and pm doctor --fix leaves those to
//     the workers;
//   - every finding has a kind (Kinds lists them) and names what it is about,
//     so a harness can count them by kind;
//   - it is meant for a state at rest: a command running meanwhile may show
//     as a finding (a pending role its pm phase is about to start, say).
package check

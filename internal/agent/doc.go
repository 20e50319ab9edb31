// Package agent records agents, starts their hosts (the Launcher) and runs
// one agent inside its host (Host, `pm agent-run NAME`).
//
// Invariants:
//   - every agent runs as `pm agent-run NAME`, started through the
//     Launcher's driver.Driver (the process driver: its own process group);
//     its Handle (pid + start time) is what agent.json stores;
//   - Start checks for a live run and spawns under the agent's lock, so two
//     starters racing (a command and the supervisor) never both spawn it;
//   - Kill marks the agent killed before the driver stops it, so neither the
//     host nor the supervisor records the end as a crash;
//   - only the host signals its own runtime child (same process group, dies
//     with the host through Pdeathsig); everything else goes through the
//     driver, with pm's one stop grace (runtime.stop_grace_seconds).
package agent

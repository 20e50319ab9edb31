package agent

import (
	"fmt"
	"log/slog"

	"github.com/plasmodium/pm/internal/config"
	"github.com/plasmodium/pm/internal/cost"
	"github.com/plasmodium/pm/internal/state"
	"github.com/plasmodium/pm/internal/store"
)

// Dollars of exec agents. A CLI that reports what a run cost (Claude Code's
// stream-json result: its usage and total_cost_usd) gets one ledger entry
// per run, and the dollar caps are checked after it and before the next
// run; a CLI that reports nothing gets an entry of unknown cost per run,
// and no dollar cap can bound it (docs/design.md).

// biller records a run's reported cost in the ledger and the agent's usage
// and signals over when a dollar cap is reached.
func (b *execBudget) biller(s *store.Store, st state.State, log *slog.Logger, a *store.Agent) func(cost.Entry) {
	return func(e cost.Entry) {
		e.Agent, e.Task, e.Runtime = a.Name, a.TaskID, string(config.RuntimeExec)
		if err := b.record(s, st, a, e); err != nil {
			log.Warn("cost not recorded", "err", err)
			return
		}
		if reason := overDollars(s, st, a, b); reason != "" {
			b.halt(reason)
		}
	}
}

// unreported records a run of a CLI that said nothing of its usage: its
// cost is unknown, not zero.
func (b *execBudget) unreported(s *store.Store, st state.State, log *slog.Logger, a *store.Agent) {
	e := cost.Entry{Agent: a.Name, Task: a.TaskID, Runtime: string(config.RuntimeExec), Model: a.Model}
	if err := b.record(s, st, a, e); err != nil {
		log.Warn("cost not recorded", "err", err)
	}
}

func (b *execBudget) record(s *store.Store, st state.State, a *store.Agent, e cost.Entry) error {
	e, err := state.RecordCost(st, e, s.Now(), s.Config().Prices)
	if err != nil {
		return err
	}
	_, err = st.UpdateAgent(a.Name, func(r *store.Agent) error {
		if e.USD != nil {
			r.Usage.USD += *e.USD
		} else {
			r.Usage.Unpriced++
		}
		return nil
	})
	return err
}

// overDollars names the dollar cap the agent has reached, with how to
// raise it, or "". Only known dollars count: an exec run is checked after
// the fact, so nothing is known of the next one. b holds what the human
// allowed beyond a cap, by its key (allowMore), and the host's window on
// the ledger.
func overDollars(s *store.Store, st state.State, a *store.Agent, b *execBudget) string {
	stop, _ := dollarStop(s, st, a, b)
	if stop == nil {
		return ""
	}
	return fmt.Sprintf("over its dollar budget: %s %s of %s (%s); raise it with `%s`, or answer to allow one more %s",
		stop.What, cost.USD(stop.Spent), cost.USD(stop.Limit), stop.Key, (cost.Cap{Key: stop.Key, Limit: stop.Limit}).Raise(), cost.Cap{Key: stop.Key}.OneMore())
}

// dollarStop is the first dollar cap (with b's extra) the agent has
// reached, nil for none, and the caps as config.json says them now (a cap
// raised since the host started counts). The project's windows are read
// through b's window: only what was recorded since the last check.
func dollarStop(s *store.Store, st state.State, a *store.Agent, b *execBudget) (*cost.Stop, cost.Caps) {
	cfg, err := config.LoadConfig(s.ConfigPath())
	if err != nil {
		cfg = *s.Config()
	}
	caps := cfg.Budgets.Caps()
	if !caps.Any() {
		return nil, caps
	}
	r, err := st.Agent(a.Name)
	if err != nil {
		return nil, caps
	}
	return caps.First(state.Spent(st, b.window, r, s.Now, cfg.Prices, func() float64 { return r.Usage.USD }), 0, b.extra), caps
}

// allowMore is the human's answer to the request about an owner given up
// at a dollar cap (its host was resumed by it): one more of each cap it is
// over now (an hour's or a day's worth for a project window), as an llm
// agent's "yes" allows, for this run of its host. A cap still reached
// after one more stops it again at once.
func (b *execBudget) allowMore(s *store.Store, st state.State, a *store.Agent) {
	for {
		stop, caps := dollarStop(s, st, a, b)
		if stop == nil || b.extra[stop.Key] > 0 {
			return
		}
		b.extra[stop.Key] = caps.Limit(stop.Key)
	}
}

package llmagent

import (
	"context"
	"fmt"
	"maps"
	"strings"
	"sync"

	"github.com/plasmodium/pm/internal/agent"
	"github.com/plasmodium/pm/internal/config"
	"github.com/plasmodium/pm/internal/cost"
	"github.com/plasmodium/pm/internal/llm"
	"github.com/plasmodium/pm/internal/request"
	"github.com/plasmodium/pm/internal/state"
	"github.com/plasmodium/pm/internal/store"
)

// spend is the host's account of its agent's dollars between model calls.
type spend struct {
	model string // the model the loop calls, priced by its name

	mu sync.Mutex
	// usd is what the agent spent under its budget: its whole life for an
	// owner or role agent (seeded from agent.json), the current request for
	// a resident (as its other budgets). unpriced counts its calls without
	// a price.
	usd      float64
	unpriced int64
	// next is the prompt side of the last call: the least the next call
	// of the same conversation costs, its prompt holding the last one.
	next float64
	// extra is what the human allowed beyond a cap, by the cap's key
	// (answering its request); it lasts as long as this host.
	extra map[string]float64
	// window is the project's recent spend from the ledger, read from
	// where the last call's check stopped (set by the host; nil reads the
	// ledger afresh at each check).
	window *state.CostWindow
}

func newSpend(model string, u store.Usage) *spend {
	return &spend{model: model, usd: u.USD, unpriced: u.Unpriced, extra: map[string]float64{}}
}

// reset starts a resident's new request.
func (sp *spend) reset() {
	sp.mu.Lock()
	sp.usd, sp.unpriced, sp.next = 0, 0, 0
	sp.mu.Unlock()
}

// record puts one response in the cost ledger and the agent's usage, and
// returns the entry as recorded (USD nil: unknown).
func (r *Runner) record(a *store.Agent, sp *spend, ev llm.Event) cost.Entry {
	s := r.Store
	e := cost.Entry{Agent: a.Name, Task: a.TaskID, Runtime: string(config.RuntimeLLM), Model: sp.model, Turns: 1,
		Usage: ev.Usage.Bill()} // an estimate is no bill: unknown
	e, err := state.RecordCost(r.State, e, s.Now(), s.Config().Prices)
	if err != nil {
		r.Log.Warn("cost not recorded", "err", err)
	}
	next := 0.0
	if p, ok := cost.Lookup(sp.model, s.Config().Prices); ok && e.Usage != nil {
		next = p.PromptDollars(*e.Usage)
	}
	sp.mu.Lock()
	sp.next = next
	if e.USD != nil {
		sp.usd += *e.USD
	} else {
		sp.unpriced++
	}
	sp.mu.Unlock()
	used := ev.Used
	_, _ = r.State.UpdateAgent(a.Name, func(x *store.Agent) error {
		x.Usage.Turns, x.Usage.ToolCalls, x.Usage.Tokens = used.Turns, used.ToolCalls, used.Tokens
		if e.USD != nil {
			x.Usage.USD += *e.USD
		} else {
			x.Usage.Unpriced++
		}
		return nil
	})
	return e
}

// before is the loop's check before each model call: the task's shared
// budget, then the dollar caps. A dollar cap reached asks the human, who may
// raise it (pm config set) or allow one more of it; "no" stops the agent.
func (r *Runner) before(a *store.Agent, sp *spend) func(context.Context, llm.Counters) error {
	return func(ctx context.Context, _ llm.Counters) error {
		if be := r.taskBudget(a); be != nil {
			return be
		}
		for {
			cfg := r.freshConfig() // a cap raised with pm config set counts at once
			be := r.dollarBudget(a, sp, cfg)
			if be == nil {
				return nil
			}
			if be.LimitUSD == 0 { // unknowable: no price; nothing to allow
				return be
			}
			goOn, err := r.askMore(ctx, a, be)
			if err != nil {
				return err
			}
			if !goOn {
				return be
			}
			if cfg := r.freshConfig(); r.dollarBudget(a, sp, cfg) != nil {
				sp.mu.Lock()
				sp.extra[be.Key] += cfg.Budgets.Caps().Limit(be.Key)
				sp.mu.Unlock()
			}
		}
	}
}

// freshConfig reads config.json again (a host lives long; the caps a
// person raises must reach it), falling back to the one loaded at start.
func (r *Runner) freshConfig() *config.Config {
	c, err := config.LoadConfig(r.Store.ConfigPath())
	if err != nil {
		return r.Store.Config()
	}
	return &c
}

// dollarBudget reports the first dollar cap the next call may not start
// under: the agent's, its task's, the project's last hour and last 24 hours.
// With a cap set and the model unpriced (or an endpoint that reports no
// usage) the spend is unknown: that stops the agent too, rather than spend
// without a bound.
func (r *Runner) dollarBudget(a *store.Agent, sp *spend, cfg *config.Config) *llm.BudgetError {
	caps := cfg.Budgets.Caps()
	if !caps.Any() {
		return nil
	}
	sp.mu.Lock()
	usd, unpriced, next := sp.usd, sp.unpriced, sp.next
	extra := maps.Clone(sp.extra)
	sp.mu.Unlock()
	if _, ok := cost.Lookup(sp.model, cfg.Prices); !ok || unpriced > 0 {
		return &llm.BudgetError{What: fmt.Sprintf("dollars unknown (model %q has no price, or its endpoint reports no usage; add it to prices in config.json)", sp.model),
			Key: caps.FirstKey(), UsedUSD: usd}
	}
	st := caps.First(state.Spent(r.State, sp.window, a, r.Store.Now, cfg.Prices, func() float64 { return usd }), next, extra)
	if st == nil {
		return nil
	}
	return &llm.BudgetError{What: st.What, Key: st.Key, LimitUSD: st.Limit, UsedUSD: st.Spent, Next: st.Next}
}

// askMore puts the stop to the human as a request and waits for the
// answer: "no" (or "stop") stops the agent, anything else lets it go on
// (with the cap raised in config.json, or one more of it for this host).
func (r *Runner) askMore(ctx context.Context, a *store.Agent, be *llm.BudgetError) (bool, error) {
	s := r.Store
	limit := r.freshConfig().Budgets.Caps().Limit(be.Key)
	raise := (cost.Cap{Key: be.Key, Limit: be.LimitUSD}).Raise()
	q := fmt.Sprintf("@%s paused before a model call: %v. Raise the cap with `%s` and answer this request, "+
		"or answer \"yes\" to allow one more %s (%s) for this agent; \"no\" stops it.",
		a.Name, be, raise, cost.Cap{Key: be.Key}.OneMore(), cost.USD(limit))
	r.activity(a.Name, agent.ActivityWaiting)
	defer r.activity(a.Name, agent.ActivityWorking)
	rq, err := request.Create(s, r.State, store.Actor{Name: a.Name, Agent: a}, q)
	if err != nil {
		return false, err
	}
	done, err := request.Wait(ctx, s, r.State, rq.ID)
	if err != nil {
		return false, err
	}
	switch strings.ToLower(strings.TrimSpace(done.Answer)) {
	case "n", "no", "stop":
		return false, nil
	}
	return true, nil
}

package inbox

import (
	"encoding/json"
	"slices"

	"github.com/plasmodium/pm/internal/state"
)

// MaxChain bounds how far Chains walks a cascade back, and MaxChains how
// many cascades it returns.
const (
	MaxChain  = 32
	MaxChains = 64
)

// Chains are the cascades a call from `from` would extend, each nearest
// first: from, an agent waiting for from's answer, that one's caller, and so
// on, as each request's cause records it; a cascade ends at the human, at a
// call with no caller, at MaxChain names, or where it meets a name it holds
// already. Who waits for an agent's answer: with a cause (an llm resident
// answering one request), the caller of that request; with none, the
// caller of every request past its inbox cursor (an exec resident answers
// none one at a time: each caller of its run waits on it). An agent that
// nobody waits on is a chain of one.
func Chains(st state.Mailboxes, from, cause string) [][]string {
	var out [][]string
	var walk func(chain []string, name, cause string)
	walk = func(chain []string, name, cause string) {
		reqs := waitingOn(st, name, cause)
		if len(reqs) == 0 || len(chain) >= MaxChain {
			out = append(out, chain)
			return
		}
		for _, r := range reqs {
			if len(out) >= MaxChains {
				return
			}
			next := append(slices.Clip(chain), r.From)
			if slices.Contains(chain, r.From) {
				out = append(out, next) // a loop already: nothing further to learn
				continue
			}
			walk(next, r.From, r.Cause)
		}
	}
	walk([]string{from}, from, cause)
	return out
}

// waitingOn is the requests name is answering, whose callers wait for it:
// the one cause names, or with no cause every request past its cursor. The
// human's requests end a chain and are left out.
func waitingOn(st state.Mailboxes, name, cause string) []Message {
	var off int64
	if cause == "" {
		off, _ = st.MailboxCursor(name)
	}
	var out []Message
	_, _ = st.ReadMailbox(name, off, func(raw json.RawMessage, _ int64) error {
		var m Message
		if json.Unmarshal(raw, &m) != nil || m.Kind != KindRequest || m.From == "human" || m.From == "" {
			return nil
		}
		if cause == "" || m.Corr == cause {
			out = append(out, m)
		}
		return nil
	})
	return out
}

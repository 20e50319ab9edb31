package inbox

import (
	"encoding/json"

	"github.com/plasmodium/pm/internal/state"
)

// MaxChain bounds how far Chain walks a cascade back.
const MaxChain = 32

// Chain is the cascade a call from `from` would extend, nearest first:
// from, the one that called it with the request it is answering (cause),
// that one's caller, and so on, as each request's cause records it (at
// most MaxChain names; it ends at the human or a call with no cause).
func Chain(st state.Mailboxes, from, cause string) []string {
	chain := []string{from}
	for name := from; cause != "" && len(chain) < MaxChain; {
		var req *Message
		want := cause
		_, _ = st.ReadMailbox(name, 0, func(raw json.RawMessage, _ int64) error {
			var m Message
			if json.Unmarshal(raw, &m) == nil && m.Kind == KindRequest && m.Corr == want {
				req = &m
			}
			return nil
		})
		if req == nil || req.From == "human" || req.From == "" {
			break
		}
		chain = append(chain, req.From)
		name, cause = req.From, req.Cause
	}
	return chain
}

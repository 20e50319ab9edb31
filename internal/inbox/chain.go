package inbox

import (
	"github.com/plasmodium/pm/internal/jsonl"
	"github.com/plasmodium/pm/internal/store"
)

// MaxChain bounds how far Chain walks a cascade back.
const MaxChain = 32

// Chain is the cascade a call from `from` would extend, nearest first:
// from, the one that called it with the request it is answering (cause),
// that one's caller, and so on, as each request's cause records it (at
// most MaxChain names; it ends at the human or a call with no cause).
func Chain(s *store.Store, from, cause string) []string {
	chain := []string{from}
	for name := from; cause != "" && len(chain) < MaxChain; {
		msgs, err := jsonl.ReadAll[Message](s.InboxPath(name), nil)
		if err != nil {
			break
		}
		var req *Message
		for i := len(msgs) - 1; i >= 0; i-- {
			if msgs[i].Kind == KindRequest && msgs[i].Corr == cause {
				req = &msgs[i]
				break
			}
		}
		if req == nil || req.From == "human" || req.From == "" {
			break
		}
		chain = append(chain, req.From)
		name, cause = req.From, req.Cause
	}
	return chain
}

package chat

import (
	"github.com/plasmodium/pm/internal/cmdutil"
	"github.com/plasmodium/pm/internal/phase"
	"github.com/plasmodium/pm/internal/store"
)

// wait blocks until the phase holds a message from someone else that the
// actor has not been shown, prints every unseen message and returns (exit 5
// when the phase closed with nothing new from others).
func wait(f *cmdutil.Factory, s *store.Store, actor store.Actor, ph *store.Phase, o Options) error {
	w, err := phase.WaitNew(f.Context, s, actor, ph)
	if w != nil {
		for _, raw := range w.Fresh {
			if perr := printRaw(f, o.JSON, raw); perr != nil {
				return perr
			}
		}
	}
	return err
}

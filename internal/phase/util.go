package phase

import (
	"strconv"

	"github.com/plasmodium/pm/internal/state"
	"github.com/plasmodium/pm/internal/state/fsstate"
	"github.com/plasmodium/pm/internal/store"
)

func itoa(n int) string { return strconv.Itoa(n) }

// records is where phases, their rooms and the tasks they read are kept:
// the state interfaces over the session's store (doc.go says what still
// reads the store directly).
func records(s *store.Store) state.State { return fsstate.New(s) }

package memstate_test

import (
	"testing"

	"github.com/plasmodium/pm/internal/state"
	"github.com/plasmodium/pm/internal/state/memstate"
	"github.com/plasmodium/pm/internal/state/statetest"
)

func TestConformance(t *testing.T) {
	statetest.Run(t, func(t *testing.T) state.State { return memstate.New() })
}

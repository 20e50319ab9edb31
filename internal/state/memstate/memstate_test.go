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

// The totals of the agents' logs (statetest.RunLogBounds).
func TestLogBounds(t *testing.T) {
	statetest.RunLogBounds(t, func(t *testing.T, b state.LogBounds) state.State {
		m := memstate.New()
		m.Bounds = b
		return m
	})
}

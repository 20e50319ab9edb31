package fsstate_test

import (
	"testing"

	"github.com/plasmodium/pm/internal/state"
	"github.com/plasmodium/pm/internal/state/fsstate"
	"github.com/plasmodium/pm/internal/state/statetest"
	"github.com/plasmodium/pm/internal/store"
)

// Each test gets a state directory of its own, made by pm init's Init.
func TestConformance(t *testing.T) {
	statetest.Run(t, func(t *testing.T) state.State {
		root, _, err := store.Init(t.TempDir(), nil)
		if err != nil {
			t.Fatal(err)
		}
		s, err := store.Open(root)
		if err != nil {
			t.Fatal(err)
		}
		return fsstate.New(s)
	})
}

// The totals of the agents' logs (statetest.RunLogBounds), set in the
// project's config as limits.transcript_bytes and limits.reply_bytes.
func TestLogBounds(t *testing.T) {
	statetest.RunLogBounds(t, func(t *testing.T, b state.LogBounds) state.State {
		root, _, err := store.Init(t.TempDir(), nil)
		if err != nil {
			t.Fatal(err)
		}
		s, err := store.Open(root)
		if err != nil {
			t.Fatal(err)
		}
		s.Config().Limits.TranscriptBytes, s.Config().Limits.ReplyBytes = b.Transcript, b.Replies
		return fsstate.New(s)
	})
}

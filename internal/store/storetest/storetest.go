// Package storetest makes real state directories for tests.
package storetest

import (
	"testing"
	"time"

	"github.com/plasmodium/pm/internal/store"
)

// New runs store.Init in a fresh temporary project directory and opens it.
func New(t testing.TB) *store.Store {
	t.Helper()
	root, _, err := store.Init(t.TempDir(), time.Now)
	if err != nil {
		t.Fatal(err)
	}
	s, err := store.Open(root)
	if err != nil {
		t.Fatal(err)
	}
	return s
}

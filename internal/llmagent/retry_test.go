package llmagent

import (
	"testing"

	"github.com/plasmodium/pm/internal/llm"
	"github.com/plasmodium/pm/internal/store"
)

func TestRetryPolicyFromConfig(t *testing.T) {
	three, zero := 3, 0
	tests := []struct {
		name string
		set  llm.RetryPolicy
		m    store.Model
		want int // MaxAttempts; 0: llm's default
	}{
		{"default", llm.RetryPolicy{}, store.Model{}, 0},
		{"retries 3: four attempts", llm.RetryPolicy{}, store.Model{Retries: &three}, 4},
		{"retries 0: one attempt", llm.RetryPolicy{}, store.Model{Retries: &zero}, 1},
		{"a test's policy wins", llm.RetryPolicy{MaxAttempts: 1}, store.Model{Retries: &three}, 1},
	}
	for _, tt := range tests {
		if got := retryPolicy(tt.set, tt.m).MaxAttempts; got != tt.want {
			t.Errorf("%s: MaxAttempts %d, want %d", tt.name, got, tt.want)
		}
	}
}

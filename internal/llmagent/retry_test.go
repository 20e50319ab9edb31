package llmagent

import (
	"testing"

	"github.com/plasmodium/pm/internal/config"
	"github.com/plasmodium/pm/internal/llm"
)

func TestRetryPolicyFromConfig(t *testing.T) {
	three, zero := 3, 0
	tests := []struct {
		name string
		set  llm.RetryPolicy
		m    config.Model
		want int // MaxAttempts; 0: llm's default
	}{
		{"default", llm.RetryPolicy{}, config.Model{}, 0},
		{"retries 3: four attempts", llm.RetryPolicy{}, config.Model{Retries: &three}, 4},
		{"retries 0: one attempt", llm.RetryPolicy{}, config.Model{Retries: &zero}, 1},
		{"a test's policy wins", llm.RetryPolicy{MaxAttempts: 1}, config.Model{Retries: &three}, 1},
	}
	for _, tt := range tests {
		if got := retryPolicy(tt.set, tt.m).MaxAttempts; got != tt.want {
			t.Errorf("%s: MaxAttempts %d, want %d", tt.name, got, tt.want)
		}
	}
}

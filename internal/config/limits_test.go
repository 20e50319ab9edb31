package config_test

import (
	"fmt"
	"strings"
	"testing"

	"github.com/plasmodium/pm/internal/config"
)

// The agents' logs' limits load within their ranges and are refused,
// naming the key, outside them: limits.log_entry_bytes up to what it could
// be set to when it was made (LogEntryBytesAccepted, whatever
// MaxLogEntryBytes is now: a config valid then loads), the totals 0 or at
// least MinLogBytes.
func TestLogLimits(t *testing.T) {
	for _, tt := range []struct {
		name, limits string
		key          string // empty: it loads
	}{
		{"none", `{}`, ""},
		{"entry", `{"log_entry_bytes": 4096}`, ""},
		{"entry at the most", fmt.Sprintf(`{"log_entry_bytes": %d}`, config.MaxLogEntryBytes), ""},
		{"entry as it could be first", `{"log_entry_bytes": 1048575}`, ""},
		{"entry over", `{"log_entry_bytes": 1048576}`, "log_entry_bytes"},
		{"entry below 0", `{"log_entry_bytes": -1}`, "log_entry_bytes"},
		{"totals", fmt.Sprintf(`{"transcript_bytes": %d, "reply_bytes": %d}`, config.MinLogBytes, 64<<20), ""},
		{"transcript under the least", fmt.Sprintf(`{"transcript_bytes": %d}`, config.MinLogBytes-1), "transcript_bytes"},
		{"transcript below 0", `{"transcript_bytes": -5}`, "transcript_bytes"},
		{"replies under the least", `{"reply_bytes": 4096}`, "reply_bytes"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			_, err := config.Parse("config.json", []byte(`{"limits": `+tt.limits+`}`))
			if tt.key == "" {
				if err != nil {
					t.Fatalf("refused: %v", err)
				}
				return
			}
			if err == nil || !strings.Contains(err.Error(), "limits."+tt.key) {
				t.Fatalf("err = %v, want one naming limits.%s", err, tt.key)
			}
		})
	}
}

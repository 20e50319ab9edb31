package llmagent

import (
	"github.com/plasmodium/pm/internal/bus"
	"strings"
	"testing"
	"time"
)

// output holds streamed pieces until a chunk is full, a line ends or the
// interval has passed; the end of a response sends the rest; a retry drops
// what is held and tells readers to drop what they were shown.
func TestOutputCoalesces(t *testing.T) {
	type step struct {
		op      string // delta, tick (advance the clock), end, retry
		text    string
		advance time.Duration
	}
	cases := []struct {
		name  string
		steps []step
		want  []string // published pieces; "!retry" for a retry notice
	}{
		{"small pieces wait for the end", []step{{op: "delta", text: "Hel"}, {op: "delta", text: "lo"}, {op: "end"}}, []string{"Hello"}},
		{"a newline sends at once", []step{{op: "delta", text: "one\n"}, {op: "delta", text: "two"}, {op: "end"}}, []string{"one\n", "two"}},
		{"a full chunk sends at once", []step{{op: "delta", text: strings.Repeat("x", outputChunk)}, {op: "end"}}, []string{strings.Repeat("x", outputChunk)}},
		{"the interval sends what is held", []step{{op: "delta", text: "a"}, {op: "tick", advance: outputEvery}, {op: "delta", text: "b"}, {op: "delta", text: "c"}, {op: "end"}}, []string{"ab", "c"}},
		{"an empty response sends nothing", []step{{op: "end"}}, nil},
		{"a retry before anything was sent is silent", []step{{op: "delta", text: "lost"}, {op: "retry"}, {op: "delta", text: "kept"}, {op: "end"}}, []string{"kept"}},
		{"a retry after a piece was sent is announced", []step{{op: "delta", text: "shown\n"}, {op: "delta", text: "held"}, {op: "retry"}, {op: "delta", text: "again"}, {op: "end"}}, []string{"shown\n", "!retry", "again"}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			now := time.Unix(0, 0)
			var got []string
			o := &output{now: func() time.Time { return now }, publish: func(text string, data bus.Payload) {
				if d, _ := data.(bus.AgentOutput); d.Retry {
					text = "!retry"
				}
				got = append(got, text)
			}}
			for _, s := range c.steps {
				switch s.op {
				case "delta":
					o.delta(s.text)
				case "tick":
					now = now.Add(s.advance)
				case "end":
					o.end()
				case "retry":
					o.retry()
				}
			}
			if strings.Join(got, "|") != strings.Join(c.want, "|") {
				t.Fatalf("published %q, want %q", got, c.want)
			}
		})
	}
}

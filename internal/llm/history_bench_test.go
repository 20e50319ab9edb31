package llm

import (
	"fmt"
	"strings"
	"testing"

	openai "github.com/sashabaranov/go-openai"
)

// BenchmarkHistoryCheck is what keeping a running loop's history to its
// transcript's bound costs per step (an assistant message with one call
// and its result, the result of the size named): "check" is the count and
// the comparison alone (the history under its bound); "append" is the
// whole append of the step to a transcript on files, without a bound on
// the history and with one (4 MiB, the least limits.transcript_bytes, so
// the read-backs at the bound are in the figure, amortised over the steps).
func BenchmarkHistoryCheck(b *testing.B) {
	for _, size := range []int{1 << 10, 16 << 10} {
		stepOf := func(i int) []openai.ChatCompletionMessage {
			id := fmt.Sprint("call_", i)
			return []openai.ChatCompletionMessage{
				{Role: "assistant", ToolCalls: []openai.ToolCall{{ID: id, Type: "function", Function: openai.FunctionCall{Name: "think", Arguments: `{"thought":"a step"}`}}}},
				{Role: "tool", ToolCallID: id, Content: strings.Repeat("r", size)},
			}
		}
		b.Run(fmt.Sprintf("check/result=%dKiB", size>>10), func(b *testing.B) {
			l := &Loop{Transcript: &MemTranscript{}, HistoryBytes: 1 << 62}
			step := stepOf(0)
			b.ReportAllocs()
			for b.Loop() {
				l.counted(step)
				if err := l.keepBound(); err != nil {
					b.Fatal(err)
				}
			}
		})
		for _, bounded := range []bool{false, true} {
			b.Run(fmt.Sprintf("append/result=%dKiB/bounded=%v", size>>10, bounded), func(b *testing.B) {
				const bound = 4 << 20
				tr := boundedTranscript(b, bound)
				l := &Loop{Transcript: tr}
				if bounded {
					l.HistoryBytes = bound
				}
				if err := l.load(); err != nil {
					b.Fatal(err)
				}
				l.history = append(l.history, openai.ChatCompletionMessage{Role: "user", Content: "go"})
				b.ReportAllocs()
				i := 0
				for b.Loop() {
					if err := l.append(stepOf(i)...); err != nil {
						b.Fatal(err)
					}
					i++
				}
				b.ReportMetric(float64(historySize(l.history))/(1<<20), "MiB-held")
			})
		}
	}
}

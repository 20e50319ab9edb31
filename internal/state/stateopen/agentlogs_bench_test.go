package stateopen_test

import (
	"fmt"
	"strings"
	"testing"
	"time"

	openai "github.com/sashabaranov/go-openai"

	"github.com/plasmodium/pm/internal/cost"
	"github.com/plasmodium/pm/internal/state"
	"github.com/plasmodium/pm/internal/state/fsstate"
	"github.com/plasmodium/pm/internal/state/natsstate"
	"github.com/plasmodium/pm/internal/state/stateopen"
	"github.com/plasmodium/pm/internal/state/transcript"
	"github.com/plasmodium/pm/internal/store"
)

// What a conversation view's tail (Last(5)) and a resume (Load) cost on a
// transcript of 1,000 messages, on files and on a local single-node hub
// (go test -run - -bench AgentLogs ./internal/state/stateopen/):
// docs/distributed.md, "What lives where".
func BenchmarkAgentLogsTranscript(b *testing.B) {
	const turns = 1000
	msgs := make([]openai.ChatCompletionMessage, turns)
	for i := range msgs {
		msgs[i] = openai.ChatCompletionMessage{Role: "assistant", Content: fmt.Sprintf("turn %d, of about the length of a short reply", i)}
	}
	backends := benchBackends()
	for _, name := range []string{"files", "hub"} {
		st := backends[name](b)
		tr := transcript.Of(st, "greeter")
		if err := tr.Append(msgs...); err != nil {
			b.Fatal(err)
		}
		b.Run(name+"/Last5", func(b *testing.B) {
			for range b.N {
				if last, total, err := tr.Last(5); err != nil || len(last) != 5 || total != turns {
					b.Fatalf("Last(5) = %d of %d, %v", len(last), total, err)
				}
			}
		})
		b.Run(name+"/Load", func(b *testing.B) {
			for range b.N {
				if all, err := tr.Load(); err != nil || len(all) != turns {
					b.Fatalf("Load = %d, %v", len(all), err)
				}
			}
		})
		b.Run(name+"/Append", func(b *testing.B) {
			for i := range b.N {
				if err := tr.Append(msgs[i%turns]); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}

// What keeping a transcript to its total costs an append (docs/
// benchmarks.md): "Append" is a message appended to a transcript far under
// its bound (the check alone: a stat on the files, a sum in memory on the
// hub); "AppendCut" the same at a bound of 256 KiB, reached at once, so
// the cuts (a quarter of the bound dropped, the files rewritten) are
// paid for in the figure, spread over the appends between them.
func BenchmarkTranscriptBound(b *testing.B) {
	msg := openai.ChatCompletionMessage{Role: "user", Content: strings.Repeat("a short reply, of a few words. ", 10)}
	for _, name := range []string{"files", "hub"} {
		for _, bound := range []int64{0, 256 << 10} {
			var st state.State
			if name == "files" {
				root, _, err := store.Init(b.TempDir(), nil)
				if err != nil {
					b.Fatal(err)
				}
				s, err := store.Open(root)
				if err != nil {
					b.Fatal(err)
				}
				s.Config().Limits.TranscriptBytes = bound
				st = fsstate.New(s)
			} else {
				hub := benchBackends()[name](b).(*stateopen.Opened).State.(*natsstate.State)
				hub.Bounds.Transcript = bound
				st = hub
			}
			tr := transcript.Of(st, "greeter")
			what := "Append"
			if bound > 0 {
				what = "AppendCut"
			}
			b.Run(name+"/"+what, func(b *testing.B) {
				for range b.N {
					if err := tr.Append(msg); err != nil {
						b.Fatal(err)
					}
				}
			})
		}
	}
}

// benchBackends are the two places a project's agent logs live: its files,
// and a local single-node hub.
func benchBackends() map[string]func(b *testing.B) state.State {
	return map[string]func(b *testing.B) state.State{
		"files": func(b *testing.B) state.State {
			root, _, err := store.Init(b.TempDir(), nil)
			if err != nil {
				b.Fatal(err)
			}
			s, err := store.Open(root)
			if err != nil {
				b.Fatal(err)
			}
			return fsstate.New(s)
		},
		"hub": func(b *testing.B) state.State {
			_, _, sta, _ := twoMachines(b, "bench-00000b")
			return sta
		},
	}
}

// What a model call's dollar check costs (the project's last hour and
// last day, state.Spent) with a ledger of 10,000 entries, each call
// recording one more: "whole" reads the whole ledger for each window (as
// every call did before the review), "cursor" keeps one CostWindow for the
// host's life, reading only what was recorded since the last check
// (go test -run - -bench DollarCheck ./internal/state/stateopen/;
// docs/benchmarks.md).
func BenchmarkDollarCheck(b *testing.B) {
	const entries = 10000
	usd := 0.01
	now := time.Now()
	for _, name := range []string{"files", "hub"} {
		st := benchBackends()[name](b)
		for i := range entries {
			at := now.Add(-time.Duration(entries-i) * 8 * time.Second) // the last 22 hours
			if err := st.AppendCost(cost.Entry{At: at, Agent: "oak_0001", Runtime: "llm", Model: "m", Turns: 1, USD: &usd}); err != nil {
				b.Fatal(err)
			}
		}
		for _, mode := range []string{"whole", "cursor"} {
			b.Run(name+"/"+mode, func(b *testing.B) {
				var w *state.CostWindow
				if mode == "cursor" {
					w = state.NewCostWindow(st)
					// The host's first check reads the day once.
					state.Spent(st, w, &state.Agent{Name: "oak_0001"}, time.Now, nil, func() float64 { return 0 }).Window(time.Hour)
				}
				for range b.N {
					b.StopTimer()
					if err := st.AppendCost(cost.Entry{At: time.Now(), Agent: "oak_0001", Runtime: "llm", Model: "m", Turns: 1, USD: &usd}); err != nil {
						b.Fatal(err)
					}
					b.StartTimer()
					sp := state.Spent(st, w, &state.Agent{Name: "oak_0001"}, time.Now, nil, func() float64 { return 0 })
					if mode == "whole" { // the check as it was: each window read the whole ledger
						sp.Window = func(d time.Duration) float64 {
							from := time.Now().Add(-d)
							entries, err := state.PricedCosts(st, from, nil)
							if err != nil {
								b.Fatal(err)
							}
							return cost.Since(entries, from).USD
						}
					}
					if hour, day := sp.Window(time.Hour), sp.Window(24*time.Hour); hour <= 0 || day < hour {
						b.Fatalf("hour $%v, day $%v", hour, day)
					}
				}
			})
		}
	}
}

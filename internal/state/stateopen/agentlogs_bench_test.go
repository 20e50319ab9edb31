package stateopen_test

import (
	"fmt"
	"testing"

	openai "github.com/sashabaranov/go-openai"

	"github.com/plasmodium/pm/internal/state"
	"github.com/plasmodium/pm/internal/state/fsstate"
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
	backends := map[string]func(b *testing.B) state.State{
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
			_, _, sta, _ := twoMachines(b, "bench-00000a")
			return sta
		},
	}
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

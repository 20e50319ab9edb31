// Package transcript is the llm runtime's conversation as go-openai
// messages, kept in the project's state (state.Transcripts: on files
// agents/NAME/transcript.jsonl, on a hub the project's transcript stream),
// appended by the agent's host and read by pm's conversation views from
// any machine of the project. T satisfies llm.Transcript without this
// package importing llm, and the state interfaces know JSON only, so
// fsstate, which the short commands' executable links, links no model
// code; the llm loop and the views take a transcript from Of, so no caller
// handles where it is kept.
//
// Invariants: every write is one state entry per message (whole, or
// refused); every read goes through the state (torn or malformed entries
// skipped and reported by the backend), and an entry that is JSON but no
// message is skipped by Load and Last alike; Last gives exactly Load's last
// n messages and count holding only n (TestLastMatchesLoad), and
// plainMessage never vouches for an entry json.Unmarshal refuses
// (FuzzPlainMessage).
package transcript

import (
	"encoding/json"
	"fmt"

	openai "github.com/sashabaranov/go-openai"

	"github.com/plasmodium/pm/internal/state"
)

// Of is agent name's transcript in st.
func Of(st state.Transcripts, name string) *T { return &T{st: st, name: name} }

// T is an llm.Transcript kept in a state.Transcripts, one entry a message.
type T struct {
	st   state.Transcripts
	name string
}

// Load returns the messages recorded so far; a missing transcript is
// empty. It holds the whole conversation, as the loop that resumes it does.
func (t *T) Load() ([]openai.ChatCompletionMessage, error) {
	var out []openai.ChatCompletionMessage
	_, err := t.st.ReadTranscript(t.name, 0, func(raw json.RawMessage, _ int64) error {
		if m, ok := decode(raw); ok {
			out = append(out, m)
		}
		return nil
	})
	return out, err
}

// Append records msgs, one entry each.
func (t *T) Append(msgs ...openai.ChatCompletionMessage) error {
	entries := make([]any, len(msgs))
	for i, m := range msgs {
		entries[i] = m
	}
	if err := t.st.AppendTranscript(t.name, entries...); err != nil {
		return fmt.Errorf("transcript: %w", err)
	}
	return nil
}

// Started reports whether the transcript holds anything: whether the
// agent resumes a conversation.
func (t *T) Started() (bool, error) {
	end, err := t.st.TranscriptEnd(t.name)
	return end > 0, err
}

// decode is one entry as a message, false for JSON that is not one.
func decode(raw []byte) (openai.ChatCompletionMessage, bool) {
	var m openai.ChatCompletionMessage
	return m, json.Unmarshal(raw, &m) == nil
}

package llm

import (
	"sync"

	openai "github.com/sashabaranov/go-openai"
)

// Transcript is the durable conversation of one agent: every message except
// the system prompt, in order. A Loop appends each message as soon as it
// exists, so a respawned agent resumes from Load. The project's is
// internal/state/transcript (transcript.Of over the state: files or hub),
// kept to limits.transcript_bytes by the state's cut, which a Loop with
// HistoryBytes reads back (history.go); MemTranscript keeps everything (a
// Loop over it keeps everything too, reading it back at most once per
// quarter of HistoryBytes appended).
type Transcript interface {
	Load() ([]openai.ChatCompletionMessage, error)
	Append(msgs ...openai.ChatCompletionMessage) error
}

// MemTranscript is an in-memory Transcript (tests, one-shot runs).
type MemTranscript struct {
	mu   sync.Mutex
	msgs []openai.ChatCompletionMessage
}

func (t *MemTranscript) Load() ([]openai.ChatCompletionMessage, error) {
	t.mu.Lock()
	defer t.mu.Unlock()
	return append([]openai.ChatCompletionMessage(nil), t.msgs...), nil
}

func (t *MemTranscript) Append(msgs ...openai.ChatCompletionMessage) error {
	t.mu.Lock()
	defer t.mu.Unlock()
	t.msgs = append(t.msgs, msgs...)
	return nil
}

// interruptedResult is the tool result recorded for a call whose agent died
// before the call returned.
const interruptedResult = "error: interrupted: the agent stopped before this tool call returned; it may or may not have taken effect"

// repair makes a loaded history valid for the API after a crash: every
// assistant tool call gets exactly one tool message right after its assistant
// message (a missing one is filled with interruptedResult), and tool messages
// that answer no pending call are dropped. It reports the messages to append
// to the transcript when the only change is a tail of filled-in results
// (the common kill -9 during tool calls); other repairs stay in memory and
// are redone identically on every load.
func repair(msgs []openai.ChatCompletionMessage) (fixed, tail []openai.ChatCompletionMessage, changed bool) {
	fixed, pending, changedInside := repairOpen(msgs)
	n := len(fixed)
	fixed = answerInterrupted(fixed, pending)
	if !changedInside {
		tail = fixed[n:]
	}
	return fixed, tail, changedInside || len(tail) > 0
}

// repairOpen is repair but for the calls its last message leaves open,
// which it returns unanswered (pending): a running loop reading back its
// transcript mid-step answers them itself.
func repairOpen(msgs []openai.ChatCompletionMessage) (fixed []openai.ChatCompletionMessage, pending []string, changedInside bool) {
	flush := func() {
		fixed = answerInterrupted(fixed, pending)
		pending = nil
	}
	for _, m := range msgs {
		if m.Role == openai.ChatMessageRoleTool {
			j := indexOf(pending, m.ToolCallID)
			if j < 0 {
				changedInside = true
				continue
			}
			pending = append(pending[:j], pending[j+1:]...)
			fixed = append(fixed, m)
			continue
		}
		if len(pending) > 0 {
			changedInside = true
			flush()
		}
		fixed = append(fixed, m)
		if m.Role == openai.ChatMessageRoleAssistant {
			for _, tc := range m.ToolCalls {
				pending = append(pending, tc.ID)
			}
		}
	}
	return fixed, pending, changedInside
}

// answerInterrupted appends an interrupted result for each call of ids.
func answerInterrupted(msgs []openai.ChatCompletionMessage, ids []string) []openai.ChatCompletionMessage {
	for _, id := range ids {
		msgs = append(msgs, openai.ChatCompletionMessage{Role: openai.ChatMessageRoleTool, ToolCallID: id, Content: interruptedResult})
	}
	return msgs
}

func indexOf(list []string, s string) int {
	for i, v := range list {
		if v == s {
			return i
		}
	}
	return -1
}

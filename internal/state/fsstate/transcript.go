package fsstate

import (
	"github.com/plasmodium/pm/internal/llm"
	"github.com/plasmodium/pm/internal/store"
)

// Transcript is the llm runtime's conversation of agent name,
// agents/NAME/transcript.jsonl, appended by the agent's host and read by
// pm's conversation views. The llm loop takes it as its llm.Transcript, so
// no caller handles its path.
func Transcript(s *store.Store, name string) *llm.FileTranscript {
	return &llm.FileTranscript{Path: s.TranscriptPath(name), Bad: s.BadLine}
}

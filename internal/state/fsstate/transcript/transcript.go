// Package transcript is the llm runtime's conversation kept in the state
// directory: agents/NAME/transcript.jsonl, one message a line, appended by
// the agent's host and read by pm's conversation views. File satisfies
// llm.Transcript without this package importing llm, so fsstate, which the
// short commands' executable links, links no model code; the llm loop and
// the views take it from Of, so no caller handles its path.
//
// Invariants: every write is jsonl.Append (whole lines under the file's
// lock); every read is jsonl's tolerant reader (torn or malformed lines
// skipped and reported to Bad); Last gives exactly Load's last n messages
// and count (TestLastMatchesLoad), and plainMessage never vouches for a
// line json.Unmarshal refuses (FuzzPlainMessage).
package transcript

import (
	"fmt"
	"os"
	"path/filepath"

	openai "github.com/sashabaranov/go-openai"

	"github.com/plasmodium/pm/internal/jsonl"
	"github.com/plasmodium/pm/internal/store"
)

// Of is agent name's transcript in the store's state directory.
func Of(s *store.Store, name string) *File {
	return &File{Path: s.TranscriptPath(name), Bad: s.BadLine}
}

// File is an llm.Transcript in a JSONL file, one message a line, written
// through jsonl.Append (whole lines under the file lock) and read through
// jsonl.ReadAll (torn or malformed lines skipped and reported to Bad).
type File struct {
	Path string
	Bad  func(jsonl.BadLine) // optional
}

// Load returns the messages recorded so far; a missing file is empty.
func (t *File) Load() ([]openai.ChatCompletionMessage, error) {
	return jsonl.ReadAll[openai.ChatCompletionMessage](t.Path, t.Bad)
}

// Append records msgs, one line each, creating the directory if needed.
func (t *File) Append(msgs ...openai.ChatCompletionMessage) error {
	if len(msgs) > 0 {
		if err := os.MkdirAll(filepath.Dir(t.Path), 0o755); err != nil {
			return err
		}
	}
	for _, m := range msgs {
		if err := jsonl.Append(t.Path, m); err != nil {
			return fmt.Errorf("transcript: %w", err)
		}
	}
	return nil
}

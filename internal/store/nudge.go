package store

import (
	"os"
	"path/filepath"
)

// NudgeFilePath is agents/NAME/nudge.md: what an exec owner that ended its
// turn without pm done is resumed with, for a CLI that reads {PROMPT_FILE}.
func (s *Store) NudgeFilePath(name string) string {
	return filepath.Join(s.AgentDir(name), "nudge.md")
}

// WriteNudgeFile writes agents/NAME/nudge.md.
func (s *Store) WriteNudgeFile(name, text string) error {
	return os.WriteFile(s.NudgeFilePath(name), []byte(text), 0o644)
}

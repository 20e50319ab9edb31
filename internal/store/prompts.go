package store

import (
	"os"
	"path/filepath"

	"github.com/plasmodium/pm/internal/lockedfile"
)

// MarkdownFiles passes each top-level *.md of dir to add, in name order,
// named by its path; a missing directory has none. It is the one read of a
// directory of prompt files: the state's prompts/ (fsstate's PromptFiles)
// and the project's ./prompts/ (prompt.Dir) alike.
func MarkdownFiles(dir string, add func(path string, data []byte) error) error {
	names, _ := filepath.Glob(filepath.Join(dir, "*.md"))
	for _, n := range names {
		data, err := os.ReadFile(n)
		if err != nil {
			return err
		}
		if err := add(n, data); err != nil {
			return err
		}
	}
	return nil
}

// CreatePrompt writes prompts/NAME.md (create_capability) unless it exists,
// both under the file's lock, so of two creators of one name only the first
// writes. It returns an error wrapping os.ErrExist when the file exists.
func (s *Store) CreatePrompt(name string, data []byte) error {
	if err := os.MkdirAll(s.PromptsDir(), 0o755); err != nil {
		return err
	}
	path := s.PromptPath(name)
	return lockedfile.With(path, func() error {
		if _, err := os.Stat(path); err == nil {
			return &os.PathError{Op: "create", Path: path, Err: os.ErrExist}
		}
		if err := lockedfile.WriteAtomic(path, data); err != nil {
			return err
		}
		return os.Chmod(path, 0o644)
	})
}

// RemovePrompt deletes prompts/NAME.md (a creation that broke the prompt set).
func (s *Store) RemovePrompt(name string) error { return os.Remove(s.PromptPath(name)) }

// ReadContext reads tasks/ID/context.md, the context a task was created with.
func (s *Store) ReadContext(taskID string) ([]byte, error) { return os.ReadFile(s.ContextPath(taskID)) }

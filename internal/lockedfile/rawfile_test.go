package lockedfile

import (
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"testing"
)

// OpenFile, ReadFile and WriteFile behave as os's: the same flags, the same
// content, the same *fs.PathError for a missing file.
func TestRawFiles(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "log.jsonl")
	if err := WriteFile(path, []byte("a longer first content\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := WriteFile(path, []byte("one\n"), 0o644); err != nil { // truncates
		t.Fatal(err)
	}
	f, err := OpenFile(path, os.O_RDWR|os.O_APPEND, 0)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := f.Write([]byte("two\n")); err != nil {
		t.Fatal(err)
	}
	if err := f.Close(); err != nil {
		t.Fatal(err)
	}
	if got, err := ReadFile(path); err != nil || string(got) != "one\ntwo\n" {
		t.Fatalf("ReadFile = %q, %v", got, err)
	}
	if st, err := os.Stat(path); err != nil || st.Mode().Perm()&^0o644 != 0 || st.Mode().Perm()&0o600 != 0o600 { // 0644 less the umask
		t.Fatalf("mode %v, %v", st.Mode(), err)
	}
	missing := filepath.Join(dir, "missing")
	for name, err := range map[string]error{
		"OpenFile":  func() error { _, err := OpenFile(missing, os.O_RDONLY, 0); return err }(),
		"ReadFile":  func() error { _, err := ReadFile(missing); return err }(),
		"WriteFile": WriteFile(filepath.Join(missing, "x"), nil, 0o644),
	} {
		var pe *fs.PathError
		if !errors.Is(err, fs.ErrNotExist) || !errors.As(err, &pe) {
			t.Errorf("%s of a missing file: %v (want an *fs.PathError for ErrNotExist)", name, err)
		}
	}
}

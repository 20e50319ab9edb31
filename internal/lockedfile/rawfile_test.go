package lockedfile

import (
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"testing"
)

// OpenFile and ReadFile behave as os's: the same flags, the same content,
// the same *fs.PathError for a missing file.
func TestRawFiles(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "log.jsonl")
	f, err := OpenFile(path, os.O_WRONLY|os.O_CREATE|os.O_TRUNC, 0o644)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := f.Write([]byte("a longer first content\n")); err != nil {
		t.Fatal(err)
	}
	f.Close()
	if f, err = OpenFile(path, os.O_WRONLY|os.O_TRUNC, 0); err != nil {
		t.Fatal(err)
	}
	if _, err := f.Write([]byte("one\n")); err != nil {
		t.Fatal(err)
	}
	f.Close()
	f, err = OpenFile(path, os.O_RDWR|os.O_APPEND, 0)
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
		"OpenFile": func() error { _, err := OpenFile(missing, os.O_RDONLY, 0); return err }(),
		"ReadFile": func() error { _, err := ReadFile(missing); return err }(),
		"OpenFile in a missing directory": func() error {
			_, err := OpenFile(filepath.Join(missing, "x"), os.O_WRONLY|os.O_CREATE, 0o644)
			return err
		}(),
	} {
		var pe *fs.PathError
		if !errors.Is(err, fs.ErrNotExist) || !errors.As(err, &pe) {
			t.Errorf("%s of a missing file: %v (want an *fs.PathError for ErrNotExist)", name, err)
		}
	}
}

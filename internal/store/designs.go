package store

import (
	"errors"
	"os"
	"path/filepath"
	"sort"
	"strings"

	"github.com/plasmodium/pm/internal/errs"
	"github.com/plasmodium/pm/internal/ids"
	"github.com/plasmodium/pm/internal/jsonl"
	"github.com/plasmodium/pm/internal/lockedfile"
)

// Designs are the code designer's runs (internal/design), one directory
// each under designs/ (the tree is in doc.go).

// DesignsDir holds every design.
func (s *Store) DesignsDir() string { return filepath.Join(s.Root, "designs") }

// DesignDir is one design's directory.
func (s *Store) DesignDir(id string) string { return filepath.Join(s.DesignsDir(), id) }

func (s *Store) designPath(id string) string { return filepath.Join(s.DesignDir(id), "design.json") }

// DesignLogPath is a design's log (for followers and tests).
func (s *Store) DesignLogPath(id string) string { return filepath.Join(s.DesignDir(id), "log.jsonl") }

// DesignCopyPath is where the temporary copy of a design's file lives; it is
// handed out for the tools that run on it (a test command).
func (s *Store) DesignCopyPath(id, name string) string {
	return filepath.Join(s.DesignDir(id), "work", filepath.Base(name))
}

// CreateDesign makes a fresh design directory and returns its id.
func (s *Store) CreateDesign() (string, error) {
	if err := os.MkdirAll(s.DesignsDir(), 0o755); err != nil {
		return "", err
	}
	for range 16 {
		id := s.IDs.New(ids.Design)
		err := os.Mkdir(s.DesignDir(id), 0o755)
		if err == nil {
			return id, nil
		}
		if !errors.Is(err, os.ErrExist) {
			return "", err
		}
	}
	return "", errs.Failf("", "could not find a free design id")
}

// WriteDesign replaces design id's state with v, under its lock.
func (s *Store) WriteDesign(id string, v any) error {
	p := s.designPath(id)
	return lockedfile.With(p, func() error { return lockedfile.WriteJSON(p, v) })
}

// ReadDesign reads design id's state into v: a malformed id is exit 2, an
// unknown one exit 4.
func (s *Store) ReadDesign(id string, v any) error {
	if err := ids.Parse(ids.Design, id); err != nil {
		return errs.Usagef("design ids look like ds-a1b2c3; see 'pm designs'", "%v", err)
	}
	if err := lockedfile.ReadJSON(s.designPath(id), v); err != nil {
		return notFound(err, "see 'pm designs' for the designs that exist", "no design %s", id)
	}
	return nil
}

// AppendDesignLog appends v as one line to design id's log.
func (s *Store) AppendDesignLog(id string, v any) error { return jsonl.Append(s.DesignLogPath(id), v) }

// WriteDesignCopy writes the temporary copy of design id's file.
func (s *Store) WriteDesignCopy(id, name string, data []byte) error {
	p := s.DesignCopyPath(id, name)
	if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
		return err
	}
	return lockedfile.WriteAtomic(p, data)
}

// TryLockDesign takes design id's run lock, held while a process runs it,
// so two processes never run one design; ok is false when another holds it.
func (s *Store) TryLockDesign(id string) (unlock func(), ok bool, err error) {
	h, ok, err := lockedfile.TryLock(filepath.Join(s.DesignDir(id), "run"))
	if err != nil || !ok {
		return nil, ok, err
	}
	return func() { _ = h.Unlock() }, true, nil
}

// DesignIDs lists the designs' ids, sorted.
func (s *Store) DesignIDs() ([]string, error) {
	ents, err := os.ReadDir(s.DesignsDir())
	if errors.Is(err, os.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	var out []string
	for _, e := range ents {
		if e.IsDir() && strings.HasPrefix(e.Name(), ids.Design+"-") && ids.Parse(ids.Design, e.Name()) == nil {
			out = append(out, e.Name())
		}
	}
	sort.Strings(out)
	return out, nil
}

// ReplaceFile writes data over a project file by a rename, with permissions
// perm (pm design --apply): a crash leaves the old file or the new one.
func (s *Store) ReplaceFile(path string, data []byte, perm os.FileMode) error {
	return lockedfile.WriteAtomicMode(path, data, perm)
}

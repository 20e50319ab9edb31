package store

import (
	"encoding/json"
	"errors"
	"os"

	"github.com/plasmodium/pm/internal/config"
	"github.com/plasmodium/pm/internal/errs"
	"github.com/plasmodium/pm/internal/lockedfile"
)

// UpdateConfig edits config.json under its lock: fn changes the file's JSON
// tree (keys it does not name stay as written), and the result must load
// (known keys, right types, valid values) before it replaces the file.
func (s *Store) UpdateConfig(fn func(tree map[string]any) error) (config.Config, error) {
	path := s.ConfigPath()
	var cfg config.Config
	err := lockedfile.With(path, func() error {
		tree := map[string]any{}
		data, err := os.ReadFile(path)
		if err != nil && !errors.Is(err, os.ErrNotExist) {
			return err
		}
		if len(data) > 0 {
			if err := lockedfile.DecodeJSON(path, data, &tree); err != nil {
				return err
			}
		}
		if err := fn(tree); err != nil {
			return err
		}
		out, err := json.MarshalIndent(tree, "", "  ")
		if err != nil {
			return err
		}
		if cfg, err = config.Parse(path, out); err != nil {
			try := "pm config list shows every key with its value"
			if t, ok := errors.AsType[interface {
				error
				Try() string
			}](err); ok {
				try = t.Try() // a routing key where agents write, a non-provider key variable
			}
			return errs.Usagef(try, "config not changed: %v", err)
		}
		return lockedfile.WriteAtomic(path, append(out, '\n'))
	})
	return cfg, err
}

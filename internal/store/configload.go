package store

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"sync"
	"syscall"

	"github.com/plasmodium/pm/internal/lockedfile"
)

// lazyConfig is a store's configuration: decoded when Open parses it, or,
// when Open only checked it (OpenChecked), on first use.
type lazyConfig struct {
	once sync.Once
	cfg  *Config
	data []byte // config.json as read, known to parse (nil: the defaults)
}

func (l *lazyConfig) set(c Config) {
	c.Runtime.Exec = c.Runtime.Exec.Resolved()
	l.once.Do(func() {})
	l.cfg = &c
}

// Config is config.json over the defaults. Open checked it; the pointer is
// this process's own copy (tests change it; nothing writes it back).
func (s *Store) Config() *Config {
	s.config.once.Do(func() {
		c := DefaultConfig()
		if s.config.data != nil {
			_ = json.Unmarshal(s.config.data, &c) // known to parse: Open checked these bytes
		}
		c.Runtime.Exec = c.Runtime.Exec.Resolved()
		s.config.cfg = &c
	})
	return s.config.cfg
}

// loadConfig reads config.json and checks it (parseConfig: unknown keys,
// values). With cached, bytes this executable has checked before are taken
// as they are and decoded only when Config is called: parsing costs about
// as much as the rest of a pm say, which does not read the config.
func (s *Store) loadConfig(cached bool) error {
	path := s.ConfigPath()
	data, err := os.ReadFile(path)
	switch {
	case errors.Is(err, os.ErrNotExist):
		s.config.set(DefaultConfig())
		return nil
	case err != nil:
		return err
	}
	var digest string
	if cached {
		digest = configDigest(data)
		if digest != "" && s.checkedDigest() == digest {
			s.config.data = data
			return nil
		}
	}
	cfg, err := parseConfig(path, data)
	if err != nil {
		return err
	}
	s.config.set(cfg)
	if digest != "" {
		// Best effort: without it the next short command parses again.
		_ = lockedfile.WriteAtomic(s.configCheckedPath(), []byte(digest+"\n"))
	}
	return nil
}

// configCheckedPath holds the digest of the last config.json the short
// commands' executable checked: a cache, never the truth (a missing, stale
// or hand-made one only means a parse).
func (s *Store) configCheckedPath() string { return filepath.Join(s.Root, "config.checked") }

func (s *Store) checkedDigest() string {
	b, err := os.ReadFile(s.configCheckedPath())
	if err != nil || len(b) == 0 || b[len(b)-1] != '\n' {
		return ""
	}
	return string(b[:len(b)-1])
}

// configDigest is the digest of data as checked by this executable: its
// identity (device, inode, size, modification time) is part of it, so a
// rebuilt or upgraded pm, whose keys and rules may differ, checks again.
// "" when the executable cannot be identified (then nothing is cached).
func configDigest(data []byte) string {
	exe, err := os.Executable()
	if err != nil {
		return ""
	}
	id, ok := fileID(exe)
	if !ok {
		return ""
	}
	h := sha256.New()
	fmt.Fprintf(h, "%s\x00", id)
	h.Write(data)
	return hex.EncodeToString(h.Sum(nil))
}

// fileID names a file by device, inode, size and modification time.
func fileID(path string) (string, bool) {
	st, err := os.Stat(path)
	if err != nil {
		return "", false
	}
	sys, ok := st.Sys().(*syscall.Stat_t)
	if !ok {
		return "", false
	}
	return fmt.Sprintf("%d:%d:%d:%d", sys.Dev, sys.Ino, st.Size(), st.ModTime().UnixNano()), true
}

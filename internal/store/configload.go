package store

import (
	"bytes"
	"encoding/hex"
	"encoding/json"
	"errors"
	"hash/fnv"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"

	"github.com/plasmodium/pm/internal/config"
	"github.com/plasmodium/pm/internal/lockedfile"
)

// lazyConfig is a store's configuration: decoded when Open parses it, or,
// when Open only checked it (OpenChecked), on first use.
type lazyConfig struct {
	once sync.Once
	cfg  *config.Config
	data []byte // config.json as read, known to parse (nil: the defaults)
	// unrecorded is the digest of a config.json OpenChecked parsed, for
	// RecordConfigChecked.
	unrecorded string
}

func (l *lazyConfig) set(c config.Config) {
	c.Runtime.Exec = c.Runtime.Exec.Resolved()
	l.once.Do(func() {})
	l.cfg = &c
}

// Config is config.json over the defaults. Open checked it; the pointer is
// this process's own copy (tests change it; nothing writes it back).
func (s *Store) Config() *config.Config {
	s.config.once.Do(func() {
		c := config.DefaultConfig()
		if s.config.data != nil {
			_ = json.Unmarshal(s.config.data, &c) // known to parse: Open checked these bytes
		}
		c.Runtime.Exec = c.Runtime.Exec.Resolved()
		s.config.cfg = &c
	})
	return s.config.cfg
}

// OnHub reports whether the project's records are on a hub (store.url set:
// docs/distributed.md). A config.json OpenChecked took without decoding it
// is decoded only when its text may name a store section (the key, or an
// escape that could spell it), so the short commands' check costs a scan
// of a small file, not a parse.
func (s *Store) OnHub() bool {
	if d := s.config.data; d != nil && !bytes.Contains(d, []byte(`"store"`)) && !bytes.Contains(d, []byte(`\u`)) {
		return false
	}
	return s.Config().Store.Remote()
}

// loadConfig reads config.json and checks it (config.Parse: unknown keys,
// values). With cached, bytes this executable has checked before are taken
// as they are and decoded only when Config is called: parsing costs about
// as much as the rest of a pm say, which does not read the config. A parse
// that passed is recorded by RecordConfigChecked, which the command calls
// once it has succeeded, so a refused command writes nothing.
func (s *Store) loadConfig(cached bool) error {
	path := s.ConfigPath()
	data, err := lockedfile.ReadFile(path)
	switch {
	case errors.Is(err, os.ErrNotExist):
		s.config.set(config.DefaultConfig())
		return nil
	case err != nil:
		return err
	}
	var digest string
	if cached {
		digest = configDigest(data)
		if digest != "" && slices.Contains(s.checkedDigests(), digest) {
			s.config.data = data
			return nil
		}
	}
	cfg, err := config.Parse(path, data)
	if err != nil {
		return err
	}
	s.config.set(cfg)
	s.config.unrecorded = digest
	return nil
}

// maxCheckedDigests is how many executables' digests config.checked keeps:
// a person's ./bin/pm and the agents' installed pm on one state do not
// evict each other.
const maxCheckedDigests = 4

// maxCheckedBytes bounds the read of config.checked: maxCheckedDigests
// lines of 32 hex digits and a newline, with room for the 64-digit lines of
// older builds.
const maxCheckedBytes = maxCheckedDigests * 65

// RecordConfigChecked writes the digest of the config.json this store's
// OpenChecked parsed, if it was not recorded yet. Best effort: without it
// the next short command parses again.
func (s *Store) RecordConfigChecked() {
	d := s.config.unrecorded
	if d == "" {
		return
	}
	s.config.unrecorded = ""
	keep := []string{d}
	for _, old := range s.checkedDigests() {
		if old != d && len(keep) < maxCheckedDigests {
			keep = append(keep, old)
		}
	}
	_ = lockedfile.WriteAtomic(s.configCheckedPath(), []byte(strings.Join(keep, "\n")+"\n"))
}

// configCheckedPath holds the digests of the config.json the short
// commands' executables last checked: a cache, never the truth. A missing
// or stale one means a parse; one made to match by someone who can write
// .plasmodium (and so could change anything in it) is taken, which only
// spares a pm say or pm chat the parse: pm-full always parses.
func (s *Store) configCheckedPath() string { return filepath.Join(s.Root, "config.checked") }

// checkedDigests are config.checked's complete lines, from its first
// maxCheckedBytes (what pm writes is far less: a bigger file is not pm's).
func (s *Store) checkedDigests() []string {
	f, err := lockedfile.OpenFile(s.configCheckedPath(), os.O_RDONLY, 0)
	if err != nil {
		return nil
	}
	defer f.Close()
	b, err := io.ReadAll(io.LimitReader(f, maxCheckedBytes))
	if err != nil {
		return nil
	}
	if i := bytes.LastIndexByte(b, '\n'); i >= 0 {
		return strings.Split(string(b[:i]), "\n")
	}
	return nil
}

// configDigest is the digest of data as checked by this executable: its
// identity (device, inode, size, modification and change times) is part of
// it, so a rebuilt or upgraded pm, whose keys and rules may differ, checks
// again. "" when the executable cannot be identified (nothing is cached).
func configDigest(data []byte) string {
	id, ok := executableID()
	if !ok {
		return ""
	}
	// FNV-1a, 128 bits: a cache key for bytes, not a seal. Whoever can
	// write config.checked can write config.json itself, and pm-full always
	// parses; crypto/sha256 would link the FIPS module into every short
	// command for nothing.
	h := fnv.New128a()
	h.Write(id)
	h.Write([]byte{0})
	h.Write(data)
	return hex.EncodeToString(h.Sum(nil))
}

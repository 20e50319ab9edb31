package store

import (
	"os"
	"path/filepath"

	"github.com/plasmodium/pm/internal/bus"

	"github.com/plasmodium/pm/internal/jsonl"
	"github.com/plasmodium/pm/internal/lockedfile"
)

// LineReader reads the complete lines a JSONL file gains after its Offset,
// skipping (and reporting) bad ones. Followers in the domain packages get one
// from the store (InboxFrom, InboxTail) instead of opening the
// file themselves.
type LineReader = jsonl.Reader

// StreamPath is agents/NAME/stream.jsonl, where a resident prompt object
// streams the text of its replies (state.Replies, fsstate).
func (s *Store) StreamPath(name string) string {
	return filepath.Join(s.AgentDir(name), "stream.jsonl")
}

// InboxCursorPath is agents/NAME/inbox.cursor: the offset of the first inbox
// line the agent has not finished with.
func (s *Store) InboxCursorPath(name string) string {
	return filepath.Join(s.AgentDir(name), "inbox.cursor")
}

// EnsureAgentDir creates agents/NAME, so its files can be watched before
// anything is written there.
func (s *Store) EnsureAgentDir(name string) error { return os.MkdirAll(s.AgentDir(name), 0o755) }

// AgentHere makes this machine's directory of agent name's own files (its
// rendered prompt, transcript, markers) for an agent whose record is on a
// hub: the machine that runs the agent keeps them. On files the record's
// directory is that directory already, made with the record, and nothing
// is done (a directory made here could outlive a record just removed).
func (s *Store) AgentHere(name string) error {
	if !s.OnHub() {
		return nil
	}
	return os.MkdirAll(s.AgentDir(name), 0o755)
}

// AgentDirExists reports whether agents/NAME exists (used to pick fresh names).
func (s *Store) AgentDirExists(name string) bool {
	_, err := os.Stat(s.AgentDir(name))
	return !os.IsNotExist(err)
}

// AppendInbox appends v as one line to name's inbox, under the inbox's lock,
// creating the agent's directory first.
func (s *Store) AppendInbox(name string, v any) error {
	if err := s.EnsureAgentDir(name); err != nil {
		return err
	}
	return jsonl.Append(s.InboxPath(name), v)
}

// InboxFrom reads name's inbox from byte offset off (a saved cursor).
func (s *Store) InboxFrom(name string, off int64) *LineReader {
	return &LineReader{Path: s.InboxPath(name), Offset: off, Bad: s.BadLine}
}

// InboxTail reads the lines name's inbox gains from now on.
func (s *Store) InboxTail(name string) *LineReader { return s.tail(s.InboxPath(name)) }

// tail reads path from its current end.
func (s *Store) tail(path string) *LineReader {
	r := &LineReader{Path: path, Bad: s.BadLine}
	if st, err := os.Stat(path); err == nil {
		r.Offset = st.Size()
	}
	return r
}

// InboxCursor is name's saved inbox offset; 0 when none was saved (or the
// file is unreadable: the inbox is then served again from its start).
func (s *Store) InboxCursor(name string) int64 {
	var off int64
	_ = lockedfile.ReadJSON(s.InboxCursorPath(name), &off)
	return off
}

// SetInboxCursor saves name's inbox offset, rewritten atomically under its lock.
func (s *Store) SetInboxCursor(name string, off int64) error {
	p := s.InboxCursorPath(name)
	return lockedfile.With(p, func() error { return lockedfile.WriteJSON(p, off) })
}

// notifyCursorPath is where the notifier keeps its place on the bus.
func (s *Store) notifyCursorPath() string { return filepath.Join(s.Root, "notify.cursor") }

// NotifyCursor is the notifier's saved bus cursor (ok false: none saved).
func (s *Store) NotifyCursor() (c bus.Cursor, ok bool) {
	var text string
	if err := lockedfile.ReadJSON(s.notifyCursorPath(), &text); err != nil {
		return bus.Cursor{}, false
	}
	c, err := bus.ParseCursor(text)
	return c, err == nil
}

// SetNotifyCursor saves the notifier's place: everything before c was handled.
func (s *Store) SetNotifyCursor(c bus.Cursor) error {
	p := s.notifyCursorPath()
	return lockedfile.With(p, func() error { return lockedfile.WriteJSON(p, c.String()) })
}

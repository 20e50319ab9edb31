package fsstate

import (
	"encoding/json"
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"time"

	"github.com/plasmodium/pm/internal/cost"
	"github.com/plasmodium/pm/internal/jsonl"
	"github.com/plasmodium/pm/internal/state"
)

// Agent logs (state.AgentLogs) in the files they have always been in:
// agents/NAME/transcript.jsonl, agents/NAME/stream.jsonl and costs.jsonl,
// one JSON value a line, appended whole under the file's lock
// (jsonl.Append), read by jsonl's tolerant reader (a torn or malformed
// line skipped and reported to the store's warnings). Positions are byte
// offsets. RemoveAgent's removal of agents/NAME takes the first two.

func (f *FS) AppendTranscript(agent string, entries ...any) error {
	if err := state.CheckName(agent); err != nil {
		return err
	}
	return f.appendLines(f.s.TranscriptPath(agent), entries...)
}

func (f *FS) ReadTranscript(agent string, from int64, fn func(raw json.RawMessage, next int64) error) (int64, error) {
	if err := state.CheckName(agent); err != nil {
		return from, err
	}
	return f.readLines(f.s.TranscriptPath(agent), from, fn)
}

func (f *FS) TranscriptEnd(agent string) (int64, error) {
	if err := state.CheckName(agent); err != nil {
		return 0, err
	}
	return sizeOf(f.s.TranscriptPath(agent))
}

// LastTranscript reads the file backwards for the last n entries and
// counts the rest forwards without keeping them (jsonl.LastLines).
func (f *FS) LastTranscript(agent string, n int, keep func(raw []byte) bool) ([]json.RawMessage, int, error) {
	if err := state.CheckName(agent); err != nil {
		return nil, 0, err
	}
	lines, total, err := jsonl.LastLines(f.s.TranscriptPath(agent), n, keep, f.s.BadLine)
	out := make([]json.RawMessage, len(lines))
	for i, l := range lines {
		out[i] = json.RawMessage(l)
	}
	return out, total, err
}

func (f *FS) AppendReply(agent string, v any) error {
	if err := state.CheckName(agent); err != nil {
		return err
	}
	return f.appendLines(f.s.StreamPath(agent), v)
}

func (f *FS) ReadReplies(agent string, from int64, fn func(raw json.RawMessage, next int64) error) (int64, error) {
	if err := state.CheckName(agent); err != nil {
		return from, err
	}
	return f.readLines(f.s.StreamPath(agent), from, fn)
}

func (f *FS) RepliesEnd(agent string) (int64, error) {
	if err := state.CheckName(agent); err != nil {
		return 0, err
	}
	return sizeOf(f.s.StreamPath(agent))
}

func (f *FS) AppendCost(e cost.Entry) error { return jsonl.Append(f.s.CostsPath(), e) }

func (f *FS) Costs(since time.Time, fn func(e cost.Entry) error) error {
	r := &jsonl.Reader{Path: f.s.CostsPath(), Bad: f.s.BadLine}
	return r.Next(func(raw []byte) error {
		var e cost.Entry
		if err := json.Unmarshal(raw, &e); err != nil {
			f.s.BadLine(jsonl.BadLine{Path: r.Path, Line: r.Line, Reason: "line does not fit the record: " + err.Error()})
			return nil
		}
		if e.At.Before(since) {
			return nil
		}
		return fn(e)
	})
}

func (f *FS) ReadCosts(from int64, fn func(e cost.Entry, next int64) error) (int64, error) {
	r := &jsonl.Reader{Path: f.s.CostsPath(), Offset: from, Bad: f.s.BadLine}
	err := r.Next(func(raw []byte) error {
		var e cost.Entry
		if err := json.Unmarshal(raw, &e); err != nil {
			f.s.BadLine(jsonl.BadLine{Path: r.Path, Line: r.Line, Reason: "line does not fit the record: " + err.Error()})
			return nil
		}
		return fn(e, r.Offset)
	})
	return r.Offset, err
}

// appendLines appends each entry as a line of path, making the agent's
// directory first (on a hub it is this machine's, made on first use).
func (f *FS) appendLines(path string, entries ...any) error {
	lines := make([]json.RawMessage, len(entries))
	limit := f.s.Config().Limits.LogEntryBytes
	for i, e := range entries {
		b, err := state.FitEntry(e, limit)
		if err != nil {
			return err
		}
		lines[i] = b
	}
	if len(lines) == 0 {
		return nil
	}
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		return err
	}
	for _, l := range lines {
		if err := jsonl.Append(path, l); err != nil {
			return err
		}
	}
	return nil
}

func (f *FS) readLines(path string, from int64, fn func(raw json.RawMessage, next int64) error) (int64, error) {
	r := &jsonl.Reader{Path: path, Offset: from, Bad: f.s.BadLine}
	err := r.Next(func(raw []byte) error { return fn(raw, r.Offset) })
	return r.Offset, err
}

// sizeOf is path's size: the position after its last line (0 when there
// is no file).
func sizeOf(path string) (int64, error) {
	st, err := os.Stat(path)
	if errors.Is(err, fs.ErrNotExist) {
		return 0, nil
	}
	if err != nil {
		return 0, err
	}
	return st.Size(), nil
}

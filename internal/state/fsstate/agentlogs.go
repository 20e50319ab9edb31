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
	"github.com/plasmodium/pm/internal/lockedfile"
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
	return f.appendLines(state.LogTranscript, f.s.TranscriptPath(agent), entries...)
}

func (f *FS) ReadTranscript(agent string, from int64, fn func(raw json.RawMessage, next int64) error) (int64, error) {
	if err := state.CheckName(agent); err != nil {
		return from, err
	}
	return f.readLines(state.LogTranscript, f.s.TranscriptPath(agent), from, fn)
}

func (f *FS) TranscriptEnd(agent string) (int64, error) {
	if err := state.CheckName(agent); err != nil {
		return 0, err
	}
	return endOf(f.s.TranscriptPath(agent))
}

// LastTranscript reads the file backwards for the last n entries and
// counts the rest forwards without keeping them (jsonl.LastLinesIn); a cut
// file's mark counts first, as a read from 0 hands it on first. The header
// and the lines are read from one open file: a cut meanwhile replaces the
// path, not what this read holds.
func (f *FS) LastTranscript(agent string, n int, keep func(raw []byte) bool) ([]json.RawMessage, int, error) {
	if err := state.CheckName(agent); err != nil {
		return nil, 0, err
	}
	path := f.s.TranscriptPath(agent)
	file, err := lockedfile.OpenFile(path, os.O_RDONLY, 0) // a regular file: no poller
	if errors.Is(err, fs.ErrNotExist) {
		return nil, 0, nil
	}
	if err != nil {
		return nil, 0, err
	}
	defer file.Close()
	h, _, err := readHeader(file)
	if err != nil {
		return nil, 0, err
	}
	lines, total, err := jsonl.LastLinesIn(file, path, n, func(raw []byte) bool {
		return !isCutHeader(raw) && (keep == nil || keep(raw))
	}, f.s.BadLine)
	out := make([]json.RawMessage, 0, len(lines)+1)
	if err == nil {
		if mark := f.mark(state.LogTranscript, h); mark != nil && (keep == nil || keep(mark)) {
			total++
			if len(lines) < n {
				out = append(out, mark)
			}
		}
	}
	for _, l := range lines {
		out = append(out, json.RawMessage(l))
	}
	return out, total, err
}

func (f *FS) AppendReply(agent string, v any) error {
	if err := state.CheckName(agent); err != nil {
		return err
	}
	return f.appendLines(state.LogReplies, f.s.StreamPath(agent), v)
}

func (f *FS) ReadReplies(agent string, from int64, fn func(raw json.RawMessage, next int64) error) (int64, error) {
	if err := state.CheckName(agent); err != nil {
		return from, err
	}
	return f.readLines(state.LogReplies, f.s.StreamPath(agent), from, fn)
}

func (f *FS) RepliesEnd(agent string) (int64, error) {
	if err := state.CheckName(agent); err != nil {
		return 0, err
	}
	return endOf(f.s.StreamPath(agent))
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
// directory first (on a hub it is this machine's, made on first use), then
// keeps the file to its bound (keepBound).
func (f *FS) appendLines(kind state.Log, path string, entries ...any) error {
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
	return lockedfile.With(path, func() error { // one lock for the lines, the check and a cut
		for _, l := range lines {
			if err := jsonl.AppendHeld(path, l); err != nil {
				return err
			}
		}
		return f.keepBound(kind, path)
	})
}

// readLines reads path from logical position from (logbound.go): from 0
// of a cut file, its mark first.
func (f *FS) readLines(kind state.Log, path string, from int64, fn func(raw json.RawMessage, next int64) error) (int64, error) {
	file, err := lockedfile.OpenFile(path, os.O_RDONLY, 0) // a regular file: no poller
	if errors.Is(err, fs.ErrNotExist) {
		return from, nil
	}
	if err != nil {
		return from, err
	}
	defer file.Close()
	h, hlen, err := readHeader(file)
	if err != nil {
		return from, err
	}
	pos := from
	if hlen > 0 {
		first := h.Base + hlen // the first kept line's position
		switch {
		case from == 0:
			if err := fn(f.mark(kind, h), first); err != nil {
				return first, err
			}
			pos = first
		case from < first:
			pos = first
		}
	}
	r := &jsonl.Reader{Path: path, Offset: pos - h.Base, Bad: f.s.BadLine}
	err = r.NextIn(file, func(raw []byte) error { return fn(raw, r.Offset+h.Base) })
	return r.Offset + h.Base, err
}

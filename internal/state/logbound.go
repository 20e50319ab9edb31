package state

import (
	"encoding/json"
	"fmt"
	"strings"

	"github.com/plasmodium/pm/internal/config"
)

// A total per agent for its transcript and its reply stream (config
// limits.transcript_bytes and limits.reply_bytes). Every backend checks
// the total after each append and, once it is over the bound, drops the
// log's oldest entries down to LowWater of it, cut only where a reader may
// start (CutKind): a resumed conversation never opens with a tool result
// whose call was dropped, and a caller never loses the start of a reply it
// is reading. What was dropped is kept as a Cut (how many entries, how
// many bytes, in all), which a read from position 0 hands on first as one
// entry (MarkEntry), so the model resuming and a person reading see that
// the conversation is not whole. Positions held by readers stay valid: a
// read from any position other than 0 hands on every kept entry after it,
// as before the cut (each backend says how: fsstate's logical offsets,
// memstate's indexes, natsstate's stream sequences).

// Log names one of an agent's bounded logs.
type Log int

const (
	LogTranscript Log = iota // AppendTranscript's
	LogReplies               // AppendReply's
)

// LogBounds are the totals, in bytes, an agent's transcript and reply
// stream are kept to (LogBoundsOf a config).
type LogBounds struct {
	Transcript, Replies int64
}

// Default bounds: a transcript is what a resumed model reads back (64 MiB
// is far beyond any model's context); a reply stream is read by callers
// only from where their call started.
const (
	DefaultTranscriptBytes = 64 << 20
	DefaultReplyBytes      = 16 << 20
)

// LogBoundsOf is the bounds config c sets, each default when unset.
func LogBoundsOf(c *config.Config) LogBounds {
	b := LogBounds{Transcript: c.Limits.TranscriptBytes, Replies: c.Limits.ReplyBytes}
	return b.withDefaults()
}

func (b LogBounds) withDefaults() LogBounds {
	if b.Transcript <= 0 {
		b.Transcript = DefaultTranscriptBytes
	}
	if b.Replies <= 0 {
		b.Replies = DefaultReplyBytes
	}
	return b
}

// Of is the bound of log l (its default when unset).
func (b LogBounds) Of(l Log) int64 {
	b = b.withDefaults()
	if l == LogReplies {
		return b.Replies
	}
	return b.Transcript
}

// LowWater is what a cut keeps at most of a log over its bound: three
// quarters, so a log at its bound is cut once per quarter of it appended,
// not at every append (the files rewrite what they keep).
func LowWater(bound int64) int64 { return bound - bound/4 }

// Cut is what was dropped from the start of a log, in all its cuts.
type Cut struct {
	Entries int64 `json:"entries"`
	Bytes   int64 `json:"bytes"`
}

// Where a log may be cut, before an entry: a turn's start (a user message
// of a transcript, the first piece of a reply), else a step's start (an
// assistant message: its tool calls and their results stay together), else
// a reply's later piece (a reply longer than the bound: its reader, a
// caller's onDelta, shows the pieces it is handed and gets the whole reply
// in its mailbox, so one that lags loses some of the streamed text only),
// else not at all (a tool result: a resumed conversation would open with
// the result of a call it does not hold).
const (
	NoCut = iota
	PieceCut
	StepCut
	TurnCut
)

// CutKind says where log l may be cut before raw, prev being the entry
// before it (nil for the first).
func CutKind(l Log, prev, raw []byte) int {
	if l == LogReplies {
		var a, b struct {
			Corr string `json:"corr"`
		}
		if prev == nil || json.Unmarshal(prev, &a) != nil || json.Unmarshal(raw, &b) != nil || a.Corr != b.Corr {
			return TurnCut
		}
		return PieceCut
	}
	var m struct {
		Role string `json:"role"`
	}
	if json.Unmarshal(raw, &m) != nil {
		return NoCut
	}
	switch m.Role {
	case "user":
		return TurnCut
	case "assistant":
		return StepCut
	}
	return NoCut
}

// Entry is one entry of a log as a cut sees it: its size as kept (a line
// with its newline, a message's data) and where the log may be cut before
// it.
type Entry struct {
	Size int64
	Kind int
}

// PlanCut is how many of entries (the log, oldest first, total bytes in
// all) to drop so that what is kept is at most keep bytes: the fewest up
// to a turn's start, else the fewest up to a step's start, else the fewest
// up to a reply's later piece, else (the last step alone is over keep) up
// to the latest place it may be cut, keeping the least it can. 0: it
// cannot be cut.
func PlanCut(entries []Entry, total, keep int64) int {
	need := total - keep
	if need <= 0 {
		return 0
	}
	var dropped int64
	var first [TurnCut + 1]int // by kind, the first place that drops enough
	last := 0
	for i, e := range entries {
		if i > 0 && e.Kind != NoCut {
			last = i
			if dropped >= need && first[e.Kind] == 0 {
				if e.Kind == TurnCut {
					return i
				}
				first[e.Kind] = i
			}
		}
		dropped += e.Size
	}
	for k := StepCut; k >= PieceCut; k-- {
		if first[k] > 0 {
			return first[k]
		}
	}
	return last
}

// PlanAgainAt is the size a log that is over bound, total bytes, must
// reach before a cut is planned again when a plan left it over its bound
// (one step or turn longer than the bound, which no valid cut makes
// smaller): a quarter of the bound more, so such a log is read and planned
// once per quarter of the bound appended, not at every append.
func PlanAgainAt(total, bound int64) int64 { return total + bound/4 }

// MarkEntry is the entry a read from position 0 of a cut log hands on
// first: for a transcript, a user message the model resuming reads; for a
// reply stream, a piece of no call.
func MarkEntry(l Log, c Cut, bound int64) json.RawMessage {
	if l == LogReplies {
		b, _ := json.Marshal(map[string]string{"text": fmt.Sprintf("[pm dropped the first %d pieces of this reply stream (%d bytes): it is kept to at most %d bytes (limits.reply_bytes)]", c.Entries, c.Bytes, bound)})
		return b
	}
	b, _ := json.Marshal(map[string]string{"role": "user", "content": fmt.Sprintf(
		markStart+"%d messages of this conversation (%d bytes): a transcript is kept to at most %d bytes (limits.transcript_bytes); what follows starts at a turn or a step]", c.Entries, c.Bytes, bound)})
	return b
}

// markStart opens a transcript's mark (MarkEntry).
const markStart = "[pm dropped the first "

// IsTranscriptMark reports whether a transcript's message, by its role and
// text, is the mark of a cut (MarkEntry): what a read from position 0 hands
// on first and the log's size does not count (a running llm loop, which
// holds the messages it read back, tells its history's size by it).
func IsTranscriptMark(role, content string) bool {
	return role == "user" && strings.HasPrefix(content, markStart)
}

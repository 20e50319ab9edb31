package state

import (
	"encoding/json"
	"time"

	"github.com/plasmodium/pm/internal/cost"
)

// AgentLogs are what an agent's host writes as it runs and pm reads back,
// from any machine of the project: its transcript, its streamed replies and
// the project's cost ledger. (Kept apart from State's other interfaces, in
// this file and one file per implementation, agentlogs.go.)
type AgentLogs interface {
	Transcripts
	Replies
	CostLedger
}

// Transcripts are the llm runtime's conversations, one per agent: an
// append-only log of JSON messages (internal/state/transcript reads and
// writes them as go-openai messages). Positions are opaque and increasing
// along a transcript, 0 its start, as a mailbox's (fsstate: byte offsets
// of transcript.jsonl; natsstate: stream sequences; memstate: indexes).
// RemoveAgent removes an agent's transcript with it.
type Transcripts interface {
	// AppendTranscript appends each entry (marshalled to JSON) to agent's
	// transcript, in order, each whole: one entry is at most MaxEntry
	// bytes, and a longer one is refused with ErrInvalid, writing it and
	// those after it not. Concurrent appends each land whole.
	AppendTranscript(agent string, entries ...any) error
	// ReadTranscript calls fn with each entry at or after position from, in
	// order, and next, the position after it; it returns the position
	// after the last entry read (from when none). A torn or malformed
	// entry is skipped (and reported, where the backend reports). A missing
	// transcript is empty. raw is valid only until fn returns. One entry is
	// held at a time: what a reader keeps is its own bound.
	ReadTranscript(agent string, from int64, fn func(raw json.RawMessage, next int64) error) (int64, error)
	// TranscriptEnd is the position after agent's last entry (0 for an
	// empty or missing transcript): whether an agent resumes.
	TranscriptEnd(agent string) (int64, error)
	// LastTranscript is the last n (n > 0) entries keep accepts, oldest
	// first, and how many entries keep accepts in all (nil keep accepts
	// every entry): ReadTranscript's entries filtered by keep, of which the
	// last n, holding no more than n entries at a time (fsstate reads the
	// file backwards for them). keep may be called more than once per
	// entry and must not keep raw.
	LastTranscript(agent string, n int, keep func(raw []byte) bool) (last []json.RawMessage, total int, err error)
}

// Replies are the pieces of a resident prompt object's replies, appended
// as its model streams them and read by the caller waiting on the reply
// (inbox.Call), on whatever machine it runs. A Watch of the agent
// (Scope{Agent, Replies: true}) wakes on each append: the caller reads from where it was,
// never polling. Positions are as a mailbox's; RemoveAgent removes them.
type Replies interface {
	// AppendReply appends v (marshalled to JSON, at most MaxEntry bytes)
	// as one piece of agent's reply stream.
	AppendReply(agent string, v any) error
	// ReadReplies is ReadTranscript for agent's reply stream.
	ReadReplies(agent string, from int64, fn func(raw json.RawMessage, next int64) error) (int64, error)
	// RepliesEnd is the position after agent's last piece (0 for none):
	// where a caller starts, before it sends its request.
	RepliesEnd(agent string) (int64, error)
}

// CostLedger is the project's cost ledger: one cost.Entry per model call
// of an llm agent and per run of an exec agent's CLI, priced when
// recorded (RecordCost). pm reset keeps it (ResetHeld does not touch it):
// the money was spent, and the project's budget windows still count it.
type CostLedger interface {
	// AppendCost appends e to the ledger as it is.
	AppendCost(e cost.Entry) error
	// Costs calls fn with each entry recorded at or after since (the zero
	// time: all), oldest first, as recorded; a torn or malformed entry is
	// skipped. An entry is read at a time.
	Costs(since time.Time, fn func(e cost.Entry) error) error
}

// MaxEntry bounds one entry of a transcript or a reply stream, as it
// bounds a line of the files (jsonl.MaxLine, less its newline): a reader
// never holds more than that for one entry.
const MaxEntry = 1<<20 - 1

// RecordCost stamps e with now when it has no time, prices it (cost.Entry.
// Priced with prices, the config's over the shipped table, unless the
// runtime reported its own figure) and appends it to l. It returns the
// entry as recorded.
func RecordCost(l CostLedger, e cost.Entry, now time.Time, prices []cost.Price) (cost.Entry, error) {
	if e.At.IsZero() {
		e.At = now.UTC()
	}
	e = e.Priced(prices)
	return e, l.AppendCost(e)
}

// PricedCosts are the ledger's entries at or after since, oldest first. An
// entry recorded unknown (its model had no price then) is priced with
// today's prices when its model has one now: the human added it, as pm
// costs' hint says, and the money was spent all the same. One still
// without a price stays unknown; a figure recorded is kept.
func PricedCosts(l CostLedger, since time.Time, prices []cost.Price) ([]cost.Entry, error) {
	var out []cost.Entry
	err := l.Costs(since, func(e cost.Entry) error {
		out = append(out, e.Priced(prices))
		return nil
	})
	return out, err
}

// Spent is what the dollar caps of agent a are checked against: agentUSD
// (its own, as its host counts it), the known dollars of every agent of
// its task (their records' usage), the project's windows (the ledger,
// from now back). A read that fails counts nothing.
func Spent(st interface {
	Agents
	CostLedger
}, a *Agent, now func() time.Time, prices []cost.Price, agentUSD func() float64) cost.Spent {
	sp := cost.Spent{Agent: agentUSD, Window: func(d time.Duration) float64 {
		from := now().Add(-d)
		entries, err := PricedCosts(st, from, prices)
		if err != nil {
			return 0
		}
		return cost.Since(entries, from).USD
	}}
	if a.TaskID != "" {
		sp.Task = func() float64 {
			agents, err := st.Agents()
			if err != nil {
				return 0
			}
			var usd float64
			for _, x := range agents {
				if x.TaskID == a.TaskID {
					usd += x.Usage.USD
				}
			}
			return usd
		}
	}
	return sp
}

// EncodeEntry is v as the JSON an implementation appends to a transcript
// or a reply stream: ErrInvalid when it is over MaxEntry bytes.
func EncodeEntry(v any) ([]byte, error) {
	b, err := json.Marshal(v)
	if err != nil {
		return nil, err
	}
	if len(b) > MaxEntry {
		return nil, Errorf(ErrInvalid, "keep one message under 1 MiB", "an entry of %d bytes is over the %d byte limit", len(b), MaxEntry)
	}
	return b, nil
}

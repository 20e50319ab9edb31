package state

import (
	"bytes"
	"encoding/json"
	"fmt"
	"maps"
	"slices"
	"sync"
	"time"
	"unicode/utf8"

	"github.com/plasmodium/pm/internal/config"
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
	// ReadCosts calls fn with each entry at or after position from, oldest
	// first, and next, the position after it; it returns the position
	// after the last entry read (from when none). Positions are as a
	// transcript's. A reader that keeps its position reads only what was
	// recorded since (CostWindow).
	ReadCosts(from int64, fn func(e cost.Entry, next int64) error) (int64, error)
}

// MaxEntry bounds one entry of a transcript or a reply stream, as it
// bounds a line of the files (jsonl.MaxLine, less its newline): a reader
// never holds more than that for one entry.
const MaxEntry = config.MaxLogEntryBytes

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
// from now back, through w: a host keeps one CostWindow for its life, so
// each check reads only what was recorded since the last; nil reads the
// ledger afresh). A Spent is one check: its windows read the ledger once
// between them, at the first asked (a review found the hour's and the
// day's caps each read it), so make one per check. A read that fails
// counts nothing.
func Spent(st interface {
	Agents
	CostLedger
}, w *CostWindow, a *Agent, now func() time.Time, prices []cost.Price, agentUSD func() float64) cost.Spent {
	if w == nil {
		w = NewCostWindow(st)
	}
	var (
		read    bool
		at      time.Time
		readErr error
	)
	sp := cost.Spent{Agent: agentUSD, Window: func(d time.Duration) float64 {
		if !read {
			read, at = true, now()
			readErr = w.read(at, d)
		}
		if readErr != nil {
			return 0
		}
		return w.sum(at, d, prices)
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

// CostWindow is the project's recent spend as one long-lived reader sees
// it: the ledger's entries of the last Horizon, read from where the last
// read stopped (CostLedger.ReadCosts), so a model call under a dollar cap
// reads what was recorded since the previous call, not the whole ledger
// (a review found every call read it all). What it holds is bounded by
// the entries of one horizon.
type CostWindow struct {
	ledger CostLedger
	// Horizon is the longest window asked (the day cap's 24 hours):
	// older entries are let go.
	Horizon time.Duration

	mu      sync.Mutex
	pos     int64
	entries []cost.Entry // within Horizon of the last read, in ledger order
}

// NewCostWindow reads l from its start at its first use.
func NewCostWindow(l CostLedger) *CostWindow {
	return &CostWindow{ledger: l, Horizon: 24 * time.Hour}
}

// read takes in the entries recorded since the last read (one pass over
// the ledger's new part) and lets go of those older than the horizon (or
// d, when longer).
func (w *CostWindow) read(now time.Time, d time.Duration) error {
	w.mu.Lock()
	defer w.mu.Unlock()
	horizon := now.Add(-max(d, w.Horizon))
	pos, err := w.ledger.ReadCosts(w.pos, func(e cost.Entry, _ int64) error {
		if !e.At.Before(horizon) {
			w.entries = append(w.entries, e)
		}
		return nil
	})
	w.pos = pos
	if err != nil {
		return err
	}
	kept := w.entries[:0]
	for _, e := range w.entries {
		if !e.At.Before(horizon) {
			kept = append(kept, e)
		}
	}
	clear(w.entries[len(kept):])
	w.entries = kept
	return nil
}

// sum is the priced dollars held that were recorded at or after now-d,
// reading nothing.
func (w *CostWindow) sum(now time.Time, d time.Duration, prices []cost.Price) float64 {
	w.mu.Lock()
	defer w.mu.Unlock()
	from := now.Add(-d)
	var usd float64
	for _, e := range w.entries {
		if v := e.Priced(prices).USD; v != nil && !e.At.Before(from) {
			usd += *v
		}
	}
	return usd
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

// EntryLimit is the bound of one transcript or reply entry for the
// configured limit (config limits.log_entry_bytes): the limit when it is
// set and under MaxEntry, else MaxEntry (the streams' message size and the
// files' line limit, which no entry can pass).
func EntryLimit(configured int) int {
	if configured <= 0 || configured > MaxEntry {
		return MaxEntry
	}
	return configured
}

// minCut is the least a string must hold to be cut: what is left of it
// is its start and the mark.
const minCut = 256

// FitEntry is v as the JSON an implementation appends to a transcript or
// a reply stream, at most EntryLimit(limit) bytes: an entry longer than
// that is kept, its longest strings cut (their ends dropped), each cut
// string ending with a mark that says how many bytes were cut and why, so
// a reader (a person, the model resuming) sees that it was cut; never
// refused whole, never dropped. Only an entry with no string long enough
// to cut (minCut) is refused, with ErrInvalid. The same on every backend,
// so files and hub keep the same entry.
//
// Linear in the entry: its strings are listed once, longest first, and the
// size is kept by what each cut saves, the entry marshalled once at the
// end (it used to be marshalled again after each cut: 24 s for a 10 MiB
// message of 1,280 tool calls; docs/benchmarks.md). A cut of a string
// longer than what is over always fits, so only strings cut whole (to
// their mark) are followed by another.
func FitEntry(v any, limit int) ([]byte, error) {
	limit = EntryLimit(limit)
	b, err := json.Marshal(v)
	if err != nil || len(b) <= limit {
		return b, err
	}
	dec := json.NewDecoder(bytes.NewReader(b))
	dec.UseNumber()
	var tree any
	if err := dec.Decode(&tree); err != nil {
		return nil, err
	}
	strs := stringsOf(&tree)
	slices.SortStableFunc(strs, func(x, y aString) int { return len(y.str) - len(x.str) })
	size := len(b)
	for _, s := range strs {
		if size <= limit {
			break
		}
		if len(s.str) < minCut {
			break
		}
		// Cutting n bytes of a string saves at least n in its JSON
		// (escapes only add); the mark costs what it encodes to.
		keep := max(0, len(s.str)-(size-limit)-markLen(len(s.str), limit))
		for keep > 0 && !utf8.RuneStart(s.str[keep]) {
			keep--
		}
		cut := s.str[:keep] + cutMark(len(s.str)-keep, limit)
		size -= encodedLen(s.str) - encodedLen(cut)
		s.set(cut)
	}
	if size > limit {
		return nil, Errorf(ErrInvalid, "lower what one message holds, or raise limits.log_entry_bytes (at most 1 MiB)",
			"an entry of %d bytes is over the %d byte limit and holds nothing long enough to cut", len(b), limit)
	}
	if b, err = json.Marshal(tree); err != nil {
		return nil, err
	}
	if len(b) > limit { // the sizes kept disagree with the encoder's: never seen, never kept over
		return nil, fmt.Errorf("state: an entry cut to %d bytes encodes to %d", size, len(b))
	}
	return b, nil
}

// encodedLen is the length of s as JSON, quotes included.
func encodedLen(s string) int {
	b, _ := json.Marshal(s)
	return len(b)
}

// cutMark ends a string FitEntry cut by n bytes.
func cutMark(n, limit int) string {
	return fmt.Sprintf("\n[pm cut %d bytes here: one log entry is at most %d bytes (limits.log_entry_bytes)]", n, limit)
}

// markLen bounds the encoded length of a mark for a string of length n.
func markLen(n, limit int) int {
	b, _ := json.Marshal(cutMark(n, limit))
	return len(b) - 2
}

// aString is one string of a decoded JSON tree and how to replace it.
type aString struct {
	str string
	set func(string)
}

// stringsOf is every string of a decoded JSON tree (itself one, perhaps),
// in one order on every backend (objects' keys sorted).
func stringsOf(tree *any) []aString {
	var out []aString
	var walk func(v any, put func(string))
	walk = func(v any, put func(string)) {
		switch x := v.(type) {
		case string:
			out = append(out, aString{x, put})
		case map[string]any:
			for _, k := range slices.Sorted(maps.Keys(x)) {
				walk(x[k], func(s string) { x[k] = s })
			}
		case []any:
			for i, e := range x {
				walk(e, func(s string) { x[i] = s })
			}
		}
	}
	walk(*tree, func(s string) { *tree = s })
	return out
}

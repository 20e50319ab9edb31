package llm

import (
	"encoding/json"
	"fmt"

	openai "github.com/sashabaranov/go-openai"

	"github.com/plasmodium/pm/internal/state"
)

// A running loop's history is kept to the bound its transcript is kept to
// (Loop.HistoryBytes, the state's limits.transcript_bytes), by the
// transcript's own cut: the loop has no cut rule of its own. The state cuts
// a transcript after the append that takes it over its bound (state.PlanCut:
// before a turn's start, else a step's, never before a tool result, down to
// state.LowWater of it, a mark of what was dropped read first); the loop
// counts its history as the state counts the transcript, or less (an
// entry's JSON, where a file counts its line's newline and its header too),
// so when its count passes the bound the transcript has passed it too and
// was cut at that append or before. The loop then reads the transcript back
// and holds exactly what a run resuming it would load (repaired as load
// repairs it). A cut that leaves the transcript over its bound (a step
// longer than it, which no valid cut shortens) is read back again only once
// a quarter of the bound more is appended (state.PlanAgainAt), as the state
// plans it again only then. A message the state kept cut (longer than
// limits.log_entry_bytes, state.FitEntry) counts more in the loop than in
// the transcript until a read-back, which brings the kept one: the loop
// may read back before the transcript is cut, never after.

// entrySize is what message m counts for in its transcript's size: its JSON,
// as the state keeps it.
func entrySize(m openai.ChatCompletionMessage) int64 {
	b, err := json.Marshal(m)
	if err != nil {
		return 0
	}
	return int64(len(b))
}

// historySize is what msgs count for in their transcript's size: a leading
// mark of a cut counts for nothing there.
func historySize(msgs []openai.ChatCompletionMessage) int64 {
	var n int64
	for i, m := range msgs {
		if i == 0 && markOf(msgs) != "" {
			continue
		}
		n += entrySize(m)
	}
	return n
}

// counted adds msgs, just appended, to the history's size.
func (l *Loop) counted(msgs []openai.ChatCompletionMessage) {
	if l.HistoryBytes <= 0 {
		return
	}
	for _, m := range msgs {
		l.size += entrySize(m)
	}
}

// keepBound is the check after each append: past HistoryBytes (and, after
// a read-back that left the history over it, past its PlanAgainAt), the
// history is what the transcript keeps.
func (l *Loop) keepBound() error {
	bound := l.HistoryBytes
	if bound <= 0 || l.size <= bound || l.size < l.cutAt {
		return nil
	}
	msgs, err := l.Transcript.Load()
	if err != nil {
		return l.mask(fmt.Errorf("llm: reading back the transcript cut to limits.transcript_bytes: %w", err))
	}
	// Repaired as load repairs it, but for the calls of the step being
	// run, which the loop answers next.
	kept, _, _ := repairOpen(msgs)
	before := markOf(l.history)
	l.setHistory(kept)
	if l.size > bound {
		l.cutAt = state.PlanAgainAt(l.size, bound)
	}
	if mark := markOf(kept); mark != before { // a cut counts itself in the mark
		l.emit(Event{Kind: EventCut, Text: mark, Used: l.Used})
	}
	return nil
}

// markOf is the mark of a cut msgs open with, "" if none.
func markOf(msgs []openai.ChatCompletionMessage) string {
	if len(msgs) > 0 && state.IsTranscriptMark(msgs[0].Role, msgs[0].Content) {
		return msgs[0].Content
	}
	return ""
}

// setHistory makes msgs the history, counted afresh.
func (l *Loop) setHistory(msgs []openai.ChatCompletionMessage) {
	l.history, l.cutAt = msgs, 0
	if l.HistoryBytes > 0 {
		l.size = historySize(msgs)
	}
}

package statetest

import (
	"encoding/json"
	"fmt"
	"strings"
	"sync"
	"testing"

	"github.com/plasmodium/pm/internal/state"
)

// RunLogBounds runs the tests of the agents' logs' totals (state.LogBounds):
// open returns a new, empty project whose transcripts and reply streams
// are kept to b.
func RunLogBounds(t *testing.T, open func(t *testing.T, b state.LogBounds) state.State) {
	for _, tc := range []struct {
		name string
		fn   func(t *testing.T, st state.State, b state.LogBounds)
	}{
		{"TranscriptKeptToItsBound", testTranscriptBound},
		{"TranscriptOfOneLongTurn", testTranscriptOneTurn},
		{"RepliesKeptToTheirBound", testRepliesBound},
		{"OneReplyLongerThanTheBound", testOneLongReply},
		{"OneStepLongerThanTheBound", testOneLongStep},
		{"TranscriptConcurrentAppendsAcrossCuts", testTranscriptBoundConcurrent},
	} {
		t.Run(tc.name, func(t *testing.T) {
			b := state.LogBounds{Transcript: 8 << 10, Replies: 4 << 10}
			tc.fn(t, open(t, b), b)
		})
	}
}

// msg is a transcript entry as the llm loop writes one (go-openai's
// message, the fields the tests read), with its number.
type msg struct {
	Role       string     `json:"role"`
	Content    string     `json:"content,omitempty"`
	ToolCalls  []toolCall `json:"tool_calls,omitempty"`
	ToolCallID string     `json:"tool_call_id,omitempty"`
	N          int        `json:"n"`
}

type toolCall struct {
	ID string `json:"id"`
}

// turnOf is turn t of a conversation, its messages numbered from n: the
// user's message, an assistant's tool calls, their results, the answer.
func turnOf(t, n int) []msg {
	pad := strings.Repeat("x", 100)
	c1, c2 := fmt.Sprintf("call-%d-1", t), fmt.Sprintf("call-%d-2", t)
	return []msg{
		{Role: "user", Content: "question " + pad, N: n},
		{Role: "assistant", ToolCalls: []toolCall{{c1}, {c2}}, N: n + 1},
		{Role: "tool", ToolCallID: c1, Content: "result " + pad, N: n + 2},
		{Role: "tool", ToolCallID: c2, Content: "result " + pad, N: n + 3},
		{Role: "assistant", Content: "answer " + pad, N: n + 4},
	}
}

// readMsgs reads a transcript from from: the entries and the position
// each is followed by, and the position returned.
func readMsgs(t *testing.T, st state.State, name string, from int64) (got []msg, raws []string, end int64) {
	t.Helper()
	end, err := st.ReadTranscript(name, from, func(raw json.RawMessage, _ int64) error {
		var m msg
		if err := json.Unmarshal(raw, &m); err != nil {
			return fmt.Errorf("entry %s: %w", raw, err)
		}
		got, raws = append(got, m), append(raws, string(raw))
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return got, raws, end
}

// checkConversation checks what a read from 0 of a cut transcript hands
// on: the mark, then a run of the appended messages ending with the last,
// in order, opening at a turn's or step's start, every tool result after
// its call, at most bound bytes in all; it returns the first kept.
func checkConversation(t *testing.T, st state.State, name string, bound int64, appended int) int {
	t.Helper()
	got, raws, _ := readMsgs(t, st, name, 0)
	if len(got) < 2 || got[0].Role != "user" || !strings.HasPrefix(got[0].Content, "[pm dropped the first ") {
		t.Fatalf("a read of the cut transcript from 0 opens with %+v, want the mark", got[:min(1, len(got))])
	}
	first := got[1].N
	var dropped int64
	fmt.Sscanf(got[0].Content, "[pm dropped the first %d messages", &dropped)
	if int(dropped) != first {
		t.Errorf("the mark says %d messages dropped; the first kept is message %d", dropped, first)
	}
	if r := got[1].Role; r != "user" && !(r == "assistant" && len(got[1].ToolCalls) > 0) {
		t.Errorf("what is kept opens with a %s message (%+v)", r, got[1])
	}
	var size int64
	calls := map[string]bool{}
	for i, m := range got[1:] {
		if m.N != first+i {
			t.Fatalf("kept message %d is message %d, want %d", i, m.N, first+i)
		}
		for _, c := range m.ToolCalls {
			calls[c.ID] = true
		}
		if m.Role == "tool" && !calls[m.ToolCallID] {
			t.Errorf("a tool result (%s) is kept without its call", m.ToolCallID)
		}
		size += int64(len(raws[i+1]))
	}
	if last := got[len(got)-1].N; last != appended-1 {
		t.Errorf("the last kept is message %d, want %d", last, appended-1)
	}
	if size > bound {
		t.Errorf("%d bytes kept, over the %d byte bound", size, bound)
	}
	return first
}

// A transcript pushed far past its bound keeps at most the bound, cut
// at a turn's start, with the mark first; a reader following it (from
// the positions it was handed) across the cuts is handed every entry
// kept after its position, once, in order, and nothing else; the end,
// a read from it and LastTranscript agree with the rest.
func testTranscriptBound(t *testing.T, st state.State, b state.LogBounds) {
	const name = "oak_0001"
	var pos int64
	followed := []msg{}
	follow := func() {
		got, _, end := readMsgs(t, st, name, pos)
		followed, pos = append(followed, got...), end
	}
	n := 0
	for turn := range 60 {
		for _, m := range turnOf(turn, n) {
			if err := st.AppendTranscript(name, m); err != nil {
				t.Fatal(err)
			}
			n++
		}
		if turn%3 == 0 { // the follower lags by up to three turns
			follow()
		}
	}
	follow()
	first := checkConversation(t, st, name, b.Transcript, n)
	if first == 0 {
		t.Fatal("60 turns of ~1 KiB in a transcript of 8 KiB: nothing dropped")
	}
	for i := 1; i < len(followed); i++ {
		if followed[i].N <= followed[i-1].N {
			t.Fatalf("the follower was handed message %d after %d", followed[i].N, followed[i-1].N)
		}
	}
	for _, m := range followed {
		if strings.HasPrefix(m.Content, "[pm dropped") {
			t.Fatal("a follower past position 0 was handed the mark")
		}
	}
	// Every message kept after the follower's last read was handed on.
	seen := map[int]bool{}
	for _, m := range followed {
		seen[m.N] = true
	}
	for i := first; i < n; i++ {
		if !seen[i] {
			t.Fatalf("kept message %d never reached the follower", i)
		}
	}
	if end, err := st.TranscriptEnd(name); err != nil || end != pos {
		t.Errorf("TranscriptEnd = %d, %v; the follower ended at %d", end, err, pos)
	}
	if got, _, end := readMsgs(t, st, name, pos); len(got) != 0 || end != pos {
		t.Errorf("a read from the end: %d entries, end %d", len(got), end)
	}
	all, _, _ := readMsgs(t, st, name, 0)
	last, total, err := st.LastTranscript(name, 3, nil)
	if err != nil || total != len(all) || len(last) != 3 {
		t.Fatalf("LastTranscript: %d of %d (%v), want 3 of %d", len(last), total, err, len(all))
	}
	for i, raw := range last {
		var m msg
		if json.Unmarshal(raw, &m) != nil || m.N != all[len(all)-3+i].N {
			t.Errorf("LastTranscript's %d is %s", i, raw)
		}
	}
	// A further cut adds to the mark's count.
	for turn := 60; turn < 70; turn++ {
		for _, m := range turnOf(turn, n) {
			if err := st.AppendTranscript(name, m); err != nil {
				t.Fatal(err)
			}
			n++
		}
	}
	if again := checkConversation(t, st, name, b.Transcript, n); again <= first {
		t.Errorf("ten more turns cut nothing more (first kept %d, was %d)", again, first)
	}
}

// One long turn (a user's message, then steps of tool calls and their
// results) is cut at a step's start: its calls and results stay together.
func testTranscriptOneTurn(t *testing.T, st state.State, b state.LogBounds) {
	const name = "elm_0001"
	pad := strings.Repeat("y", 150)
	n := 0
	add := func(m msg) {
		m.N = n
		if err := st.AppendTranscript(name, m); err != nil {
			t.Fatal(err)
		}
		n++
	}
	add(msg{Role: "user", Content: "do it all"})
	for step := range 80 {
		id := fmt.Sprint("c", step)
		add(msg{Role: "assistant", ToolCalls: []toolCall{{id}}})
		add(msg{Role: "tool", ToolCallID: id, Content: pad})
	}
	checkConversation(t, st, name, b.Transcript, n)
}

// piece is a reply stream's entry (inbox.Delta's fields).
type piece struct {
	Corr string `json:"corr"`
	Text string `json:"text"`
}

// A reply stream past its bound keeps at most it, cut only at a reply's
// first piece; a caller that started at RepliesEnd before the reply was
// streamed reads all of it, the cuts notwithstanding.
func testRepliesBound(t *testing.T, st state.State, b state.LogBounds) {
	const name = "ash_0001"
	pad := strings.Repeat("z", 90)
	for r := range 40 {
		corr := fmt.Sprint("r", r)
		from, err := st.RepliesEnd(name)
		if err != nil {
			t.Fatal(err)
		}
		var got []string
		for i := range 5 {
			if err := st.AppendReply(name, piece{Corr: corr, Text: fmt.Sprint(i, pad)}); err != nil {
				t.Fatal(err)
			}
			from, err = st.ReadReplies(name, from, func(raw json.RawMessage, _ int64) error {
				var p piece
				if json.Unmarshal(raw, &p) == nil && p.Corr == corr {
					got = append(got, p.Text[:1])
				}
				return nil
			})
			if err != nil {
				t.Fatal(err)
			}
		}
		if strings.Join(got, "") != "01234" {
			t.Fatalf("reply %d read as %q", r, got)
		}
	}
	var pieces []piece
	var size int64
	if _, err := st.ReadReplies(name, 0, func(raw json.RawMessage, _ int64) error {
		var p piece
		if err := json.Unmarshal(raw, &p); err != nil {
			return err
		}
		if len(pieces) > 0 {
			size += int64(len(raw))
		}
		pieces = append(pieces, p)
		return nil
	}); err != nil {
		t.Fatal(err)
	}
	if len(pieces) < 6 || pieces[0].Corr != "" || !strings.HasPrefix(pieces[0].Text, "[pm dropped the first ") {
		t.Fatalf("a read from 0 opens with %+v, want the mark", pieces[:min(1, len(pieces))])
	}
	if !strings.HasPrefix(pieces[1].Text, "0") || len(pieces[1:])%5 != 0 {
		t.Errorf("the stream was cut inside a reply: it opens with %+v", pieces[1])
	}
	if size > b.Replies {
		t.Errorf("%d bytes kept, over the %d byte bound", size, b.Replies)
	}
}

// Writers appending at once while the transcript is cut: every entry is
// kept whole or counted in the mark, none twice; each writer's kept
// entries are its last ones, in order; what is kept is within the bound.
func testTranscriptBoundConcurrent(t *testing.T, st state.State, b state.LogBounds) {
	const (
		name    = "fir_0001"
		writers = 4
		each    = 60
	)
	pad := strings.Repeat("w", 120)
	var wg sync.WaitGroup
	for w := range writers {
		wg.Go(func() {
			for n := range each {
				if err := st.AppendTranscript(name, msg{Role: "user", Content: fmt.Sprint(w, " ", pad), N: n}); err != nil {
					t.Error(err)
					return
				}
			}
		})
	}
	wg.Wait()
	got, raws, _ := readMsgs(t, st, name, 0)
	if len(got) < 2 || !strings.HasPrefix(got[0].Content, "[pm dropped the first ") {
		t.Fatalf("%d writers of %d entries of ~150 bytes into 8 KiB: no mark (%d entries read)", writers, each, len(got))
	}
	var dropped int
	fmt.Sscanf(got[0].Content, "[pm dropped the first %d messages", &dropped)
	if dropped+len(got)-1 != writers*each {
		t.Fatalf("%d dropped and %d kept of %d appended", dropped, len(got)-1, writers*each)
	}
	last := map[string]int{}
	var size int64
	for i, m := range got[1:] {
		w := strings.Fields(m.Content)[0]
		if prev, ok := last[w]; ok && m.N != prev+1 {
			t.Fatalf("writer %s: entry %d kept after %d", w, m.N, prev)
		}
		last[w] = m.N
		size += int64(len(raws[i+1]))
	}
	for w, n := range last {
		if n != each-1 {
			t.Errorf("writer %s's last kept entry is %d, want %d", w, n, each-1)
		}
	}
	if size > b.Transcript {
		t.Errorf("%d bytes kept, over the %d byte bound", size, b.Transcript)
	}
}

// One reply longer than the bound has no reply's start to cut at: it is
// cut inside, so the stream keeps to its bound all the same, its last
// pieces kept in order after the mark.
func testOneLongReply(t *testing.T, st state.State, b state.LogBounds) {
	const name = "yew_0001"
	pad := strings.Repeat("q", 90)
	const pieces = 200 // ~20 KiB into 4 KiB
	for i := range pieces {
		if err := st.AppendReply(name, piece{Corr: "long", Text: fmt.Sprint(i, " ", pad)}); err != nil {
			t.Fatal(err)
		}
	}
	var got []piece
	var size int64
	if _, err := st.ReadReplies(name, 0, func(raw json.RawMessage, _ int64) error {
		var p piece
		if err := json.Unmarshal(raw, &p); err != nil {
			return err
		}
		if len(got) > 0 {
			size += int64(len(raw))
		}
		got = append(got, p)
		return nil
	}); err != nil {
		t.Fatal(err)
	}
	if len(got) < 2 || !strings.HasPrefix(got[0].Text, "[pm dropped the first ") {
		t.Fatalf("a read from 0 opens with %+v, want the mark", got[:min(1, len(got))])
	}
	var dropped int
	fmt.Sscanf(got[0].Text, "[pm dropped the first %d pieces", &dropped)
	for i, p := range got[1:] {
		if want := fmt.Sprint(dropped+i, " ", pad); p.Text != want {
			t.Fatalf("kept piece %d reads %.10q, want piece %d", i, p.Text, dropped+i)
		}
	}
	if dropped+len(got)-1 != pieces {
		t.Errorf("%d dropped and %d kept of %d", dropped, len(got)-1, pieces)
	}
	if size > b.Replies {
		t.Errorf("%d bytes kept, over the %d byte bound", size, b.Replies)
	}
}

// One step longer than the bound (an assistant's many tool calls and
// their results) has no valid cut inside it: it is kept whole, the
// conversation still opening at a step, and is dropped whole once the
// turns after it are enough; meanwhile the log is over its bound by at
// most the quarter a plan waits for (state.PlanAgainAt).
func testOneLongStep(t *testing.T, st state.State, b state.LogBounds) {
	const name = "box_0001"
	pad := strings.Repeat("v", 150)
	n := 0
	var calls []toolCall
	for i := range 40 { // ~9 KiB in all
		calls = append(calls, toolCall{fmt.Sprint("c", i)})
	}
	step := []msg{{Role: "user", Content: "all at once"}, {Role: "assistant", ToolCalls: calls}}
	for _, c := range calls {
		step = append(step, msg{Role: "tool", ToolCallID: c.ID, Content: pad})
	}
	for _, m := range step {
		m.N = n
		if err := st.AppendTranscript(name, m); err != nil {
			t.Fatal(err)
		}
		n++
	}
	got, _, _ := readMsgs(t, st, name, 0)
	if len(got) < 2 || got[1].Role != "assistant" || got[1].N != 1 || got[len(got)-1].N != n-1 {
		t.Fatalf("a step of ~9 KiB in 8 KiB: %d entries read, want the mark and the whole step", len(got))
	}
	for turn := range 20 {
		for _, m := range turnOf(turn, n) {
			if err := st.AppendTranscript(name, m); err != nil {
				t.Fatal(err)
			}
			n++
		}
	}
	if first := checkConversation(t, st, name, b.Transcript+b.Transcript/4, n); first < len(step) {
		t.Errorf("20 turns after the long step: the first kept is message %d, in the step", first)
	}
}

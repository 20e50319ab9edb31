package statetest

import (
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/plasmodium/pm/internal/cost"
	"github.com/plasmodium/pm/internal/errs"
	"github.com/plasmodium/pm/internal/state"
)

// agentLogTests cover state.AgentLogs (agentlogs.go).
var agentLogTests = []struct {
	name string
	fn   func(t *testing.T, st state.State)
}{
	{"Transcript", testTranscript},
	{"TranscriptLast", testTranscriptLast},
	{"TranscriptConcurrentAppends", testTranscriptConcurrent},
	{"TranscriptGoesWithItsAgent", testTranscriptRemoved},
	{"Replies", testReplies},
	{"RepliesWakeAFollower", testRepliesWake},
	{"CostLedger", testCostLedger},
	{"CostLedgerConcurrentAppends", testCostsConcurrent},
}

// turn is a transcript entry: which writer and its count.
type turn struct {
	W int `json:"w"`
	N int `json:"n"`
}

// readTurns reads agent's transcript (or replies) from from, with each
// entry's next position, and the position returned.
func readTurns(t *testing.T, read func(string, int64, func(json.RawMessage, int64) error) (int64, error), name string, from int64) (got []turn, nexts []int64, end int64) {
	t.Helper()
	end, err := read(name, from, func(raw json.RawMessage, next int64) error {
		var x turn
		if err := json.Unmarshal(raw, &x); err != nil {
			return fmt.Errorf("entry %s: %w", raw, err)
		}
		got, nexts = append(got, x), append(nexts, next)
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return got, nexts, end
}

func testTranscript(t *testing.T, st state.State) {
	const name = "oak_0001"
	for _, bad := range []string{"", "../x", "a/b"} {
		wantErr(t, "append to "+bad, st.AppendTranscript(bad, turn{}), state.ErrInvalid, errs.Usage)
		_, err := st.ReadTranscript(bad, 0, func(json.RawMessage, int64) error { return nil })
		wantErr(t, "read of "+bad, err, state.ErrInvalid, errs.Usage)
		_, err = st.TranscriptEnd(bad)
		wantErr(t, "end of "+bad, err, state.ErrInvalid, errs.Usage)
	}
	if end, err := st.TranscriptEnd(name); err != nil || end != 0 {
		t.Fatalf("a missing transcript ends at %d, %v; want 0", end, err)
	}
	if got, _, end := readTurns(t, st.ReadTranscript, name, 0); len(got) != 0 || end != 0 {
		t.Fatalf("a missing transcript reads %v to %d", got, end)
	}
	if err := st.AppendTranscript(name, turn{0, 1}, turn{0, 2}); err != nil {
		t.Fatal(err)
	}
	if err := st.AppendTranscript(name, turn{0, 3}); err != nil {
		t.Fatal(err)
	}
	got, nexts, end := readTurns(t, st.ReadTranscript, name, 0)
	if len(got) != 3 || got[0].N != 1 || got[2].N != 3 {
		t.Fatalf("read %v, want turns 1, 2, 3 in order", got)
	}
	if e, err := st.TranscriptEnd(name); err != nil || e != end || e != nexts[2] {
		t.Fatalf("end %d, %v; the read ended at %d, its last entry's next is %d", e, err, end, nexts[2])
	}
	// From a position: the entries after it, no other.
	if rest, _, e2 := readTurns(t, st.ReadTranscript, name, nexts[0]); len(rest) != 2 || rest[0].N != 2 || e2 != end {
		t.Fatalf("from %d read %v to %d, want turns 2, 3 to %d", nexts[0], rest, e2, end)
	}
	if rest, _, e2 := readTurns(t, st.ReadTranscript, name, end); len(rest) != 0 || e2 != end {
		t.Fatalf("from the end read %v to %d", rest, e2)
	}
	// An entry over the bound is kept cut, and says so (review: it was
	// refused, and the llm loop failed on it): its long string ends with
	// pm's mark, the rest of it whole, the entry within the bound.
	big := strings.Repeat("x", 2*state.MaxEntry)
	if err := st.AppendTranscript(name, map[string]string{"role": "tool", "content": big}); err != nil {
		t.Fatalf("an oversized entry: %v", err)
	}
	var cut map[string]string
	n := 0
	if _, err := st.ReadTranscript(name, end, func(raw json.RawMessage, _ int64) error {
		n++
		if len(raw) > state.MaxEntry {
			t.Errorf("the cut entry is %d bytes, over %d", len(raw), state.MaxEntry)
		}
		return json.Unmarshal(raw, &cut)
	}); err != nil || n != 1 {
		t.Fatalf("after an oversized append: %d entries, %v", n, err)
	}
	if c := cut["content"]; cut["role"] != "tool" || !strings.HasPrefix(c, "xxxx") || !strings.Contains(c, "[pm cut ") ||
		!strings.Contains(c, fmt.Sprintf("one log entry is at most %d bytes", state.MaxEntry)) {
		t.Fatalf("the cut entry reads role %q, content ...%q", cut["role"], c[max(0, len(c)-160):])
	}
	// An entry with nothing to cut is still refused whole.
	wantErr(t, "an entry with nothing to cut", st.AppendTranscript(name, strings.Split(strings.Repeat("ab", state.MaxEntry/4), "")), state.ErrInvalid, errs.Usage)
	if got, _, _ := readTurns(t, st.ReadTranscript, name, 0); len(got) != 4 {
		t.Fatalf("after a refused append the transcript reads %v (want the three turns and the cut entry)", got)
	}
	// fn's error stops the read and is returned.
	stop := errors.New("stop")
	calls := 0
	if _, err := st.ReadTranscript(name, 0, func(json.RawMessage, int64) error { calls++; return stop }); !errors.Is(err, stop) || calls != 1 {
		t.Fatalf("read with a failing fn: %v after %d calls", err, calls)
	}
}

// LastTranscript keeps the last n entries keep accepts and counts them all.
func testTranscriptLast(t *testing.T, st state.State) {
	const name = "oak_0001"
	if last, total, err := st.LastTranscript(name, 3, nil); err != nil || len(last) != 0 || total != 0 {
		t.Fatalf("last of a missing transcript = %d entries of %d, %v", len(last), total, err)
	}
	for i := 1; i <= 10; i++ {
		if err := st.AppendTranscript(name, turn{i % 2, i}); err != nil {
			t.Fatal(err)
		}
	}
	odd := func(raw []byte) bool {
		var x turn
		return json.Unmarshal(raw, &x) == nil && x.W == 1
	}
	for _, c := range []struct {
		n     int
		keep  func([]byte) bool
		want  []int
		total int
	}{
		{3, nil, []int{8, 9, 10}, 10},
		{1, nil, []int{10}, 10},
		{20, nil, []int{1, 2, 3, 4, 5, 6, 7, 8, 9, 10}, 10},
		{2, odd, []int{7, 9}, 5},
		{9, odd, []int{1, 3, 5, 7, 9}, 5},
	} {
		last, total, err := st.LastTranscript(name, c.n, c.keep)
		var got []int
		for _, raw := range last {
			var x turn
			if err := json.Unmarshal(raw, &x); err != nil {
				t.Fatal(err)
			}
			got = append(got, x.N)
		}
		if err != nil || total != c.total || fmt.Sprint(got) != fmt.Sprint(c.want) {
			t.Errorf("last %d = %v of %d, %v; want %v of %d", c.n, got, total, err, c.want, c.total)
		}
	}
}

// Writers appending at once: every entry lands whole, each writer's in
// its order.
func testTranscriptConcurrent(t *testing.T, st state.State) {
	const name, writers, each = "oak_0001", 4, 10
	appendConcurrently(t, writers, each, func(w, n int) error { return st.AppendTranscript(name, turn{w, n}) })
	got, _, _ := readTurns(t, st.ReadTranscript, name, 0)
	if len(got) != writers*each {
		t.Fatalf("read %d entries, %d were appended", len(got), writers*each)
	}
	next := make([]int, writers)
	for _, x := range got {
		if x.N != next[x.W] {
			t.Fatalf("writer %d's entry %d read where %d was due: %v", x.W, x.N, next[x.W], got)
		}
		next[x.W]++
	}
}

// RemoveAgent takes the agent's transcript and replies; another's stay.
func testTranscriptRemoved(t *testing.T, st state.State) {
	for _, name := range []string{"oak_0001", "elm_0002"} {
		if _, err := st.CreateAgent(&state.Agent{Name: name, CreatedAt: at(1)}); err != nil {
			t.Fatal(err)
		}
		if err := st.AppendTranscript(name, turn{0, 1}); err != nil {
			t.Fatal(err)
		}
		if err := st.AppendReply(name, turn{0, 1}); err != nil {
			t.Fatal(err)
		}
	}
	if err := st.RemoveAgent("oak_0001", func(*state.Agent) error { return nil }); err != nil {
		t.Fatal(err)
	}
	if got, _, _ := readTurns(t, st.ReadTranscript, "oak_0001", 0); len(got) != 0 {
		t.Errorf("a removed agent's transcript reads %v", got)
	}
	if got, _, _ := readTurns(t, st.ReadReplies, "oak_0001", 0); len(got) != 0 {
		t.Errorf("a removed agent's replies read %v", got)
	}
	if got, _, _ := readTurns(t, st.ReadTranscript, "elm_0002", 0); len(got) != 1 {
		t.Errorf("another agent's transcript reads %v", got)
	}
}

func testReplies(t *testing.T, st state.State) {
	const name = "oak_0001"
	wantErr(t, "reply of a bad name", st.AppendReply("../x", turn{}), state.ErrInvalid, errs.Usage)
	if end, err := st.RepliesEnd(name); err != nil || end != 0 {
		t.Fatalf("no replies end at %d, %v", end, err)
	}
	if err := st.AppendReply(name, turn{0, 1}); err != nil {
		t.Fatal(err)
	}
	// A caller starts at the end as it is before its request.
	from, err := st.RepliesEnd(name)
	if err != nil || from == 0 {
		t.Fatalf("end after a piece: %d, %v", from, err)
	}
	for i := 2; i <= 3; i++ {
		if err := st.AppendReply(name, turn{0, i}); err != nil {
			t.Fatal(err)
		}
	}
	got, _, end := readTurns(t, st.ReadReplies, name, from)
	if len(got) != 2 || got[0].N != 2 || got[1].N != 3 {
		t.Fatalf("from %d read %v, want pieces 2, 3", from, got)
	}
	if e, err := st.RepliesEnd(name); err != nil || e != end {
		t.Fatalf("end %d, %v; the read ended at %d", e, err, end)
	}
	// The transcript and the replies are apart.
	if got, _, _ := readTurns(t, st.ReadTranscript, name, 0); len(got) != 0 {
		t.Fatalf("replies read as the transcript: %v", got)
	}
}

// A follower of the replies (Watch of the agent, then reading from its
// place) is woken by each piece, in order, never by a sleep.
func testRepliesWake(t *testing.T, st state.State) {
	const name, pieces = "oak_0001", 3
	pos, err := st.RepliesEnd(name)
	if err != nil {
		t.Fatal(err)
	}
	var got []turn
	seen := make(chan int, pieces+1) // how many the follower has, after each check
	started, done := watchUntil(st, state.Scope{Agent: name, Replies: true}, func() bool {
		more, _, end := readTurns(t, st.ReadReplies, name, pos)
		got, pos = append(got, more...), end
		seen <- len(got)
		return len(got) == pieces
	})
	<-started
	<-seen
	for i := 1; i <= pieces; i++ {
		if err := st.AppendReply(name, turn{0, i}); err != nil {
			t.Fatal(err)
		}
		for n := range seen { // woken by this piece (or a spurious wake-up before it)
			if n >= i {
				break
			}
		}
	}
	if err := <-done; err != nil {
		t.Fatal(err)
	}
	for i, x := range got {
		if x.N != i+1 {
			t.Fatalf("the follower read %v, want pieces 1..%d in order", got, pieces)
		}
	}
}

func testCostLedger(t *testing.T, st state.State) {
	collect := func(since time.Time) []cost.Entry {
		var out []cost.Entry
		if err := st.Costs(since, func(e cost.Entry) error { out = append(out, e); return nil }); err != nil {
			t.Fatal(err)
		}
		return out
	}
	if got := collect(time.Time{}); len(got) != 0 {
		t.Fatalf("a new project's ledger holds %v", got)
	}
	usd := 0.25
	entries := []cost.Entry{
		{At: at(1), Agent: "oak_0001", Task: "tk-aaaaaa", Runtime: "llm", Model: "m", Turns: 1, USD: &usd,
			Usage: &cost.Usage{Input: 10, Output: 5}},
		{At: at(2), Agent: "elm_0002", Runtime: "exec", Turns: 1}, // unknown: no USD
		{At: at(3), Agent: "design", Runtime: "llm", Turns: 1},
	}
	for _, e := range entries {
		if err := st.AppendCost(e); err != nil {
			t.Fatal(err)
		}
	}
	got := collect(time.Time{})
	if len(got) != 3 || got[0].Agent != "oak_0001" || got[0].USD == nil || *got[0].USD != usd || got[0].Usage == nil ||
		got[0].Usage.Output != 5 || got[1].USD != nil || !got[2].At.Equal(at(3)) {
		t.Fatalf("the ledger reads %+v", got)
	}
	if since := collect(at(2)); len(since) != 2 || since[0].Agent != "elm_0002" {
		t.Fatalf("since the second entry the ledger reads %+v", since)
	}
	// ReadCosts reads from a position: from the one it returned, only
	// what was appended since.
	var pos int64
	n := 0
	end, err := st.ReadCosts(0, func(e cost.Entry, next int64) error {
		if next <= pos {
			t.Fatalf("ReadCosts: position %d after %d", next, pos)
		}
		pos = next
		n++
		return nil
	})
	if err != nil || n != 3 || end != pos {
		t.Fatalf("ReadCosts from the start: %d entries to %d (last next %d), %v", n, end, pos, err)
	}
	if again, err := st.ReadCosts(pos, func(cost.Entry, int64) error { t.Fatal("an entry after the end"); return nil }); err != nil || again != pos {
		t.Fatalf("ReadCosts at the end: %d, %v (want %d)", again, err, pos)
	}
	if err := st.AppendCost(cost.Entry{At: at(4), Agent: "ash_0004", Turns: 1}); err != nil {
		t.Fatal(err)
	}
	var since []cost.Entry
	if _, err := st.ReadCosts(pos, func(e cost.Entry, _ int64) error { since = append(since, e); return nil }); err != nil || len(since) != 1 || since[0].Agent != "ash_0004" {
		t.Fatalf("ReadCosts from the last position: %+v, %v", since, err)
	}
	// pm reset keeps the ledger: the money was spent.
	if err := st.WithTasks(st.ResetHeld); err != nil {
		t.Fatal(err)
	}
	if got := collect(time.Time{}); len(got) != 4 {
		t.Fatalf("after a reset the ledger reads %d entries, want 4", len(got))
	}
	// fn's error stops the read and is returned.
	stop := errors.New("stop")
	if err := st.Costs(time.Time{}, func(cost.Entry) error { return stop }); !errors.Is(err, stop) {
		t.Fatalf("a failing fn: %v", err)
	}
	// RecordCost stamps an entry without a time and prices it.
	e, err := state.RecordCost(st, cost.Entry{Agent: "oak_0001", Runtime: "llm", Model: "priced-model", Turns: 1,
		Usage: &cost.Usage{Input: 1_000_000}}, at(9), []cost.Price{{Model: "priced-model", Input: 2}})
	if err != nil || !e.At.Equal(at(9)) || e.USD == nil || *e.USD != 2 {
		t.Fatalf("RecordCost = %+v, %v", e, err)
	}
	if got := collect(at(9)); len(got) != 1 || got[0].USD == nil || *got[0].USD != 2 {
		t.Fatalf("the recorded entry reads %+v", got)
	}
}

// Hosts on several machines record at once: every entry lands.
func testCostsConcurrent(t *testing.T, st state.State) {
	const writers, each = 4, 10
	appendConcurrently(t, writers, each, func(w, n int) error {
		return st.AppendCost(cost.Entry{At: at(n), Agent: fmt.Sprintf("oak_%04d", w), Turns: 1})
	})
	per := map[string]int{}
	if err := st.Costs(time.Time{}, func(e cost.Entry) error { per[e.Agent]++; return nil }); err != nil {
		t.Fatal(err)
	}
	for w := range writers {
		if n := per[fmt.Sprintf("oak_%04d", w)]; n != each {
			t.Errorf("writer %d: %d entries read, %d appended", w, n, each)
		}
	}
}

// appendConcurrently runs writers goroutines, each calling add(w, n) for n
// in 0..each-1, and fails t on the first error.
func appendConcurrently(t *testing.T, writers, each int, add func(w, n int) error) {
	t.Helper()
	var wg sync.WaitGroup
	errc := make(chan error, writers)
	for w := range writers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for n := range each {
				if err := add(w, n); err != nil {
					errc <- err
					return
				}
			}
		}()
	}
	wg.Wait()
	close(errc)
	for err := range errc {
		t.Fatal(err)
	}
}

package bus

import (
	"context"
	"fmt"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/plasmodium/pm/internal/jsonl"
	"github.com/plasmodium/pm/internal/secret"
)

// clock is a deterministic Now: each call is a millisecond after the last.
func clock() func() time.Time {
	var mu sync.Mutex
	t := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	return func() time.Time {
		mu.Lock()
		defer mu.Unlock()
		t = t.Add(time.Millisecond)
		return t
	}
}

// impls are the implementations that share the Bus contract.
var impls = []struct {
	name string
	new  func(t *testing.T) Bus
}{
	{"file", func(t *testing.T) Bus { return newFile(t, nil) }},
	{"mem", func(t *testing.T) Bus { return &Mem{Now: clock()} }},
	{"seq", func(t *testing.T) Bus { return &Seq{Log: newMemLog(), Now: clock()} }},
}

// jsonlBad is a reported line.
type jsonlBad = jsonl.BadLine

func newFile(t *testing.T, bad *[]jsonlBad) *File {
	var mu sync.Mutex
	return &File{Path: filepath.Join(t.TempDir(), "events.jsonl"), Now: clock(), Bad: func(b jsonl.BadLine) {
		if bad != nil {
			mu.Lock()
			*bad = append(*bad, b)
			mu.Unlock()
		}
	}}
}

func publish(t *testing.T, b Bus, texts ...string) {
	t.Helper()
	for _, s := range texts {
		if err := b.Publish(Event{Kind: EvMessage, Text: s}); err != nil {
			t.Fatal(err)
		}
	}
}

func texts(prefix string, n int) []string {
	out := make([]string, n)
	for i := range out {
		out[i] = fmt.Sprintf("%s%d", prefix, i)
	}
	return out
}

// take subscribes from from and returns the next n events' texts and the
// cursor after the last; the events must already be on the bus.
func take(t *testing.T, b Bus, from Cursor, n int) ([]string, Cursor) {
	t.Helper()
	var got []string
	next := from
	if n == 0 {
		return nil, from
	}
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute) // hang guard only
	defer cancel()
	for d, err := range b.Subscribe(ctx, from) {
		if err != nil {
			t.Fatalf("after %v: %v", got, err)
		}
		got, next = append(got, d.Event.Text), d.Next
		if len(got) == n {
			break
		}
	}
	return got, next
}

func same(t *testing.T, got, want []string) {
	t.Helper()
	if strings.Join(got, ",") != strings.Join(want, ",") {
		t.Fatalf("got %v, want %v", got, want)
	}
}

// A consumer that stores the cursor (as a string) and subscribes again gets
// every event exactly once, in order, however it splits the reads.
func TestResumeExactlyOnce(t *testing.T) {
	for _, im := range impls {
		for _, split := range []int{0, 1, 3, 5} {
			t.Run(fmt.Sprintf("%s/split%d", im.name, split), func(t *testing.T) {
				b := im.new(t)
				publish(t, b, texts("a", 5)...)
				first, cur := take(t, b, Cursor{}, split)
				publish(t, b, texts("b", 3)...)
				saved, err := ParseCursor(cur.String())
				if err != nil {
					t.Fatal(err)
				}
				rest, _ := take(t, b, saved, 8-split)
				same(t, append(first, rest...), append(texts("a", 5), texts("b", 3)...))
			})
		}
	}
}

// Publish stamps the time and the human actor and masks secrets, the same
// on every implementation.
func TestPublishStamps(t *testing.T) {
	for _, im := range impls {
		t.Run(im.name, func(t *testing.T) {
			b := im.new(t)
			key := "sk-verysecret123"
			switch v := b.(type) {
			case *File:
				v.Secrets = secret.New(key)
			case *Mem:
				v.Secrets = secret.New(key)
			case *Seq:
				v.Secrets = secret.New(key)
			}
			if err := b.Publish(Event{Kind: EvAgentThink, Text: "key " + key + " is short"}); err != nil {
				t.Fatal(err)
			}
			ds, _, err := b.Tail(1)
			if err != nil || len(ds) != 1 {
				t.Fatalf("Tail = %v, %v", ds, err)
			}
			ev := ds[0].Event
			if ev.Kind != EvAgentThink || ev.Actor != "human" || ev.Time.IsZero() || ev.Text != "key [masked] is short" {
				t.Fatalf("published %+v", ev)
			}
			if !strings.Contains(string(ds[0].Raw), `"kind":"agent.think"`) {
				t.Fatalf("raw line %s", ds[0].Raw)
			}
		})
	}
}

// Tail returns the last n events and the end: subscribing from it yields
// only what is published afterwards.
func TestTailThenFollow(t *testing.T) {
	for _, im := range impls {
		t.Run(im.name, func(t *testing.T) {
			b := im.new(t)
			_, end, err := b.Tail(3)
			if err != nil || end != (Cursor{}) {
				t.Fatalf("Tail of an empty bus = %v, %v", end, err)
			}
			publish(t, b, texts("a", 5)...)
			ds, end, err := b.Tail(2)
			if err != nil {
				t.Fatal(err)
			}
			var got []string
			for _, d := range ds {
				got = append(got, d.Event.Text)
			}
			same(t, got, []string{"a3", "a4"})
			publish(t, b, "b0")
			got, _ = take(t, b, end, 1)
			same(t, got, []string{"b0"})
		})
	}
}

// A bus recreated under the same name (pm reset) is read from its
// beginning by a consumer holding an old cursor, whether the new bus is
// shorter or already longer than the old cursor's offset.
func TestResetRestartsFromBeginning(t *testing.T) {
	for _, im := range impls {
		for _, after := range []int{1, 4, 12} {
			t.Run(fmt.Sprintf("%s/%d-after", im.name, after), func(t *testing.T) {
				b := im.new(t)
				publish(t, b, texts("old", 4)...)
				_, cur := take(t, b, Cursor{}, 4)
				if err := b.Reset(); err != nil {
					t.Fatal(err)
				}
				publish(t, b, texts("new", after)...)
				got, _ := take(t, b, cur, after)
				same(t, got, texts("new", after))
			})
		}
	}
}

// A live subscriber keeps delivering whole events across a reset, from the
// new bus's first event, without being restarted.
func TestLiveSubscriberSurvivesReset(t *testing.T) {
	for _, im := range impls {
		t.Run(im.name, func(t *testing.T) {
			b := im.new(t)
			publish(t, b, texts("old", 3)...)
			ctx, cancel := context.WithTimeout(context.Background(), time.Minute) // hang guard only
			defer cancel()
			got := make(chan string)
			go func() {
				defer close(got)
				for d, err := range b.Subscribe(ctx, Cursor{}) {
					if err != nil {
						return
					}
					got <- d.Event.Text
				}
			}()
			recv := func(n int) []string {
				var out []string
				for range n {
					s, ok := <-got
					if !ok {
						t.Fatalf("subscription ended after %v", out)
					}
					out = append(out, s)
				}
				return out
			}
			same(t, recv(3), texts("old", 3))
			if err := b.Reset(); err != nil {
				t.Fatal(err)
			}
			publish(t, b, texts("new", 6)...)
			same(t, recv(6), texts("new", 6))
			cancel()
			for range got {
			}
		})
	}
}

// The subscriber ends with ctx's error when ctx ends.
func TestSubscribeEndsWithContext(t *testing.T) {
	for _, im := range impls {
		t.Run(im.name, func(t *testing.T) {
			b := im.new(t)
			publish(t, b, "a")
			ctx, cancel := context.WithCancel(context.Background())
			defer cancel()
			var last error
			n := 0
			for _, err := range b.Subscribe(ctx, Cursor{}) {
				if err != nil {
					last = err
					break
				}
				n++
				cancel()
			}
			if n != 1 || last != context.Canceled {
				t.Fatalf("got %d events then %v, want 1 then context.Canceled", n, last)
			}
		})
	}
}

// TailWhere counts only the events its filter keeps, and the filter sees
// the header (kind, ids), never the text or data, on every implementation.
func TestTailWhere(t *testing.T) {
	for _, impl := range impls {
		t.Run(impl.name, func(t *testing.T) {
			b := impl.new(t)
			for i, k := range []Kind{EvPhaseOpened, EvMessage, EvMessage, EvPhaseClosed, EvMessage, EvMessage} {
				data := map[Kind]Payload{EvPhaseOpened: PhaseOpened{Limit: i + 1}, EvMessage: MessagePosted{N: i + 1}, EvPhaseClosed: PhaseClosed{Messages: i + 1}}[k]
				if err := b.Publish(Event{Kind: k, TaskID: "tk-000001", Text: fmt.Sprint(i), Data: data}); err != nil {
					t.Fatal(err)
				}
			}
			phase := func(ev Event) bool {
				if ev.Text != "" || ev.Data != nil || ev.TaskID != "tk-000001" {
					t.Errorf("filter saw %+v", ev)
				}
				return strings.HasPrefix(string(ev.Kind), "phase.")
			}
			got, _, err := b.TailWhere(5, phase)
			if err != nil || len(got) != 2 || got[0].Event.Text != "0" || got[1].Event.Text != "3" {
				t.Fatalf("TailWhere(5, phase) = %+v, %v", got, err)
			}
			if got, _, _ := b.TailWhere(1, phase); len(got) != 1 || got[0].Event.Kind != EvPhaseClosed {
				t.Fatalf("TailWhere(1, phase) = %+v", got)
			}
		})
	}
}

// Before is what led up to a cursor: the last n events before it, not the
// ones after it, and nothing for the beginning or a cursor of a bus since
// reset (the file's identity differs, or its offset is past the new end).
func TestBefore(t *testing.T) {
	for _, im := range impls {
		for _, tc := range []struct {
			name  string
			at, n int // the cursor is after `at` of the 8 events
			reset bool
			want  []string
		}{
			{"the last few", 6, 3, false, []string{"a3", "a4", "a5"}},
			{"fewer than asked", 2, 5, false, []string{"a0", "a1"}},
			{"the beginning", 0, 5, false, nil},
			{"none asked", 6, 0, false, nil},
			{"after a reset", 6, 3, true, nil},
		} {
			t.Run(im.name+"/"+tc.name, func(t *testing.T) {
				b := im.new(t)
				publish(t, b, texts("a", 8)...)
				_, cur := take(t, b, Cursor{}, tc.at)
				if tc.reset {
					if err := b.Reset(); err != nil {
						t.Fatal(err)
					}
					publish(t, b, texts("new", 8)...) // as long as before: only the identity tells
				}
				ds, err := b.Before(cur, tc.n)
				if err != nil {
					t.Fatal(err)
				}
				var got []string
				for _, d := range ds {
					if d.Next != cur {
						t.Fatalf("delivery cursor %v, want %v", d.Next, cur)
					}
					got = append(got, d.Event.Text)
				}
				same(t, got, tc.want)
			})
		}
	}
}

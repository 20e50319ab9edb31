package tui

import (
	"bytes"
	"context"
	"path/filepath"
	"strings"
	"testing"
	"time"

	tea "github.com/charmbracelet/bubbletea"
	"github.com/charmbracelet/lipgloss"
	"github.com/charmbracelet/x/exp/golden"
	"github.com/charmbracelet/x/exp/teatest"
	"github.com/muesli/termenv"

	"github.com/plasmodium/pm/internal/bus"
	"github.com/plasmodium/pm/internal/ops"
	"github.com/plasmodium/pm/internal/request"
)

func init() { lipgloss.SetColorProfile(termenv.Ascii) } // golden frames without colours

var t0 = time.Date(2026, 11, 25, 14, 23, 1, 0, time.UTC)

// fakeBackend answers like a coordinator with a reader: fixed capabilities,
// a reply streamed in three pieces, the given pending requests.
func fakeBackend(pending []*request.Request, answered *[]string) Backend {
	return Backend{
		Inspect: func(context.Context, string) (ops.InspectResult, error) {
			return ops.InspectResult{Capabilities: ops.Capabilities{Delegates: []string{"reader", "greeter"},
				Primitives: []string{"read_file", "list_files"}}}, nil
		},
		Send: func(_ context.Context, po, text string, onDelta func(string)) (string, error) {
			for _, d := range []string{"This codebase ", "is for ", "PromptObjects."} {
				onDelta(d)
			}
			return "This codebase is for PromptObjects.", nil
		},
		Requests: func(context.Context) ([]*request.Request, error) { return pending, nil },
		Answer: func(_ context.Context, id, text string) error {
			*answered = append(*answered, id+"="+text)
			return nil
		},
	}
}

// cascadeEvents is the seed's message log: the human asks coord, coord
// asks reader, reader lists files, coord creates an object; the ids nest
// the cascade (Data corr and cause, as internal/inbox and llmagent publish).
func cascadeEvents() []bus.Event {
	at := func(s int) time.Time { return t0.Add(time.Duration(s) * time.Second) }
	in := func(cause string) bus.ToolCall { return bus.ToolCall{Cause: cause} }
	out := func(cause string) bus.ToolResult { return bus.ToolResult{Cause: cause} }
	return []bus.Event{
		{Time: at(0), Kind: bus.POKind("request"), Actor: "human", Agent: "coord", Text: "human → coord: help me understand this codebase",
			Data: bus.POMessage{Corr: "rq-1"}},
		{Time: at(1), Kind: bus.POKind("request"), Actor: "coord", Agent: "reader", Text: "coord → reader: list the files in root",
			Data: bus.POMessage{Corr: "rq-2", Cause: "rq-1"}},
		{Time: at(1), Kind: bus.EvToolCall, Actor: "reader", Text: `list_files {"path":"."}`, Data: in("rq-2")},
		{Time: at(1), Kind: bus.EvToolResult, Actor: "reader", Text: "list_files: README.md\nlib/\nspec/", Data: out("rq-2")},
		{Time: at(2), Kind: bus.POKind("reply"), Actor: "reader", Agent: "coord", Text: "reader → coord: Found: README.md, lib/, spec/",
			Data: bus.POMessage{Corr: "rq-2"}},
		{Time: at(3), Kind: bus.EvToolCall, Actor: "coord", Text: `create_capability {"name":"spec_writer"}`, Data: in("rq-1")},
		{Time: at(3), Kind: bus.EvCapabilityCreated, Actor: "coord", Text: "spec_writer"},
	}
}

// play runs the talk screen at 80x24, feeds it the events, types a message
// and returns the last frame once the reply is on screen.
func play(t *testing.T, pending []*request.Request, keys ...tea.KeyMsg) (*Talk, []string) {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	var answered []string
	m := NewTalk(ctx, fakeBackend(pending, &answered), "coord", time.UTC)
	tm := teatest.NewTestModel(t, m, teatest.WithInitialTermSize(80, 24))
	for _, ev := range cascadeEvents() {
		tm.Send(busMsg{ev})
	}
	for _, k := range keys {
		tm.Send(k)
	}
	if len(pending) == 0 {
		tm.Type("help me understand this codebase")
		tm.Send(tea.KeyMsg{Type: tea.KeyEnter})
		teatest.WaitFor(t, tm.Output(), func(b []byte) bool { return bytes.Contains(b, []byte("PromptObjects.")) },
			teatest.WithDuration(10*time.Second)) // hang guard only
	} else {
		teatest.WaitFor(t, tm.Output(), func(b []byte) bool { return bytes.Contains(b, []byte("asks")) },
			teatest.WithDuration(10*time.Second))
	}
	tm.Send(tea.KeyMsg{Type: tea.KeyCtrlC})
	final := tm.FinalModel(t, teatest.WithFinalTimeout(10*time.Second)).(*Talk)
	return final, answered
}

func TestTalkGolden(t *testing.T) {
	m, _ := play(t, nil)
	golden.RequireEqual(t, []byte(m.View()))
}

// A reply is rendered as markdown (a list, bold, a heading), and an escape
// sequence the model wrote is shown as text, never sent to the terminal.
func TestTalkMarkdownGolden(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	be := fakeBackend(nil, nil)
	reply := "## Files\n\nI can see:\n\n- **README.md** - the docs\n- `lib/` - the code\n\nClear it? \x1b[2J\x1b]0;owned\x07"
	be.Send = func(_ context.Context, _, _ string, onDelta func(string)) (string, error) {
		onDelta(reply[:20])
		onDelta(reply[20:])
		return reply, nil
	}
	tm := teatest.NewTestModel(t, NewTalk(ctx, be, "coord", time.UTC), teatest.WithInitialTermSize(80, 30))
	tm.Type("what's in here?")
	tm.Send(tea.KeyMsg{Type: tea.KeyEnter})
	teatest.WaitFor(t, tm.Output(), func(b []byte) bool { return bytes.Contains(b, []byte("owned")) },
		teatest.WithDuration(10*time.Second)) // hang guard only
	tm.Send(tea.KeyMsg{Type: tea.KeyCtrlC})
	view := tm.FinalModel(t, teatest.WithFinalTimeout(10*time.Second)).View()
	if strings.ContainsAny(view, "\x1b\x07") {
		t.Fatalf("a control character reached the screen: %q", view)
	}
	golden.RequireEqual(t, []byte(view))
}

// pm talk opens on the conversation so far, read from the object's
// transcript: the human's and other objects' requests and the object's
// replies; tool calls and results stay in the message log.
func TestTalkHistoryGolden(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	be := fakeBackend(nil, nil)
	be.History = func(_ context.Context, po string) ([]ops.Turn, error) {
		if po != "coord" {
			return nil, nil
		}
		return []ops.Turn{
			{Role: "user", Content: "Message from the human:\nhey there"},
			{Role: "assistant"}, // a tool call
			{Role: "tool", Content: "README.md\nlib/"},
			{Role: "assistant", Content: "Oh, hello! **Welcome!**"},
			{Role: "user", Content: "Message from @greeter:\nwho is here?"},
			{Role: "assistant", Content: "The reader and me."},
			{Role: "user", Content: "New in the room:\nnot a request"},
		}, nil
	}
	// The message log opens on the bus's last messages, cascade and all.
	b := &bus.File{Path: filepath.Join(t.TempDir(), "events.jsonl")}
	for _, ev := range cascadeEvents() {
		if err := b.Publish(ev); err != nil {
			t.Fatal(err)
		}
	}
	be.Bus = b
	tm := teatest.NewTestModel(t, NewTalk(ctx, be, "coord", time.UTC), teatest.WithInitialTermSize(80, 24))
	teatest.WaitFor(t, tm.Output(), func(b []byte) bool {
		return bytes.Contains(b, []byte("reader and me")) && bytes.Contains(b, []byte("Found"))
	},
		teatest.WithDuration(10*time.Second)) // hang guard only
	tm.Send(tea.KeyMsg{Type: tea.KeyCtrlC})
	golden.RequireEqual(t, []byte(tm.FinalModel(t, teatest.WithFinalTimeout(10*time.Second)).View()))
}

func TestTalkAskGolden(t *testing.T) {
	pending := []*request.Request{{ID: "rq-000001", From: "reader", Question: "Delete lib/old.rb?", Status: request.Pending}}
	m, _ := play(t, pending)
	golden.RequireEqual(t, []byte(m.View()))
}

func TestTalkAnswerWithKey(t *testing.T) {
	pending := []*request.Request{{ID: "rq-000001", From: "reader", Question: "Delete lib/old.rb?", Status: request.Pending}}
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	var answered []string
	m := NewTalk(ctx, fakeBackend(pending, &answered), "coord", time.UTC)
	m.Update(requestsMsg{pending})
	cmd := m.key(tea.KeyMsg{Type: tea.KeyRunes, Runes: []rune("y")})
	if cmd == nil {
		t.Fatal("y with a request shown: no answer sent")
	}
	cmd()
	if strings.Join(answered, ",") != "rq-000001=yes" {
		t.Fatalf("answered %v, want rq-000001=yes", answered)
	}
}

func TestTalkSwitchAndHistory(t *testing.T) {
	m := NewTalk(context.Background(), Backend{}, "coord", time.UTC)
	m.Update(inspectMsg{ops.InspectResult{Capabilities: ops.Capabilities{Delegates: []string{"reader"}}}})
	m.Update(busMsg{bus.Event{Kind: bus.EvCapabilityCreated, Text: "spec_writer"}})
	for _, want := range []string{"reader", "spec_writer", "coord"} {
		m.key(tea.KeyMsg{Type: tea.KeyTab})
		if m.active != want {
			t.Fatalf("tab: active %q, want %q", m.active, want)
		}
	}
	m.history, m.hpos = []string{"one", "two"}, 2
	m.key(tea.KeyMsg{Type: tea.KeyUp})
	m.key(tea.KeyMsg{Type: tea.KeyUp})
	if m.input.Value() != "one" {
		t.Fatalf("history: %q, want one", m.input.Value())
	}
}

func TestTalkLeaving(t *testing.T) {
	runes := func(s string) tea.KeyMsg { return tea.KeyMsg{Type: tea.KeyRunes, Runes: []rune(s)} }
	esc := tea.KeyMsg{Type: tea.KeyEsc}
	for _, tc := range []struct {
		name  string
		keys  []tea.KeyMsg
		leave bool
	}{
		{"q types while typing", []tea.KeyMsg{runes("q")}, false},
		{"Esc then q leaves", []tea.KeyMsg{esc, runes("q")}, true},
		{"Esc then a key types again", []tea.KeyMsg{esc, runes("a"), runes("q")}, false},
		{"Ctrl-C leaves", []tea.KeyMsg{{Type: tea.KeyCtrlC}}, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			m := NewTalk(context.Background(), Backend{}, "coord", time.UTC)
			left := false
			for _, k := range tc.keys {
				if cmd := m.key(k); cmd != nil {
					_, left = cmd().(tea.QuitMsg)
				}
			}
			if left != tc.leave {
				t.Fatalf("left %v, want %v (input %q)", left, tc.leave, m.input.Value())
			}
		})
	}
}

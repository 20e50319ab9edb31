package ops

import (
	"context"
	"fmt"
	"slices"
	"testing"

	openai "github.com/sashabaranov/go-openai"

	"github.com/plasmodium/pm/internal/errs"
	"github.com/plasmodium/pm/internal/state/fsstate"
	"github.com/plasmodium/pm/internal/state/transcript"
	"github.com/plasmodium/pm/internal/store"
)

func TestConversation(t *testing.T) {
	s := newStore(t)
	tr := transcript.Of(fsstate.New(s), "greeter")
	if err := tr.Append(openai.ChatCompletionMessage{Role: "user", Content: "a"}, openai.ChatCompletionMessage{Role: "assistant", Content: "b"},
		openai.ChatCompletionMessage{Role: "user", Content: "c"}); err != nil {
		t.Fatal(err)
	}
	sess := &Session{Store: s, State: fsstate.New(s), Actor: store.Human}
	tests := []struct {
		po    string
		limit int
		want  []string // contents
		count int
		code  errs.Code
	}{
		{"greeter", 0, []string{"a", "b", "c"}, 3, 0},
		{"greeter", 2, []string{"b", "c"}, 3, 0},
		{"greeter", 9, []string{"a", "b", "c"}, 3, 0},
		{"reader", 0, nil, 0, 0}, // never talked to: empty
		{"greeter", -1, nil, 0, errs.Usage},
		{"nope", 0, nil, 0, errs.NotFound},
	}
	for _, tt := range tests {
		r, err := Conversation(context.Background(), sess, ConversationInput{PO: tt.po, Limit: tt.limit})
		if tt.code != 0 {
			if !errs.Is(err, tt.code) {
				t.Errorf("%s %d: %v, want code %v", tt.po, tt.limit, err, tt.code)
			}
			continue
		}
		var got []string
		for _, turn := range r.Turns {
			got = append(got, turn.Content)
		}
		if err != nil || r.Count != tt.count || !slices.Equal(got, tt.want) {
			t.Errorf("%s %d: %+v %v, want %v of %d", tt.po, tt.limit, r, err, tt.want, tt.count)
		}
	}
}

func TestInspectPO(t *testing.T) {
	sesss := newStore(t)
	sess := &Session{Store: sesss, State: fsstate.New(sesss), Actor: store.Human}
	r, err := InspectPO(context.Background(), sess, InspectInput{PO: "coordinator"})
	if err != nil {
		t.Fatal(err)
	}
	if r.Name != "coordinator" || r.State != "idle" || r.PromptBody == "" || r.HistoryLength != 0 {
		t.Errorf("inspect: %+v", r)
	}
	if !slices.Contains(r.Capabilities.Delegates, "greeter") || !slices.Contains(r.Capabilities.Primitives, "list_files") ||
		!slices.Equal(r.Capabilities.Universal, []string{"ask_human", "create_capability", "think"}) {
		t.Errorf("capabilities %+v", r.Capabilities)
	}
	if slices.Contains(r.Capabilities.Primitives, "think") {
		t.Error("a declared universal is listed as a primitive")
	}
	if _, err := InspectPO(context.Background(), sess, InspectInput{PO: "nope"}); !errs.Is(err, errs.NotFound) {
		t.Errorf("unknown: %v", err)
	}
}

// MCP wait_task is ops.Wait, the same operation as pm wait.
func TestWaitForMCP(t *testing.T) {
	s := newStore(t)
	addTask(t, s, "tk-aaaaaa", store.TaskDone, 0)
	addTask(t, s, "tk-bbbbbb", store.TaskActive, 1)
	sess := &Session{Store: s, State: fsstate.New(s), Actor: store.Human}
	tests := []struct {
		in   WaitInput
		code errs.Code
	}{
		{WaitInput{Task: "tk-aaaaaa"}, 0},
		{WaitInput{Task: "tk-bbbbbb", Timeout: "1ms"}, errs.Timeout},
		{WaitInput{Task: "tk-bbbbbb", Timeout: "soon"}, errs.Usage},
		{WaitInput{Task: "tk-bbbbbb", Timeout: "-1s"}, errs.Usage},
		{WaitInput{Task: "tk-ffffff"}, errs.NotFound},
	}
	for _, tt := range tests {
		got, err := Wait(context.Background(), sess, tt.in)
		if tt.code == 0 {
			if err != nil || got.Task.Status != store.TaskDone {
				t.Errorf("%+v: %v %v", tt.in, got, err)
			}
			continue
		}
		if !errs.Is(err, tt.code) {
			t.Errorf("%+v: %v, want code %v", tt.in, err, tt.code)
		}
	}
}

// With a limit, Conversation's work does not grow with the transcript
// beyond reading it: a resident object's transcript grows without bound,
// yet pm talk and MCP only want its last turns and their count. Measured in
// allocations (a count, not time): decoding and holding every message costs
// tens per line, reading the lines about one.
func TestConversationLimitDoesNotDecodeAll(t *testing.T) {
	s := newStore(t)
	sess := &Session{Store: s, State: fsstate.New(s), Actor: store.Human}
	tr := transcript.Of(fsstate.New(s), "greeter")
	allocs := func() float64 {
		return testing.AllocsPerRun(3, func() {
			r, err := Conversation(context.Background(), sess, ConversationInput{PO: "greeter", Limit: 5})
			if err != nil || len(r.Turns) != 5 {
				t.Fatalf("Conversation = %+v, %v", r, err)
			}
		})
	}
	appendTurns := func(n int) {
		var msgs []openai.ChatCompletionMessage
		for i := range n {
			msgs = append(msgs, openai.ChatCompletionMessage{Role: "assistant", Content: "a turn of some length, like a reply",
				ToolCalls: []openai.ToolCall{{ID: fmt.Sprint("c", i), Type: "function", Function: openai.FunctionCall{Name: "say", Arguments: `{"x":1}`}}}},
				openai.ChatCompletionMessage{Role: "tool", ToolCallID: fmt.Sprint("c", i), Content: "ok"})
		}
		if err := tr.Append(msgs...); err != nil {
			t.Fatal(err)
		}
	}
	const small, large = 100, 1100 // lines
	appendTurns(small / 2)
	before := allocs()
	appendTurns((large - small) / 2)
	perLine := (allocs() - before) / (large - small)
	t.Logf("%.2f allocations per line", perLine)
	if perLine > 2 {
		t.Errorf("Conversation with a limit of 5 allocates %.1f more per transcript line, want at most 2", perLine)
	}
}

package bus

import (
	"bytes"
	"encoding/json"
	"math"
	"testing"
	"time"
)

// reference is Event as encoding/json alone writes it: the header from
// its tags, the payload as json.Marshal writes it (left out when it writes
// no field). Event's MarshalJSON must write these bytes.
func reference(ev Event) ([]byte, error) {
	w := struct {
		*eventFields
		Data json.RawMessage `json:"data,omitempty"`
	}{eventFields: (*eventFields)(&ev)}
	if ev.Data != nil {
		data, err := json.Marshal(ev.Data)
		if err != nil {
			return nil, err
		}
		if string(data) != "{}" && string(data) != "null" {
			w.Data = data
		}
	}
	return json.Marshal(w)
}

func checkEventJSON(t *testing.T, ev Event) {
	t.Helper()
	got, gotErr := json.Marshal(ev)
	want, wantErr := reference(ev)
	if (gotErr == nil) != (wantErr == nil) {
		t.Fatalf("Marshal(%+v): err %v, reference err %v", ev, gotErr, wantErr)
	}
	if !bytes.Equal(got, want) {
		t.Fatalf("Marshal(%+v)\n got %s\nwant %s", ev, got, want)
	}
	// jsonl.AppendHeld writes MarshalJSON's own bytes (ExactMarshaler):
	// they must be json.Marshal's without its compacting pass.
	if direct, err := ev.MarshalJSON(); err == nil && !bytes.Equal(direct, want) {
		t.Fatalf("MarshalJSON(%+v)\n got %s\nwant %s", ev, direct, want)
	}
}

func TestEventJSON(t *testing.T) {
	at := time.Date(2026, 11, 25, 13, 0, 0, 5, time.UTC)
	usd := 0.25
	for _, ev := range []Event{
		{},
		{Time: at, Kind: EvMessage, Actor: "oak", TaskID: "tk-a1b2c3", PhaseID: "ph-a1b2c3", MsgID: "msg-a1b2c3", Text: "hi <&>",
			Data: MessagePosted{N: 3, Limit: 10}},
		{Time: at, Kind: "x", Actor: "\xff\u2028", Agent: "a", Data: Other{}},                                             // no field: no data
		{Time: at, Kind: EvAgentOutput, Data: AgentOutput{}},                                                              // the same
		{Time: at, Kind: EvToolResult, Data: ToolResult{Cause: "c<1>"}},                                                   // omitempty and not
		{Time: at, Kind: EvPhaseOpened, Data: PhaseOpened{Roles: []string{"qa", "\u2028"}, Rules: "x<y"}},                 // a list
		{Time: at, Kind: EvPhaseOpened, Data: PhaseOpened{Limit: -7}},                                                     // a nil list: null
		{Time: at, Kind: EvAgentTurn, Data: AgentTurn{Turns: 1, USD: &usd}},                                               // a pointer
		{Time: at, Kind: EvAgentTurn, Data: AgentTurn{Tokens: math.MaxInt64}},                                             // null
		{Time: at, Kind: "x", Data: Other{"nested": map[string]any{"b": []any{1, "two", nil, true}}, "a": 1.5, "é": "<"}}, // any other data
		{Time: at, Kind: "x", Data: Other{"bad": math.NaN()}},                                                             // both fail
		{Time: time.Date(-1, 1, 1, 0, 0, 0, 0, time.UTC)},                                                                 // both fail
	} {
		checkEventJSON(t, ev)
	}
}

func FuzzEventJSON(f *testing.F) {
	f.Add(int64(0), "message.posted", "oak", "tk-a1b2c3", "", "msg-1", "", "hi <&>", "c1", int64(3), true)
	f.Fuzz(func(t *testing.T, unix int64, kind, actor, task, phase, msg, agent, text, s string, n int64, flag bool) {
		ev := Event{Time: time.Unix(unix%(1<<36), 0).UTC(), Kind: Kind(kind), Actor: actor, TaskID: task, PhaseID: phase,
			MsgID: msg, Agent: agent, Text: text}
		for _, p := range []Payload{nil, MessagePosted{N: int(n), Limit: int(n >> 3)}, POMessage{Cause: s, Corr: text},
			ToolResult{Cause: s, Error: flag, Message: !flag}, AgentTurn{Turns: n, Tokens: -n}, CapabilityCreated{Capabilities: []string{s, text}, Name: s},
			Other{s: n, text: flag}} {
			ev.Data = p
			checkEventJSON(t, ev)
		}
	})
}

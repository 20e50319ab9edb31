package bus

import (
	"bytes"
	"encoding/json"
	"math"
	"testing"
	"time"
)

// eventFields is Event without its MarshalJSON: the reflective encoding
// the hand-written one must match byte for byte.
type eventFields Event

func checkEventJSON(t *testing.T, ev Event) {
	t.Helper()
	got, gotErr := json.Marshal(ev)
	want, wantErr := json.Marshal(eventFields(ev))
	if (gotErr == nil) != (wantErr == nil) {
		t.Fatalf("Marshal(%+v): err %v, reflective err %v", ev, gotErr, wantErr)
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
	for _, ev := range []Event{
		{},
		{Time: at, Kind: EvMessage, Actor: "oak", TaskID: "tk-a1b2c3", PhaseID: "ph-a1b2c3", MsgID: "msg-a1b2c3", Text: "hi <&>",
			Data: map[string]any{"n": 3, "limit": 10}},
		{Time: at, Kind: "x", Actor: "\xff\u2028", Agent: "a", Data: map[string]any{}},
		{Time: at, Data: map[string]any{"nested": map[string]any{"b": []any{1, "two", nil, true}}, "a": 1.5}},
		{Time: at, Data: map[string]any{"b": true, "a": -7, "A": "x<y\u2028", "é": int64(1), "": false, "\xff": "z"}}, // the flat path
		{Time: at, Data: map[string]any{"n": 1, "f": 2.5}},                                                            // a float: json.Marshal
		{Time: at, Data: map[string]any{"bad": math.NaN()}},                                                           // both fail
		{Time: time.Date(-1, 1, 1, 0, 0, 0, 0, time.UTC)},                                                             // both fail
	} {
		checkEventJSON(t, ev)
	}
}

func FuzzEventJSON(f *testing.F) {
	f.Add(int64(0), "message.posted", "oak", "tk-a1b2c3", "", "msg-1", "", "hi <&>", "n", int64(3))
	f.Fuzz(func(t *testing.T, unix int64, kind, actor, task, phase, msg, agent, text, key string, n int64) {
		ev := Event{Time: time.Unix(unix%(1<<36), 0).UTC(), Kind: Kind(kind), Actor: actor, TaskID: task, PhaseID: phase,
			MsgID: msg, Agent: agent, Text: text}
		if key != "" {
			ev.Data = map[string]any{key: n, key + "s": text}
		}
		checkEventJSON(t, ev)
	})
}

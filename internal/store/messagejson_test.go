package store

import (
	"bytes"
	"encoding/json"
	"testing"
	"time"
)

// messageFields is Message without its MarshalJSON: what encoding/json
// writes from the tags, the bytes the hand-written encoder must match.
type messageFields Message

func checkMessageJSON(t *testing.T, m Message) {
	t.Helper()
	got, gotErr := json.Marshal(m)
	want, wantErr := json.Marshal(messageFields(m))
	if (gotErr == nil) != (wantErr == nil) {
		t.Fatalf("Marshal(%+v): err %v, reflective err %v", m, gotErr, wantErr)
	}
	if !bytes.Equal(got, want) {
		t.Fatalf("Marshal(%+v)\n got %s\nwant %s", m, got, want)
	}
	// jsonl.AppendHeld writes MarshalJSON's own bytes (ExactMarshaler):
	// they must be json.Marshal's without its compacting pass.
	if direct, err := m.MarshalJSON(); err == nil && !bytes.Equal(direct, want) {
		t.Fatalf("MarshalJSON(%+v)\n got %s\nwant %s", m, direct, want)
	}
}

func TestMessageJSON(t *testing.T) {
	at := time.Date(2026, 11, 25, 13, 0, 0, 123456789, time.UTC)
	for _, m := range []Message{
		{},
		{ID: "msg-a1b2c3", PhaseID: "ph-a1b2c3", Author: "oak_1a2b", Content: "hello", Timestamp: at},
		{ID: "msg-a1b2c3", Author: "oak", Role: "designer", Content: "<b>&</b> \u2028\u2029 \x00\x1f\"\\ é", Timestamp: at.In(time.FixedZone("x", 3600))},
		{Content: "bad utf-8 \xff\xfe and a tab\t and a newline\n", Timestamp: at},
		{Content: "year out of range", Timestamp: time.Date(10000, 1, 1, 0, 0, 0, 0, time.UTC)},
	} {
		checkMessageJSON(t, m)
	}
}

func FuzzMessageJSON(f *testing.F) {
	f.Add("msg-a1b2c3", "ph-a1b2c3", "oak", "", "hello <&> \u2028", int64(0), int64(0))
	f.Add("", "", "", "designer", "\xff\x00", int64(1<<40), int64(-7200))
	f.Fuzz(func(t *testing.T, id, phaseID, author, role, content string, unix, offset int64) {
		at := time.Unix(unix%(1<<36), unix%1e9).In(time.FixedZone("z", int(offset%86400)))
		checkMessageJSON(t, Message{ID: id, PhaseID: phaseID, Author: author, Role: role, Content: content, Timestamp: at})
	})
}

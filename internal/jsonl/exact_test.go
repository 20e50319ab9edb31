package jsonl_test

import (
	"bytes"
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/plasmodium/pm/internal/bus"
	"github.com/plasmodium/pm/internal/jsonl"
	"github.com/plasmodium/pm/internal/store"
)

// TestAppendExactMarshalers: the lines AppendHeld writes for the record
// types that marshal themselves exactly are json.Marshal's bytes.
func TestAppendExactMarshalers(t *testing.T) {
	at := time.Date(2026, 1, 2, 3, 4, 5, 6, time.UTC)
	records := []any{
		store.Message{},
		store.Message{ID: "msg-a1b2c3", PhaseID: "ph-d4e5f6", Author: "oak_1a2b", Role: "designer",
			Content: "<b>&</b> \u2028 \"q\" \\ \x00 \xff é", Timestamp: at},
		store.Message{Content: "offset", Timestamp: at.In(time.FixedZone("x", -3600))},
		bus.Event{},
		bus.Event{Time: at, Kind: bus.EvMessage, Actor: "oak", TaskID: "tk-a1b2c3", PhaseID: "ph-d4e5f6",
			MsgID: "msg-a1b2c3", Text: "hi <&>", Data: bus.PhaseOpened{Limit: 3, Rules: "<x>", Roles: []string{"a", "\u2028"}}},
	}
	path := filepath.Join(t.TempDir(), "log.jsonl")
	var want []byte
	for _, r := range records {
		if _, ok := r.(jsonl.ExactMarshaler); !ok {
			t.Fatalf("%T is not an ExactMarshaler", r)
		}
		line, err := json.Marshal(r)
		if err != nil {
			t.Fatal(err)
		}
		want = append(append(want, line...), '\n')
		if err := jsonl.Append(path, r); err != nil {
			t.Fatal(err)
		}
	}
	got, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(got, want) {
		t.Errorf("appended\n%s\nwant\n%s", got, want)
	}
}

// verbatim claims its (indented) output is exact: AppendHeld writes it as
// it is, which shows it skipped json.Marshal's compacting.
type verbatim struct{ err error }

func (v verbatim) MarshalJSON() ([]byte, error) { return []byte(`{ "a": 1 }`), v.err }
func (verbatim) MarshalsExactly()               {}

func TestAppendExactMarshalerDirect(t *testing.T) {
	path := filepath.Join(t.TempDir(), "log.jsonl")
	if err := jsonl.Append(path, verbatim{}); err != nil {
		t.Fatal(err)
	}
	if got, _ := os.ReadFile(path); string(got) != "{ \"a\": 1 }\n" {
		t.Errorf("appended %q, want MarshalJSON's bytes", got)
	}
	// A failing MarshalJSON: the error is json.Marshal's (which wraps it).
	v := verbatim{err: errors.New("boom")}
	_, want := json.Marshal(v)
	if err := jsonl.Append(path, v); err == nil || err.Error() != want.Error() {
		t.Errorf("Append: %v, want %v", err, want)
	}
}

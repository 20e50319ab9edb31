package bus

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/plasmodium/pm/internal/fieldfill"
	"github.com/plasmodium/pm/internal/secret"
)

// filledPayload is kind k's payload with every field non-zero (by
// reflection: a field added to a payload struct is filled too), or nil
// for a kind without one.
func filledPayload(t *testing.T, k Kind) Payload {
	t.Helper()
	zero, known := PayloadFor(k)
	if !known {
		t.Fatalf("PayloadFor(%s): unknown kind (Kinds lists it)", k)
	}
	if zero == nil {
		return nil
	}
	p := reflect.New(reflect.TypeOf(zero))
	if err := fieldfill.Fill(p.Interface()); err != nil {
		t.Fatal(err)
	}
	if z := fieldfill.Zero(p.Elem().Interface()); z != nil {
		t.Fatalf("%s: fieldfill left %v zero", k, z)
	}
	return p.Elem().Interface().(Payload)
}

// Every kind's payload, every field filled, round-trips through both
// buses exactly; its bytes are encoding/json's, and are what the map it
// replaced wrote (keys in order): events.jsonl and the dashboard's frames
// did not change. A field added to a payload and lost by the codec, or
// declared out of key order, fails here.
func TestPayloadsRoundTrip(t *testing.T) {
	at := time.Date(2026, 11, 25, 13, 0, 0, 5, time.UTC)
	withData := 0
	for _, k := range Kinds {
		p := filledPayload(t, k)
		if p == nil {
			continue
		}
		withData++
		ev := Event{Time: at, Kind: k, Actor: "oak", TaskID: "tk-a1b2c3", Agent: "oak", Text: "t", Data: p}
		checkEventJSON(t, ev)
		raw, err := ev.MarshalJSON()
		if err != nil {
			t.Fatal(err)
		}
		var w struct {
			Data json.RawMessage `json:"data"`
		}
		if err := json.Unmarshal(raw, &w); err != nil {
			t.Fatal(err)
		}
		var asMap map[string]any
		if err := json.Unmarshal(w.Data, &asMap); err != nil {
			t.Fatal(err)
		}
		if mapBytes, _ := json.Marshal(asMap); !bytes.Equal(mapBytes, w.Data) {
			t.Errorf("%s: data %s is not what a map of its keys wrote (%s): declare the fields in key order", k, w.Data, mapBytes)
		}
		for _, impl := range impls {
			b := impl.new(t)
			if err := b.Publish(ev); err != nil {
				t.Fatalf("%s %s: %v", impl.name, k, err)
			}
			got, _, err := b.Tail(1)
			if err != nil || len(got) != 1 {
				t.Fatalf("%s %s: Tail = %v, %v", impl.name, k, got, err)
			}
			if !reflect.DeepEqual(got[0].Event, ev) {
				t.Errorf("%s %s: read back\n%#v\nwant\n%#v", impl.name, k, got[0].Event, ev)
			}
			if !bytes.Equal(got[0].Raw, raw) {
				t.Errorf("%s %s: stored %s, want %s", impl.name, k, got[0].Raw, raw)
			}
		}
	}
	if withData < 20 {
		t.Errorf("only %d kinds carry data", withData)
	}
}

// The three po kinds share the inbox message's struct; every other kind
// with data has a struct of its own, so a reader's type switch names the
// kind.
func TestPayloadStructPerKind(t *testing.T) {
	owner := map[reflect.Type]Kind{}
	for _, k := range Kinds {
		p, _ := PayloadFor(k)
		if p == nil {
			continue
		}
		typ := reflect.TypeOf(p)
		if prev, ok := owner[typ]; ok && !(strings.HasPrefix(string(k), "po.") && strings.HasPrefix(string(prev), "po.")) {
			t.Errorf("%s and %s share %s", prev, k, typ)
		}
		owner[typ] = k
	}
}

// A payload of another kind's type, or data on a kind that has none, is
// refused and nothing is written; an unknown kind may carry Other.
func TestPublishRefusesWrongPayload(t *testing.T) {
	for _, impl := range impls {
		b := impl.new(t)
		var pe *PayloadError
		for _, ev := range []Event{
			{Kind: EvMessage, Data: PhaseClosed{Messages: 1}},
			{Kind: EvTaskKilled, Data: ChildDone{Child: "tk-1"}},
			{Kind: EvMessage, Data: Other{"n": 1}},
		} {
			if err := b.Publish(ev); !errors.As(err, &pe) {
				t.Errorf("%s: Publish(%+v) = %v, want a PayloadError", impl.name, ev, err)
			}
		}
		if got, _, _ := b.Tail(10); len(got) != 0 {
			t.Errorf("%s: a refused event was written: %+v", impl.name, got)
		}
		if err := b.Publish(Event{Kind: "x.new", Data: Other{"n": 1}}); err != nil {
			t.Errorf("%s: an unknown kind with Other: %v", impl.name, err)
		}
	}
}

// Reading is tolerant: data that does not fit its kind's struct exactly
// (another version's line) or of an unknown kind is kept whole as Other;
// "data":null and no data are nil.
func TestDecodePayload(t *testing.T) {
	for _, tt := range []struct {
		line string
		want Payload
	}{
		{`{"ts":"2026-01-01T00:00:00Z","kind":"message.posted","actor":"a","data":{"limit":5,"n":2}}`, MessagePosted{N: 2, Limit: 5}},
		{`{"ts":"2026-01-01T00:00:00Z","kind":"message.posted","actor":"a","data":{"limit":5,"n":2,"priority":3}}`, Other{"limit": 5.0, "n": 2.0, "priority": 3.0}},
		{`{"ts":"2026-01-01T00:00:00Z","kind":"message.posted","actor":"a","data":{"limit":"five"}}`, Other{"limit": "five"}},
		{`{"ts":"2026-01-01T00:00:00Z","kind":"task.killed","actor":"a","data":{"why":"x"}}`, Other{"why": "x"}},
		{`{"ts":"2026-01-01T00:00:00Z","kind":"some.future","actor":"a","data":{"k":[1]}}`, Other{"k": []any{1.0}}},
		{`{"ts":"2026-01-01T00:00:00Z","kind":"agent.exited","actor":"a","data":null}`, nil},
		{`{"ts":"2026-01-01T00:00:00Z","kind":"agent.exited","actor":"a"}`, nil},
	} {
		var ev Event
		if err := json.Unmarshal([]byte(tt.line), &ev); err != nil {
			t.Fatalf("%s: %v", tt.line, err)
		}
		if !reflect.DeepEqual(ev.Data, tt.want) {
			t.Errorf("%s: Data = %#v, want %#v", tt.line, ev.Data, tt.want)
		}
	}
	var ev Event
	if err := json.Unmarshal([]byte(`{"ts":"2026-01-01T00:00:00Z","kind":"x","data":[1]}`), &ev); err == nil {
		t.Errorf("data that is no object decoded: %+v", ev)
	}
}

// A secret in a payload's strings (its lists too) is masked before the
// event is written, the payload keeps its type, and the publisher's value
// is not changed.
func TestPublishMasksPayload(t *testing.T) {
	const key = "sk-test-0123456789"
	b := &Mem{Secrets: secret.New(key)}
	roles := []string{"qa", "x" + key}
	if err := b.Publish(Event{Kind: EvPhaseOpened, Data: PhaseOpened{Limit: 3, Roles: roles, Rules: "use " + key}}); err != nil {
		t.Fatal(err)
	}
	got, _, _ := b.Tail(1)
	want := PhaseOpened{Limit: 3, Roles: []string{"qa", "x" + secret.Masked}, Rules: "use " + secret.Masked}
	if len(got) != 1 || !reflect.DeepEqual(got[0].Event.Data, want) || bytes.Contains(got[0].Raw, []byte(key)) {
		t.Fatalf("published %+v", got)
	}
	if roles[1] != "x"+key {
		t.Errorf("the publisher's slice was changed: %v", roles)
	}
}

// A follower hands out typed payloads too (Subscribe decodes as Tail does).
func TestSubscribeTyped(t *testing.T) {
	for _, impl := range impls {
		b := impl.new(t)
		if err := b.Publish(Event{Kind: EvAgentExited, Data: AgentExited{ExitCode: 0}}); err != nil {
			t.Fatal(err)
		}
		ctx, cancel := context.WithCancel(context.Background())
		for d, err := range b.Subscribe(ctx, Cursor{}) {
			if err != nil {
				t.Fatal(err)
			}
			if d.Event.Data != (AgentExited{ExitCode: 0}) {
				t.Errorf("%s: Data = %#v", impl.name, d.Event.Data)
			}
			cancel()
			break
		}
		cancel()
	}
}

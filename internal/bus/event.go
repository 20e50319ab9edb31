package bus

import (
	"encoding/json"
	"fmt"
	"time"

	"github.com/plasmodium/pm/internal/jsonl"
	"github.com/plasmodium/pm/internal/secret"
)

// Event is one line of events.jsonl.
type Event struct {
	Time    time.Time `json:"ts"`
	Kind    Kind      `json:"kind"`
	Actor   string    `json:"actor"`
	TaskID  string    `json:"task_id,omitempty"`
	PhaseID string    `json:"phase_id,omitempty"`
	MsgID   string    `json:"msg_id,omitempty"`
	Agent   string    `json:"agent,omitempty"`
	Text    string    `json:"text,omitempty"`
	// Data is the kind's payload (payload.go): nil, the struct PayloadFor
	// names, or Other. A payload that writes no field (`{}`) is left out,
	// as an empty map was.
	Data Payload `json:"data,omitempty"`
}

// eventFields is Event without its methods, so decoding into it does not
// recurse into UnmarshalJSON.
type eventFields Event

// UnmarshalJSON reads an event and its payload as its kind's struct
// (decodePayload). Every field but Data is Event's own, decoded in place
// (a field added to Event is read with no change here); Data, shadowed by
// the outer field of the same name, is kept as JSON text first.
func (ev *Event) UnmarshalJSON(b []byte) error {
	w := struct {
		*eventFields
		Data json.RawMessage `json:"data,omitempty"`
	}{eventFields: (*eventFields)(ev)}
	*ev = Event{}
	if err := json.Unmarshal(b, &w); err != nil {
		return err
	}
	data, err := decodePayload(ev.Kind, w.Data)
	if err != nil {
		return err
	}
	ev.Data = data
	return nil
}

// stamp fills what a publisher may leave out (the time, the human as actor)
// and masks secrets in the text and data (internal/secret is the policy):
// every implementation publishes the same line. A payload of the wrong
// type for its kind is refused (checkPayload).
// encode stamps ev (stamp) and encodes it as one line of a log, refused
// over the line limit every reader holds (jsonl.MaxLine): what Mem and
// Seq append (File appends through jsonl.Append, which checks the same).
func encode(ev Event, now func() time.Time, secrets secret.Set) ([]byte, error) {
	ev, err := stamp(ev, now, secrets)
	if err != nil {
		return nil, err
	}
	raw, err := json.Marshal(ev)
	if err != nil {
		return nil, err
	}
	if len(raw)+1 > jsonl.MaxLine {
		return nil, fmt.Errorf("bus: record of %d bytes is over the %d byte line limit", len(raw), jsonl.MaxLine)
	}
	return raw, nil
}

func stamp(ev Event, now func() time.Time, secrets secret.Set) (Event, error) {
	if err := checkPayload(ev); err != nil {
		return Event{}, err
	}
	if ev.Time.IsZero() {
		if now == nil {
			now = time.Now
		}
		ev.Time = now().UTC()
	}
	if ev.Actor == "" {
		ev.Actor = "human"
	}
	ev.Text = secrets.Mask(ev.Text)
	if ev.Data != nil {
		ev.Data = secrets.MaskValue(ev.Data).(Payload)
	}
	return ev, nil
}

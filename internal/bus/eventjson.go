package bus

import (
	"encoding/json"

	"github.com/plasmodium/pm/internal/jsonl"
)

// MarshalJSON writes ev as encoding/json writes it from its tags, without
// building the struct's encoder by reflection, which cost a short command
// (every pm say publishes one event) more than the encoding.
// FuzzEventJSON keeps the bytes identical to the reflective encoding.
func (ev Event) MarshalJSON() ([]byte, error) {
	ts, err := ev.Time.MarshalJSON()
	if err != nil {
		return nil, err
	}
	var data []byte
	if len(ev.Data) > 0 {
		if data, err = json.Marshal(ev.Data); err != nil {
			return nil, err
		}
	}
	b := make([]byte, 0, 96+len(ev.Text)+len(data))
	b = append(b, `{"ts":`...)
	b = append(b, ts...)
	b = jsonl.AppendField(b, ',', "kind", string(ev.Kind))
	b = jsonl.AppendField(b, ',', "actor", ev.Actor)
	for _, f := range [...]struct{ key, value string }{
		{"task_id", ev.TaskID}, {"phase_id", ev.PhaseID}, {"msg_id", ev.MsgID}, {"agent", ev.Agent}, {"text", ev.Text},
	} {
		if f.value != "" {
			b = jsonl.AppendField(b, ',', f.key, f.value)
		}
	}
	if data != nil {
		b = append(b, `,"data":`...)
		b = append(b, data...)
	}
	return append(b, '}'), nil
}

// MarshalsExactly marks MarshalJSON as writing json.Marshal's bytes
// (jsonl.ExactMarshaler): FuzzEventJSON compares them.
func (Event) MarshalsExactly() {}

var _ jsonl.ExactMarshaler = Event{}

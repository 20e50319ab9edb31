package bus

import (
	"encoding/json"
	"slices"
	"strconv"

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
		if data = appendFlatData(nil, ev.Data); data == nil {
			if data, err = json.Marshal(ev.Data); err != nil {
				return nil, err
			}
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

// appendFlatData appends data as json.Marshal encodes it (keys sorted
// bytewise, strings quoted as it quotes them) when every value is a string,
// an int, an int64 or a bool, as most events' are (pm say's n and limit);
// it returns nil for any other value, which json.Marshal then encodes.
func appendFlatData(b []byte, data map[string]any) []byte {
	keys := make([]string, 0, len(data))
	for k, v := range data {
		switch v.(type) {
		case string, int, int64, bool:
		default:
			return nil
		}
		keys = append(keys, k)
	}
	slices.Sort(keys)
	for i, k := range keys {
		sep := byte(',')
		if i == 0 {
			sep = '{'
		}
		b = append(b, sep)
		b = jsonl.AppendString(b, k)
		b = append(b, ':')
		switch v := data[k].(type) {
		case string:
			b = jsonl.AppendString(b, v)
		case int:
			b = strconv.AppendInt(b, int64(v), 10)
		case int64:
			b = strconv.AppendInt(b, v, 10)
		case bool:
			b = strconv.AppendBool(b, v)
		}
	}
	return append(b, '}')
}

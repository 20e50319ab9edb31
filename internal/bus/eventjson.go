package bus

import (
	"encoding/json"
	"reflect"
	"strconv"
	"strings"

	"github.com/plasmodium/pm/internal/jsonl"
)

// MarshalJSON writes ev as encoding/json writes it from its tags (the
// payload as json.Marshal writes the kind's struct; one that writes no
// field is left out, as an empty map was), without encoding/json's
// encoders: building them by reflection in a fresh process cost a short
// command (every pm say publishes one event) 0.3-0.4 ms, more than the
// rest of its encoding (docs/benchmarks.md, issue 22). The header's fields
// are listed here (TestEventCodecKeepsEveryField fills every one); a
// payload's are read from its struct by appendPayload, so a field added to
// a payload is written with no change here (TestPayloadsRoundTrip).
func (ev Event) MarshalJSON() ([]byte, error) {
	ts, err := ev.Time.MarshalJSON()
	if err != nil {
		return nil, err
	}
	b := make([]byte, 0, 160+len(ev.Text))
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
	if ev.Data != nil {
		head := len(b)
		b = append(b, `,"data":`...)
		start := len(b)
		if b, err = appendPayload(b, ev.Data); err != nil {
			return nil, err
		}
		if string(b[start:]) == "{}" || string(b[start:]) == "null" {
			b = b[:head]
		}
	}
	return append(b, '}'), nil
}

// MarshalsExactly marks MarshalJSON as writing json.Marshal's bytes
// (jsonl.ExactMarshaler): FuzzEventJSON and TestPayloadsRoundTrip compare
// them with encoding/json's.
func (Event) MarshalsExactly() {}

var _ jsonl.ExactMarshaler = Event{}

// appendPayload appends p as json.Marshal writes it. A payload struct's
// fields are read by reflection from its type and tags, each time, so
// nothing here names a field: strings, integers and bools are written
// here, any other field (a list, a pointer) and Other by json.Marshal.
// The payload structs use plain `json:"name"` and `json:"name,omitempty"`
// tags only (TestPayloadsRoundTrip compares every kind's bytes with
// json.Marshal's).
func appendPayload(b []byte, p Payload) ([]byte, error) {
	v := reflect.ValueOf(p)
	if v.Kind() != reflect.Struct {
		raw, err := json.Marshal(p)
		return append(b, raw...), err
	}
	t := v.Type()
	sep := byte('{')
	for i := range t.NumField() {
		name, opts, _ := strings.Cut(t.Field(i).Tag.Get("json"), ",")
		f := v.Field(i)
		if opts == "omitempty" && isEmpty(f) {
			continue
		}
		b = append(b, sep)
		sep = ','
		b = jsonl.AppendString(b, name)
		b = append(b, ':')
		switch f.Kind() {
		case reflect.String:
			b = jsonl.AppendString(b, f.String())
		case reflect.Int, reflect.Int64:
			b = strconv.AppendInt(b, f.Int(), 10)
		case reflect.Bool:
			b = strconv.AppendBool(b, f.Bool())
		default:
			raw, err := json.Marshal(f.Interface())
			if err != nil {
				return nil, err
			}
			b = append(b, raw...)
		}
	}
	if sep == '{' {
		b = append(b, '{')
	}
	return append(b, '}'), nil
}

// isEmpty is encoding/json's omitempty test.
func isEmpty(v reflect.Value) bool {
	switch v.Kind() {
	case reflect.Array, reflect.Map, reflect.Slice, reflect.String:
		return v.Len() == 0
	case reflect.Struct:
		return false
	}
	return v.IsZero()
}

package store

import (
	"encoding/json"

	"github.com/plasmodium/pm/internal/jsonl"
)

// MarshalJSON writes m as encoding/json writes it from its tags, without
// the reflection: every pm say encodes one message in a fresh process, and
// building the struct's encoder cost more than the encoding.
// FuzzMessageJSON keeps the bytes identical to the reflective encoding.
func (m Message) MarshalJSON() ([]byte, error) {
	ts, err := m.Timestamp.MarshalJSON()
	if err != nil {
		return nil, err
	}
	b := make([]byte, 0, 112+len(m.ID)+len(m.PhaseID)+len(m.Author)+len(m.Role)+len(m.Content))
	b = jsonl.AppendField(b, '{', "id", m.ID)
	b = jsonl.AppendField(b, ',', "phase_id", m.PhaseID)
	b = jsonl.AppendField(b, ',', "author", m.Author)
	if m.Role != "" {
		b = jsonl.AppendField(b, ',', "role", m.Role)
	}
	b = jsonl.AppendField(b, ',', "content", m.Content)
	b = append(b, `,"timestamp":`...)
	b = append(b, ts...)
	return append(b, '}'), nil
}

// MarshalsExactly marks MarshalJSON as writing json.Marshal's bytes
// (jsonl.ExactMarshaler): FuzzMessageJSON compares them.
func (Message) MarshalsExactly() {}

var (
	_ json.Marshaler       = Message{}
	_ jsonl.ExactMarshaler = Message{}
)

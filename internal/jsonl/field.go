package jsonl

import "encoding/json"

// AppendField appends sep, then "key":value with value as encoding/json
// writes a string (HTML characters, invalid UTF-8 and U+2028/2029 escaped
// the same way): the pieces of a hand-written MarshalJSON that must match
// the reflective encoding byte for byte. key is a constant and is not
// escaped.
func AppendField(b []byte, sep byte, key, value string) []byte {
	b = append(b, sep, '"')
	b = append(b, key...)
	b = append(b, '"', ':')
	q, _ := json.Marshal(value) // a string always encodes
	return append(b, q...)
}

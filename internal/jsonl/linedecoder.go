package jsonl

// LineDecoder is a record type with a fast decoder of its own for the lines
// it is usually written as (store.Message). Decode tries it first and falls
// back to encoding/json when it reports false. DecodeLine must report true
// only when it validated the whole line as JSON and set the value exactly
// as json.Unmarshal would from the zero value; when it reports false it
// must leave the value untouched.
type LineDecoder interface {
	DecodeLine(raw []byte) bool
}

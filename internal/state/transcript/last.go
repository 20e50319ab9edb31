package transcript

import (
	openai "github.com/sashabaranov/go-openai"
)

// Last is Load followed by keeping the last n messages (n > 0), and the
// number Load returns, without decoding or holding the whole transcript
// (a resident agent's grows without bound): state.Transcripts'
// LastTranscript keeping the entries that are messages, with plainMessage
// sparing the decode of the entries Append writes.
func (t *T) Last(n int) (msgs []openai.ChatCompletionMessage, total int, err error) {
	last, total, err := t.st.LastTranscript(t.name, n, isMessage)
	for _, raw := range last {
		m, _ := decode(raw) // isMessage accepted it
		msgs = append(msgs, m)
	}
	return msgs, total, err
}

// isMessage reports whether an entry decodes into a message.
func isMessage(raw []byte) bool {
	if plainMessage(raw) {
		return true
	}
	_, ok := decode(raw)
	return ok
}

// plainMessage reports, for a line json.Valid accepted, that it surely
// decodes into a ChatCompletionMessage: an object whose keys are exactly
// the names of its string fields with a string or null value, and
// tool_calls with the shape Append writes. Reporting false only means "not
// sure": the line is then decoded to find out. FuzzPlainMessage checks
// that true implies json.Unmarshal succeeds.
func plainMessage(raw []byte) bool {
	i, ok := plainObject(raw, skipWS(raw, 0), messageKey)
	return ok && skipWS(raw, i) == len(raw)
}

// The keys plainObject accepts, with the value each must have.
const (
	valueString = iota + 1
	valueToolCalls
	valueFunction
)

func messageKey(k []byte) int {
	switch string(k) {
	case "role", "content", "refusal", "name", "reasoning_content", "tool_call_id":
		return valueString
	case "tool_calls":
		return valueToolCalls
	}
	return 0
}

func toolCallKey(k []byte) int {
	switch string(k) {
	case "id", "type":
		return valueString
	case "function":
		return valueFunction
	}
	return 0
}

func functionKey(k []byte) int {
	switch string(k) {
	case "name", "arguments":
		return valueString
	}
	return 0
}

// plainObject scans, in valid JSON, an object at raw[i] whose keys key
// accepts (exactly: a key with an escape never matches) with values of the
// kind it names, and returns the index after it.
func plainObject(raw []byte, i int, key func([]byte) int) (int, bool) {
	if i == len(raw) || raw[i] != '{' {
		return 0, false
	}
	i = skipWS(raw, i+1)
	if raw[i] == '}' {
		return i + 1, true
	}
	for {
		end, ok := stringEnd(raw, i)
		if !ok {
			return 0, false
		}
		kind := key(raw[i+1 : end-1])
		i = skipWS(raw, skipWS(raw, end)+1) // past the ':'
		switch {
		case isNull(raw, i):
			i += len("null")
		case kind == valueString:
			i, ok = stringEnd(raw, i)
		case kind == valueToolCalls:
			i, ok = plainArray(raw, i, toolCallKey)
		case kind == valueFunction:
			i, ok = plainObject(raw, i, functionKey)
		default:
			ok = false
		}
		if !ok {
			return 0, false
		}
		i = skipWS(raw, i)
		if raw[i] == '}' {
			return i + 1, true
		}
		i = skipWS(raw, i+1) // past the ','
	}
}

// plainArray scans an array of plainObjects at raw[i].
func plainArray(raw []byte, i int, key func([]byte) int) (int, bool) {
	if raw[i] != '[' {
		return 0, false
	}
	i = skipWS(raw, i+1)
	if raw[i] == ']' {
		return i + 1, true
	}
	for {
		var ok bool
		if i, ok = plainObject(raw, i, key); !ok {
			return 0, false
		}
		i = skipWS(raw, i)
		if raw[i] == ']' {
			return i + 1, true
		}
		i = skipWS(raw, i+1)
	}
}

// stringEnd returns the index after the string at raw[i] (valid JSON: its
// escapes are well formed), or false if raw[i] starts no string.
func stringEnd(raw []byte, i int) (int, bool) {
	if i >= len(raw) || raw[i] != '"' {
		return 0, false
	}
	for i++; i < len(raw); i++ {
		switch raw[i] {
		case '\\':
			i++
		case '"':
			return i + 1, true
		}
	}
	return 0, false
}

func isNull(raw []byte, i int) bool {
	return len(raw)-i >= 4 && string(raw[i:i+4]) == "null"
}

func skipWS(raw []byte, i int) int {
	for i < len(raw) && (raw[i] == ' ' || raw[i] == '\t' || raw[i] == '\n' || raw[i] == '\r') {
		i++
	}
	return i
}

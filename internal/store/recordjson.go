package store

import (
	"strconv"
	"time"
	"unicode/utf8"
)

// The record decoders (Agent.DecodeFast, Phase.DecodeFast): scanning
// functions in jsonscan.go's style, built on its scanner, that decode the
// records pm writes (lockedfile.WriteJSON) without encoding/json's
// reflection. A short command reads agent.json once and phase.json two or
// three times in a fresh process, where building encoding/json's decoders
// for Agent, Phase and their nested types cost more than the rest of the
// decoding.
//
// Each function scans one value at raw[i] and returns the index after it;
// ok false means "not handled" (invalid, or a shape left to encoding/json).
// A record's decoder starts from the zero value and declines a repeated
// member, so encoding/json's merging into a value decoded before never
// arises, and a null member leaves the zero value as it is, which is what
// encoding/json does with null for every field type here (a pointer or a
// slice is set to nil, anything else is left alone).

// scanObject scans the object at raw[i]. For each member whose key is
// exactly keys[k] it calls set(k, j), j the index of its value, which
// scans the value into the field and returns the index after it; a null
// value is skipped (see above), a repeated key declined. A key that is no
// field's may hold any scalar, which is skipped; one that might match a
// field the way encoding/json matches names (escaped, non-ASCII, another
// case) is declined. keys holds at most 64 names.
func scanObject(raw []byte, i int, keys []string, set func(k, j int) (next int, ok bool)) (next int, ok bool) {
	var seen uint64
	i, end, ok := objectStart(raw, i)
	for ok && !end {
		var k, next int
		if k, next, ok = scanMemberKey(raw, i, keys); !ok {
			return 0, false
		}
		if i, ok = memberValue(raw, next); !ok {
			return 0, false
		}
		switch {
		case k < 0:
			i, ok = skipScalar(raw, i)
		case seen&(1<<k) != 0:
			return 0, false // encoding/json would decode into the first one's value
		default:
			seen |= 1 << k
			if next, null := word(raw, i, "null"); null {
				i = next
			} else {
				i, ok = set(k, i)
			}
		}
		if !ok {
			return 0, false
		}
		i, end, ok = memberEnd(raw, i)
	}
	return i, ok
}

// scanMemberKey scans a key from its opening quote at raw[i] and returns
// its index in keys, or -1 for a plain ASCII key that does not fold to any
// of them; anything else is not handled.
func scanMemberKey(raw []byte, i int, keys []string) (k, next int, ok bool) {
	if i >= len(raw) || raw[i] != '"' {
		return 0, 0, false
	}
	end, escaped, nonASCII, ok := scanString(raw, i+1)
	if !ok || escaped || nonASCII {
		return 0, 0, false
	}
	key := raw[i+1 : end]
	for k, name := range keys {
		if string(key) == name {
			return k, end + 1, true
		}
	}
	for _, name := range keys {
		if asciiEqualFold(key, name) {
			return 0, 0, false
		}
	}
	return -1, end + 1, true
}

// stringInto scans the string at raw[i] into *dst as encoding/json
// decodes a string into a Go string type. *doc is string(raw), made on
// first use, from which strings without escapes are cut (one allocation
// for the record's strings). Invalid UTF-8 (which encoding/json replaces),
// a surrogate escape and anything but a string are not handled.
func stringInto[S ~string](raw []byte, i int, doc *string, dst *S) (next int, ok bool) {
	if i >= len(raw) || raw[i] != '"' {
		return 0, false
	}
	end, escaped, nonASCII, ok := scanString(raw, i+1)
	switch {
	case !ok, nonASCII && !utf8.Valid(raw[i+1:end]):
		return 0, false
	case escaped:
		s, ok := unescape(raw[i+1 : end])
		*dst = S(s)
		return end + 1, ok
	}
	if *doc == "" {
		*doc = string(raw)
	}
	*dst = S((*doc)[i+1 : end])
	return end + 1, true
}

// stringsInto scans an array of strings at raw[i] into a new slice (not
// nil, even when empty, as encoding/json makes it).
func stringsInto(raw []byte, i int, doc *string, dst *[]string) (next int, ok bool) {
	if i >= len(raw) || raw[i] != '[' {
		return 0, false
	}
	*dst = []string{}
	i = skipSpace(raw, i+1)
	if i < len(raw) && raw[i] == ']' {
		return i + 1, true
	}
	for {
		var s string
		if i, ok = stringInto(raw, i, doc, &s); !ok {
			return 0, false
		}
		*dst = append(*dst, s)
		i = skipSpace(raw, i)
		if i < len(raw) && raw[i] == ',' {
			i = skipSpace(raw, i+1)
			continue
		}
		if i < len(raw) && raw[i] == ']' {
			return i + 1, true
		}
		return 0, false
	}
}

// timeInto scans the string at raw[i] into *dst as time.Time's
// UnmarshalJSON decodes it (parseUTC's fast path first); anything else is
// not handled.
func timeInto(raw []byte, i int, dst *time.Time) (next int, ok bool) {
	if i >= len(raw) || raw[i] != '"' {
		return 0, false
	}
	end, _, _, ok := scanString(raw, i+1)
	if !ok {
		return 0, false
	}
	if t, ok := parseUTC(raw[i+1 : end]); ok {
		*dst = t
		return end + 1, true
	}
	// encoding/json hands time.Time the raw quoted value, escapes and all.
	return end + 1, dst.UnmarshalJSON(raw[i:end+1]) == nil
}

// timePtrInto is timeInto into a new *time.Time.
func timePtrInto(raw []byte, i int, dst **time.Time) (next int, ok bool) {
	*dst = new(time.Time)
	return timeInto(raw, i, *dst)
}

// intInto scans an integer at raw[i] into *dst as encoding/json decodes a
// number into a Go int type: strconv refuses a fraction, an exponent or an
// int64 overflow, and a value that does not fit I is refused, where
// encoding/json fails too.
func intInto[I ~int | ~int64](raw []byte, i int, dst *I) (next int, ok bool) {
	if next, ok = numberAt(raw, i); !ok {
		return 0, false
	}
	n, err := strconv.ParseInt(string(raw[i:next]), 10, 64)
	*dst = I(n)
	return next, err == nil && int64(*dst) == n
}

// floatInto scans a JSON number into a float64, as encoding/json does.
func floatInto(raw []byte, i int, dst *float64) (next int, ok bool) {
	if next, ok = numberAt(raw, i); !ok {
		return 0, false
	}
	f, err := strconv.ParseFloat(string(raw[i:next]), 64)
	*dst = f
	return next, err == nil
}

// uintInto is intInto for a uint64 (a minus sign, even on zero, fails as
// in encoding/json).
func uintInto(raw []byte, i int, dst *uint64) (next int, ok bool) {
	if next, ok = numberAt(raw, i); !ok {
		return 0, false
	}
	n, err := strconv.ParseUint(string(raw[i:next]), 10, 64)
	*dst = n
	return next, err == nil
}

// numberAt scans a JSON number at raw[i].
func numberAt(raw []byte, i int) (next int, ok bool) {
	if i >= len(raw) || raw[i] != '-' && (raw[i] < '0' || raw[i] > '9') {
		return 0, false
	}
	return scanNumber(raw, i)
}

// boolInto scans true or false at raw[i] into *dst.
func boolInto(raw []byte, i int, dst *bool) (next int, ok bool) {
	if next, ok = word(raw, i, "true"); ok {
		*dst = true
		return next, true
	}
	return word(raw, i, "false")
}

// wholeDocument reports whether only white space follows raw[i], after a
// value that ended there (ok).
func wholeDocument(raw []byte, i int, ok bool) bool {
	return ok && skipSpace(raw, i) == len(raw)
}

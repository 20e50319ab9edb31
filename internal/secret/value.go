package secret

import (
	"encoding/json"
	"strings"
)

// MaskData returns event data with every secret in it masked. Data holding
// no secret is returned as is; otherwise a masked copy (data is never
// changed in place: the caller may still hold it).
func (s Set) MaskData(data map[string]any) map[string]any {
	m, changed := s.maskValue(data)
	if !changed {
		return data
	}
	if out, ok := m.(map[string]any); ok {
		return out
	}
	return data // unreachable: a map stays a map
}

// MaskValue returns v with every secret in its strings masked, looking
// through maps, slices and anything else that marshals to JSON. A value
// holding no secret is returned unchanged; a changed one is a copy: strings,
// []any and map[string]any keep their type, other types come back in the
// shape json.Unmarshal gives them (the shape they are written in anyway).
func (s Set) MaskValue(v any) any {
	m, _ := s.maskValue(v)
	return m
}

// maskValue is MaskValue that also reports whether anything was masked.
func (s Set) maskValue(v any) (any, bool) {
	if s.Empty() {
		return v, false
	}
	switch x := v.(type) {
	case nil, bool, int, int64, float64:
		return v, false
	case string:
		m := s.Mask(x)
		return m, m != x
	case []any:
		return s.maskSlice(x)
	case map[string]any:
		return s.maskMap(x)
	}
	return s.maskJSON(v)
}

func (s Set) maskSlice(x []any) (any, bool) {
	out := make([]any, len(x))
	changed := false
	for i, e := range x {
		var c bool
		out[i], c = s.maskValue(e)
		changed = changed || c
	}
	if !changed {
		return x, false
	}
	return out, true
}

func (s Set) maskMap(x map[string]any) (any, bool) {
	out := make(map[string]any, len(x))
	changed := false
	for k, e := range x {
		m, c := s.maskValue(e)
		mk := s.Mask(k)
		out[mk] = m
		changed = changed || c || mk != k
	}
	if !changed {
		return x, false
	}
	return out, true
}

// maskJSON masks any other value through its JSON form, and only if that
// form holds a secret, so a value without one keeps its type.
func (s Set) maskJSON(v any) (any, bool) {
	b, err := json.Marshal(v)
	if err != nil || !s.inJSON(string(b)) {
		return v, false
	}
	var g any
	if err := json.Unmarshal(b, &g); err != nil {
		return Masked, true // holds a secret and cannot be taken apart: drop it whole
	}
	m, _ := s.maskValue(g)
	return m, true
}

// inJSON reports whether JSON text holds a secret, raw or JSON-escaped.
func (s Set) inJSON(text string) bool {
	for _, sec := range s.values {
		esc, _ := json.Marshal(sec)
		if strings.Contains(text, sec) || strings.Contains(text, string(esc[1:len(esc)-1])) {
			return true
		}
	}
	return false
}

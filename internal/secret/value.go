package secret

import (
	"encoding"
	"encoding/json"
	"reflect"
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
// through structs (exported fields), maps (keys too), slices, arrays,
// pointers and interfaces. A value holding no secret is returned
// unchanged; a changed one is a copy of the same type (what changed is
// copied, the caller's value is never written), so a bus event's typed
// payload stays its type. A value that writes its own JSON or text (a
// json.Marshaler, an encoding.TextMarshaler) is masked through that form
// and comes back in the shape json.Unmarshal gives it.
func (s Set) MaskValue(v any) any {
	m, _ := s.maskValue(v)
	return m
}

// maskValue is MaskValue that also reports whether anything was masked.
func (s Set) maskValue(v any) (any, bool) {
	if s.Empty() || v == nil {
		return v, false
	}
	if _, ok := v.(json.Marshaler); ok {
		return s.maskJSON(v)
	}
	if _, ok := v.(encoding.TextMarshaler); ok {
		return s.maskJSON(v)
	}
	out, changed := s.maskReflect(reflect.ValueOf(v))
	if !changed {
		return v, false
	}
	return out.Interface(), true
}

// maskReflect is maskValue on a reflect.Value: the masked copy, or v itself
// when nothing under it holds a secret.
func (s Set) maskReflect(v reflect.Value) (reflect.Value, bool) {
	switch v.Kind() {
	case reflect.String:
		m := s.Mask(v.String())
		if m == v.String() {
			return v, false
		}
		out := reflect.New(v.Type()).Elem()
		out.SetString(m)
		return out, true
	case reflect.Interface:
		if v.IsNil() {
			return v, false
		}
		m, changed := s.maskValue(v.Interface())
		if !changed {
			return v, false
		}
		out := reflect.New(v.Type()).Elem()
		out.Set(reflect.ValueOf(m))
		return out, true
	case reflect.Pointer:
		if v.IsNil() {
			return v, false
		}
		m, changed := s.maskReflect(v.Elem())
		if !changed {
			return v, false
		}
		out := reflect.New(v.Type().Elem())
		out.Elem().Set(m)
		return out, true
	case reflect.Struct:
		return s.maskFields(v)
	case reflect.Slice, reflect.Array:
		return s.maskElems(v)
	case reflect.Map:
		return s.maskMapValue(v)
	}
	return v, false // numbers, bools: nothing to mask
}

// maskFields masks a struct's exported fields (the ones written to JSON).
func (s Set) maskFields(v reflect.Value) (reflect.Value, bool) {
	var out reflect.Value
	for i := range v.NumField() {
		if !v.Type().Field(i).IsExported() {
			continue
		}
		m, changed := s.maskReflect(v.Field(i))
		if !changed {
			continue
		}
		if !out.IsValid() {
			out = reflect.New(v.Type()).Elem()
			out.Set(v)
		}
		out.Field(i).Set(m)
	}
	if !out.IsValid() {
		return v, false
	}
	return out, true
}

// maskElems masks a slice's or an array's elements into a new one.
func (s Set) maskElems(v reflect.Value) (reflect.Value, bool) {
	var out reflect.Value
	for i := range v.Len() {
		m, changed := s.maskReflect(v.Index(i))
		if !changed {
			continue
		}
		if !out.IsValid() {
			if v.Kind() == reflect.Slice {
				out = reflect.MakeSlice(v.Type(), v.Len(), v.Len())
			} else {
				out = reflect.New(v.Type()).Elem()
			}
			reflect.Copy(out, v)
		}
		out.Index(i).Set(m)
	}
	if !out.IsValid() {
		return v, false
	}
	return out, true
}

// maskMapValue masks a map's keys and values into a new map.
func (s Set) maskMapValue(v reflect.Value) (reflect.Value, bool) {
	if v.IsNil() {
		return v, false
	}
	out := reflect.MakeMapWithSize(v.Type(), v.Len())
	changed := false
	for it := v.MapRange(); it.Next(); {
		k, ck := s.maskReflect(it.Key())
		e, ce := s.maskReflect(it.Value())
		out.SetMapIndex(k, e)
		changed = changed || ck || ce
	}
	if !changed {
		return v, false
	}
	return out, true
}

// maskJSON masks a value that writes its own JSON or text through that
// form, and only if it holds a secret, so a value without one keeps its type.
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

package config

import (
	"bytes"
	"encoding/json"
	"fmt"
	"reflect"
	"sort"
	"strings"
)

// A config key is its JSON path ("runtime.exec.command"). Unknown keys are
// an error naming the file, the line and the nearest valid key: a typo such
// as "commandd" must not silently fall back to the default.

// checkKeys walks data as JSON and reports the first object key that Config
// has no field for. Syntax errors are left to the decoder that follows.
func checkKeys(path string, data []byte) error {
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.UseNumber()
	err := walkKeys(dec, data, reflect.TypeOf(Config{}), "")
	if ke, ok := err.(*KeyError); ok {
		ke.Path = path
		return ke
	}
	return nil
}

// KeyError is an unknown key in config.json: where it is and the valid key
// it most likely meant.
type KeyError struct {
	Path      string
	Line      int
	Key, Near string
}

func (e *KeyError) Error() string {
	s := fmt.Sprintf("%s:%d: unknown key %q", e.Path, e.Line, e.Key)
	if e.Near != "" {
		s += fmt.Sprintf("; did you mean %q?", e.Near)
	}
	return s
}

func walkKeys(dec *json.Decoder, data []byte, t reflect.Type, prefix string) error {
	for t.Kind() == reflect.Pointer {
		t = t.Elem()
	}
	tok, err := dec.Token()
	if err != nil {
		return err
	}
	d, ok := tok.(json.Delim)
	if !ok {
		return nil // a scalar: its type is the decoder's to check
	}
	switch {
	case d == '[':
		elem := reflect.TypeOf((*any)(nil)).Elem()
		if t.Kind() == reflect.Slice || t.Kind() == reflect.Array {
			elem = t.Elem()
		}
		for dec.More() {
			if err := walkKeys(dec, data, elem, prefix); err != nil {
				return err
			}
		}
	case d == '{' && t.Kind() == reflect.Struct:
		fields := jsonFields(t)
		for dec.More() {
			kt, err := dec.Token()
			if err != nil {
				return err
			}
			key, _ := kt.(string)
			ft, ok := fields[key]
			if !ok {
				return &KeyError{Line: lineOf(data, dec.InputOffset()), Key: prefix + key, Near: nearest(key, fields, prefix)}
			}
			if err := walkKeys(dec, data, ft, prefix+key+"."); err != nil {
				return err
			}
		}
	default: // an object where any keys go (a map), or the wrong type entirely
		for dec.More() {
			if _, err := dec.Token(); err != nil {
				return err
			}
			if err := walkKeys(dec, data, reflect.TypeOf((*any)(nil)).Elem(), prefix); err != nil {
				return err
			}
		}
	}
	_, err = dec.Token() // the closing delimiter
	return err
}

// jsonFields maps the JSON names of t's fields (embedded structs' fields
// promoted) to their types.
func jsonFields(t reflect.Type) map[string]reflect.Type {
	out := map[string]reflect.Type{}
	for i := range t.NumField() {
		f := t.Field(i)
		name, _, _ := strings.Cut(f.Tag.Get("json"), ",")
		if name == "-" || !f.IsExported() {
			continue
		}
		if f.Anonymous && name == "" && f.Type.Kind() == reflect.Struct {
			for k, v := range jsonFields(f.Type) {
				out[k] = v
			}
			continue
		}
		if name == "" {
			name = f.Name
		}
		out[name] = f.Type
	}
	return out
}

// nearest is the valid key closest to key by edit distance, if it is close
// enough to be a likely typo.
func nearest(key string, fields map[string]reflect.Type, prefix string) string {
	names := make([]string, 0, len(fields))
	for n := range fields {
		names = append(names, n)
	}
	sort.Strings(names)
	best, bestD := "", len(key)/2+2
	for _, n := range names {
		if d := editDistance(key, n); d < bestD {
			best, bestD = n, d
		}
	}
	if best == "" {
		return ""
	}
	return prefix + best
}

func editDistance(a, b string) int {
	prev := make([]int, len(b)+1)
	for j := range prev {
		prev[j] = j
	}
	for i := 1; i <= len(a); i++ {
		cur := make([]int, len(b)+1)
		cur[0] = i
		for j := 1; j <= len(b); j++ {
			cost := 1
			if a[i-1] == b[j-1] {
				cost = 0
			}
			cur[j] = min(prev[j]+1, cur[j-1]+1, prev[j-1]+cost)
		}
		prev = cur
	}
	return prev[len(b)]
}

func lineOf(data []byte, off int64) int {
	return bytes.Count(data[:min(off, int64(len(data)))], []byte{'\n'}) + 1
}

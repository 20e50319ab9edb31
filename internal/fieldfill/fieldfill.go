// Package fieldfill fills every exported field of a value with a non-zero
// value, by reflection, for tests that must cover a record's fields without
// naming them: a field added to a record is filled too, so a hand-written
// codec that does not know it fails the round trip (docs/design.md,
// "Records cannot lose a field").
//
// Invariants:
//   - every exported field reachable from the value is non-zero afterwards:
//     strings, numbers and bools, times, pointers (allocated), slices and
//     maps (one element), nested and embedded structs;
//   - values are distinct per field (derived from the field's path), so two
//     fields swapped by a codec do not compare equal;
//   - an interface field (map[string]any's values too) holds a string;
//   - a kind it cannot fill (a func, a channel) fails the caller's test: a
//     record never holds one.
package fieldfill

import (
	"fmt"
	"reflect"
	"time"
)

// Fill fills *ptr. It returns an error naming the first field whose kind it
// cannot fill.
func Fill(ptr any) error {
	v := reflect.ValueOf(ptr)
	if v.Kind() != reflect.Pointer || v.IsNil() {
		return fmt.Errorf("fieldfill: want a non-nil pointer, got %T", ptr)
	}
	return fill(v.Elem(), reflect.TypeOf(ptr).Elem().Name(), 1)
}

var timeType = reflect.TypeFor[time.Time]()

// fill sets v, found at path, to a non-zero value; seed makes sibling values
// differ.
func fill(v reflect.Value, path string, seed int) error {
	if v.Type() == timeType {
		t := time.Date(2026, 1, 2, 3, 4, 5, 6000*seed, time.UTC)
		v.Set(reflect.ValueOf(t))
		return nil
	}
	switch v.Kind() {
	case reflect.String:
		v.SetString(fmt.Sprintf("%s-%d", path, seed))
	case reflect.Bool:
		v.SetBool(true)
	case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64:
		v.SetInt(int64(seed%100 + 1))
	case reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64, reflect.Uintptr:
		v.SetUint(uint64(seed%100 + 1))
	case reflect.Float32, reflect.Float64:
		v.SetFloat(float64(seed) + 0.5)
	case reflect.Pointer:
		p := reflect.New(v.Type().Elem())
		if err := fill(p.Elem(), path, seed); err != nil {
			return err
		}
		v.Set(p)
	case reflect.Slice:
		s := reflect.MakeSlice(v.Type(), 1, 1)
		if err := fill(s.Index(0), path+"[0]", seed); err != nil {
			return err
		}
		v.Set(s)
	case reflect.Array:
		for i := range v.Len() {
			if err := fill(v.Index(i), fmt.Sprintf("%s[%d]", path, i), seed+i); err != nil {
				return err
			}
		}
	case reflect.Map:
		m := reflect.MakeMap(v.Type())
		k, e := reflect.New(v.Type().Key()).Elem(), reflect.New(v.Type().Elem()).Elem()
		if err := fill(k, path+".key", seed); err != nil {
			return err
		}
		if err := fill(e, path+".value", seed+1); err != nil {
			return err
		}
		m.SetMapIndex(k, e)
		v.Set(m)
	case reflect.Interface:
		v.Set(reflect.ValueOf(fmt.Sprintf("%s-%d", path, seed)))
	case reflect.Struct:
		for i := range v.NumField() {
			f := v.Type().Field(i)
			if !f.IsExported() {
				continue
			}
			if err := fill(v.Field(i), path+"."+f.Name, seed*31+i+1); err != nil {
				return err
			}
		}
	default:
		return fmt.Errorf("fieldfill: %s: cannot fill a %s", path, v.Kind())
	}
	return nil
}

// Zero names the exported fields reachable from v that are zero (nil for
// none): a test's check that Fill reached everything, and that a decoder
// left nothing out.
func Zero(v any) []string {
	var out []string
	zero(reflect.ValueOf(v), reflect.TypeOf(v).Name(), &out)
	return out
}

func zero(v reflect.Value, path string, out *[]string) {
	if v.IsZero() {
		*out = append(*out, path)
		return
	}
	switch v.Kind() {
	case reflect.Pointer:
		zero(v.Elem(), path, out)
	case reflect.Slice, reflect.Array:
		for i := range v.Len() {
			zero(v.Index(i), fmt.Sprintf("%s[%d]", path, i), out)
		}
	case reflect.Struct:
		if v.Type() == timeType {
			return
		}
		for i := range v.NumField() {
			if f := v.Type().Field(i); f.IsExported() {
				zero(v.Field(i), path+"."+f.Name, out)
			}
		}
	}
}

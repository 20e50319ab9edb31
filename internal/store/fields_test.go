package store

import (
	"bytes"
	"encoding/json"
	"go/ast"
	"go/parser"
	"go/token"
	"io/fs"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"github.com/plasmodium/pm/internal/fieldfill"
)

// The records' fast codecs (Message.MarshalJSON and DecodeLine, Agent and
// Phase DecodeFast) against encoding/json, on a value whose every exported
// field is filled by reflection: a field added to a record and not to its
// codec fails here (issue 22: an int added to Message and Phase was dropped
// silently while every other test stayed green).

type (
	plainAgent Agent
	plainPhase Phase
)

func filled[T any](t *testing.T) T {
	t.Helper()
	var v T
	if err := fieldfill.Fill(&v); err != nil {
		t.Fatal(err)
	}
	if z := fieldfill.Zero(v); z != nil {
		t.Fatalf("fieldfill left %v zero", z)
	}
	return v
}

func TestMessageCodecKeepsEveryField(t *testing.T) {
	m := filled[Message](t)
	fast, err := json.Marshal(m)
	if err != nil {
		t.Fatal(err)
	}
	want, err := json.Marshal(plainMessage(m))
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(fast, want) {
		t.Errorf("MarshalJSON differs from encoding/json:\n got  %s\n want %s", fast, want)
	}
	var got Message
	if !got.DecodeLine(want) {
		t.Fatalf("DecodeLine declined %s", want)
	}
	if !reflect.DeepEqual(got, m) {
		t.Errorf("DecodeLine lost a field:\n got  %+v\n want %+v", got, m)
	}
}

func TestRecordDecodersKeepEveryField(t *testing.T) {
	t.Run("Agent", func(t *testing.T) {
		a := filled[Agent](t)
		raw, err := json.Marshal(plainAgent(a))
		if err != nil {
			t.Fatal(err)
		}
		checkFast(t, raw, a, (*Agent).DecodeFast)
	})
	t.Run("Phase", func(t *testing.T) {
		p := filled[Phase](t)
		raw, err := json.Marshal(plainPhase(p))
		if err != nil {
			t.Fatal(err)
		}
		checkFast(t, raw, p, (*Phase).DecodeFast)
	})
}

// checkFast decodes raw, a record whose every field is set, with its fast
// decoder. A decoder may decline a shape it does not handle (the caller
// then decodes with encoding/json: nothing is lost); one that accepts must
// give exactly the record, every field kept.
func checkFast[T any](t *testing.T, raw []byte, want T, decode func(*T, []byte) bool) {
	t.Helper()
	var got T
	if decode(&got, raw) {
		if !reflect.DeepEqual(got, want) {
			t.Errorf("a field was lost:\n got  %+v\n want %+v", got, want)
		}
		return
	}
	// Declined: each record with one field left out, so the fast path is
	// still tried with every other field set (a shape it declines, such as
	// a nested list, does not hide a scalar it would drop).
	accepted := 0
	v := reflect.ValueOf(want)
	for i := range v.NumField() {
		if !v.Type().Field(i).IsExported() {
			continue
		}
		one := reflect.New(v.Type()).Elem()
		one.Set(v)
		one.Field(i).SetZero()
		data, err := json.Marshal(one.Interface())
		if err != nil {
			t.Fatal(err)
		}
		var got T
		if !decode(&got, data) {
			continue
		}
		accepted++
		if !reflect.DeepEqual(got, one.Interface()) {
			t.Errorf("without %s, a field was lost:\n got  %+v\n want %+v", v.Type().Field(i).Name, got, one.Interface())
		}
	}
	if accepted == 0 {
		t.Errorf("the fast decoder declines %T with any one field left out: it is never used", want)
	}
}

// fastCodecs are the types with a hand-written codec (a DecodeFast or a
// MarshalsExactly method) and the test that covers every field of each.
var fastCodecs = map[string]string{
	"store.Message": "TestMessageCodecKeepsEveryField",
	"store.Agent":   "TestRecordDecodersKeepEveryField",
	"store.Phase":   "TestRecordDecodersKeepEveryField",
	"store.seen":    "a map[string]int: no field to lose",
	"bus.Event":     "bus.TestEventCodecKeepsEveryField",
}

// A new hand-written codec anywhere in the tree must be added to the
// reflective round trip above (and to fastCodecs), or this fails.
func TestEveryFastCodecIsCovered(t *testing.T) {
	root := filepath.Join("..")
	fset := token.NewFileSet()
	found := map[string]bool{}
	err := filepath.WalkDir(root, func(path string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() || !strings.HasSuffix(path, ".go") || strings.HasSuffix(path, "_test.go") {
			return err
		}
		f, err := parser.ParseFile(fset, path, nil, parser.SkipObjectResolution)
		if err != nil {
			return err
		}
		for _, decl := range f.Decls {
			fn, ok := decl.(*ast.FuncDecl)
			if !ok || fn.Recv == nil || (fn.Name.Name != "DecodeFast" && fn.Name.Name != "MarshalsExactly") {
				continue
			}
			typ := fn.Recv.List[0].Type
			if star, ok := typ.(*ast.StarExpr); ok {
				typ = star.X
			}
			if id, ok := typ.(*ast.Ident); ok {
				found[f.Name.Name+"."+id.Name] = true
			}
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	for name := range found {
		if _, ok := fastCodecs[name]; !ok {
			t.Errorf("%s has a hand-written codec with no reflective round trip: add it to fastCodecs and a KeepsEveryField test", name)
		}
	}
	for name := range fastCodecs {
		if !found[name] {
			t.Errorf("fastCodecs names %s, which has no hand-written codec any more", name)
		}
	}
}

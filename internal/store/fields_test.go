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
		var got Agent
		if !got.DecodeFast(raw) {
			t.Fatalf("DecodeFast declined %s", raw)
		}
		if !reflect.DeepEqual(got, a) {
			t.Errorf("DecodeFast lost a field:\n got  %+v\n want %+v", got, a)
		}
	})
	t.Run("Phase", func(t *testing.T) {
		p := filled[Phase](t)
		raw, err := json.Marshal(plainPhase(p))
		if err != nil {
			t.Fatal(err)
		}
		var got Phase
		if !got.DecodeFast(raw) {
			t.Fatalf("DecodeFast declined %s", raw)
		}
		if !reflect.DeepEqual(got, p) {
			t.Errorf("DecodeFast lost a field:\n got  %+v\n want %+v", got, p)
		}
	})
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

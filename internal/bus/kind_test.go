package bus

import (
	"go/ast"
	"go/parser"
	"go/token"
	"slices"
	"testing"
)

// Every Kind constant of kind.go is in Kinds, once: a kind added without
// its entry fails here instead of being refused by pm log --kind.
func TestKindsListsEveryConstant(t *testing.T) {
	f, err := parser.ParseFile(token.NewFileSet(), "kind.go", nil, parser.SkipObjectResolution)
	if err != nil {
		t.Fatal(err)
	}
	var declared []string
	for _, d := range f.Decls {
		g, ok := d.(*ast.GenDecl)
		if !ok || g.Tok != token.CONST {
			continue
		}
		for _, spec := range g.Specs {
			vs := spec.(*ast.ValueSpec)
			if id, ok := vs.Type.(*ast.Ident); ok && id.Name == "Kind" {
				for _, n := range vs.Names {
					declared = append(declared, n.Name)
				}
			}
		}
	}
	if len(declared) != len(Kinds) {
		t.Errorf("kind.go declares %d kinds, Kinds lists %d", len(declared), len(Kinds))
	}
	seen := map[Kind]bool{}
	for _, k := range Kinds {
		if seen[k] {
			t.Errorf("Kinds lists %s twice", k)
		}
		seen[k] = true
	}
	if !slices.Contains(Kinds, EvDesignState) || !slices.Contains(Kinds, EvInit) {
		t.Error("Kinds misses its first or last kind")
	}
}

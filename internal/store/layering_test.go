package store_test

import (
	"go/ast"
	"go/parser"
	"go/token"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
)

// The helpers that take locks and append lines; only the store (and the bus,
// watch and bench plumbing) may use them.
var storeOnly = map[string]bool{
	"github.com/plasmodium/pm/internal/lockedfile": true,
	"github.com/plasmodium/pm/internal/jsonl":      true,
}

// pending are domain packages whose critical sections have not moved into the
// store yet: none. A package added here is reported until it is clean, and
// then the test asks for its entry to go, so nothing slips back.
var pending = map[string]bool{}

// Domain packages reach .plasmodium/ only through store operations: they
// import neither lockedfile nor jsonl, and never join a path onto a store
// directory (s.Root, s.AgentDir(name), …). Test files may inspect the files
// directly, so only non-test files are checked.
func TestDomainUsesStoreOperations(t *testing.T) {
	domain := []string{
		"internal/phase", "internal/task", "internal/ops", "internal/agent", "internal/inbox",
		"internal/request", "internal/supervisor", "internal/llmagent", "internal/capability",
	}
	for _, pkg := range domain {
		t.Run(filepath.Base(pkg), func(t *testing.T) {
			problems := storeBypasses(t, filepath.Join("..", "..", pkg))
			switch {
			case pending[pkg] && len(problems) == 0:
				t.Errorf("%s no longer bypasses the store: remove it from pending", pkg)
			case pending[pkg]:
				t.Logf("pending (lead): %d bypasses, e.g. %s", len(problems), problems[0])
			default:
				for _, p := range problems {
					t.Error(p)
				}
			}
		})
	}
}

// storeBypasses lists, for the non-test files in dir, each import of a
// store-only helper and each filepath.Join onto a store directory.
func storeBypasses(t *testing.T, dir string) []string {
	t.Helper()
	ents, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	var out []string
	fset := token.NewFileSet()
	for _, e := range ents {
		name := e.Name()
		if e.IsDir() || !strings.HasSuffix(name, ".go") || strings.HasSuffix(name, "_test.go") {
			continue
		}
		f, err := parser.ParseFile(fset, filepath.Join(dir, name), nil, 0)
		if err != nil {
			t.Fatal(err)
		}
		for _, imp := range f.Imports {
			if p, _ := strconv.Unquote(imp.Path.Value); storeOnly[p] {
				out = append(out, fset.Position(imp.Pos()).String()+": imports "+p)
			}
		}
		ast.Inspect(f, func(n ast.Node) bool {
			if call, ok := n.(*ast.CallExpr); ok && isFilepathJoin(call) && len(call.Args) > 0 && isStoreDir(call.Args[0]) {
				out = append(out, fset.Position(call.Pos()).String()+": joins a path onto a store directory")
			}
			return true
		})
	}
	return out
}

func isFilepathJoin(call *ast.CallExpr) bool {
	sel, ok := call.Fun.(*ast.SelectorExpr)
	if !ok || sel.Sel.Name != "Join" {
		return false
	}
	pkg, ok := sel.X.(*ast.Ident)
	return ok && pkg.Name == "filepath"
}

// isStoreDir recognises x.Root and a method call x.SomethingDir(…) (the
// store's directory accessors), but not filepath.Dir(…) nor ProjectDir (the
// user's project, outside .plasmodium).
func isStoreDir(e ast.Expr) bool {
	if sel, ok := e.(*ast.SelectorExpr); ok {
		return sel.Sel.Name == "Root"
	}
	call, ok := e.(*ast.CallExpr)
	if !ok {
		return false
	}
	sel, ok := call.Fun.(*ast.SelectorExpr)
	if !ok || !strings.HasSuffix(sel.Sel.Name, "Dir") || sel.Sel.Name == "ProjectDir" {
		return false
	}
	pkg, isIdent := sel.X.(*ast.Ident)
	return !isIdent || pkg.Name != "filepath"
}

// The checker itself: each snippet is one file of a domain package.
func TestStoreBypassesFinds(t *testing.T) {
	cases := []struct {
		name, src string
		want      int
	}{
		{"clean", `import "path/filepath"
func f(root string) string { return filepath.Join(root, "x") }`, 0},
		{"lockedfile import", `import _ "github.com/plasmodium/pm/internal/lockedfile"`, 1},
		{"jsonl import", `import _ "github.com/plasmodium/pm/internal/jsonl"`, 1},
		{"join on Root", `import "path/filepath"
func f(s *S) string { return filepath.Join(s.Root, "prompts") }`, 1},
		{"join on a store dir", `import "path/filepath"
func f(s *S) string { return filepath.Join(s.AgentDir("a"), "inbox.cursor") }`, 1},
		{"join on the project dir", `import "path/filepath"
func f(s *S) string { return filepath.Join(s.ProjectDir(), "bin/x") }`, 0},
		{"join on filepath.Dir", `import "path/filepath"
func f(p string) string { return filepath.Join(filepath.Dir(p), "x") }`, 0},
		{"join on a field root", `import "path/filepath"
func f(b *B) string { return filepath.Join(b.root, "x") }`, 0},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			dir := t.TempDir()
			src := "package p\n" + c.src + "\n"
			if err := os.WriteFile(filepath.Join(dir, "p.go"), []byte(src), 0o644); err != nil {
				t.Fatal(err)
			}
			// A test file may do anything.
			if err := os.WriteFile(filepath.Join(dir, "p_test.go"), []byte(`package p
import _ "github.com/plasmodium/pm/internal/jsonl"
`), 0o644); err != nil {
				t.Fatal(err)
			}
			if got := storeBypasses(t, dir); len(got) != c.want {
				t.Fatalf("found %d bypasses, want %d: %v", len(got), c.want, got)
			}
		})
	}
}

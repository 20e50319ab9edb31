package ops

import (
	"go/parser"
	"go/token"
	"io/fs"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
)

const module = "github.com/plasmodium/pm/"

// surface reports whether a package (path relative to the module) belongs to
// the command layer: the cobra commands, the root command, their helper, and
// the short commands' executable (internal/lite).
func surface(pkg string) bool {
	return pkg == "internal/cli" || pkg == "internal/lite" || pkg == "internal/cmdutil" || strings.HasPrefix(pkg, "internal/cmd/") || strings.HasPrefix(pkg, "cmd/")
}

// No domain package imports the command layer, and ops imports no surface
// (capability generates tools from ops, not the other way round). Checking
// every package's direct imports is enough: a transitive path would need a
// domain package importing the layer directly.
func TestLayering(t *testing.T) {
	root := filepath.Join("..", "..")
	imports := map[string][]string{} // package → module-internal imports (non-test files)
	err := filepath.WalkDir(filepath.Join(root, "internal"), func(path string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() || !strings.HasSuffix(path, ".go") || strings.HasSuffix(path, "_test.go") {
			return err
		}
		f, err := parser.ParseFile(token.NewFileSet(), path, nil, parser.ImportsOnly)
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(root, filepath.Dir(path))
		pkg := filepath.ToSlash(rel)
		for _, imp := range f.Imports {
			p, _ := strconv.Unquote(imp.Path.Value)
			if strings.HasPrefix(p, module) {
				imports[pkg] = append(imports[pkg], strings.TrimPrefix(p, module))
			}
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if len(imports) < 10 {
		t.Fatalf("found only %d packages under internal/: wrong root?", len(imports))
	}
	for pkg, deps := range imports {
		for _, dep := range deps {
			if !surface(pkg) && surface(dep) {
				t.Errorf("domain package %s imports the command layer %s", pkg, dep)
			}
			if pkg == "internal/ops" && dep == "internal/capability" {
				t.Errorf("ops imports capability; tools are generated from ops, not the reverse")
			}
		}
	}
}

package state_test

import (
	"go/ast"
	"go/parser"
	"go/token"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
)

// implementations are the packages that may touch the state directory's
// files: the store and the state implementations, the file helpers they
// use, config.json's own package, and the bus (events.jsonl, a backend of
// its own with file and memory implementations).
var implementations = []string{
	"internal/store", "internal/state", "internal/config", "internal/bus",
	"internal/jsonl", "internal/lockedfile", "internal/watch",
	// The hub server's own files (its streams and its accounts' keys, in
	// pm hub's --store), no project's state directory.
	"internal/hub", "internal/hubauth",
}

// fileOnly are the imports that mean touching files directly: the locked
// file and line helpers and directory watching.
var fileOnly = []string{
	"github.com/plasmodium/pm/internal/lockedfile",
	"github.com/plasmodium/pm/internal/jsonl",
	"github.com/plasmodium/pm/internal/watch",
	"github.com/fsnotify/fsnotify",
}

// pending are the packages not yet moved onto the state interfaces, with
// the number of places each still reaches the files. A package here whose
// count falls must have its number lowered (or go, at zero), so nothing
// slips back; a package not here must reach no file at all.
var pending = map[string]int{
	"internal/agent":                2,  // prompt and nudge files handed to the CLI
	"internal/bench":                16, // builds synthetic .plasmodium/ trees to measure the store; reads the cost ledger it measures
	"internal/bench/cmd/floorwatch": 1,
	"internal/cmd/demo":             1, // prints the state directory in its summary
	"internal/gitx":                 1, // locks a repository and a remote's mirror (lockedfile.LockWithin), git's files, no record
	"internal/cmd/initcmd":          1, // pm init --creds copies the credential into .plasmodium/hub.creds
	"internal/cmd/logs":             7, // pm logs -f follows logs/ and events.jsonl
	"internal/ops":                  1, // AgentLog reads the end of an agent's log (agentlog.go), as pm logs does
	"internal/supervisor":           2, // watches agents/ and the lock
	"internal/task":                 1, // a git remote's mirror, .plasmodium/git/NAME.git (this machine's own)
}

// agentLogFiles are the files of state.AgentLogs on a state directory:
// named outside the implementations, they are read or written around the
// state (a hub project's transcripts, replies and costs are not there).
var agentLogFiles = []string{"transcript.jsonl", "stream.jsonl", "costs.jsonl"}

// Nothing outside the implementations joins a path onto the state
// directory, names an agent log's file, asks the store for one of its paths (to open, stat or hand
// on), imports the file helpers or watches a directory. Test files may, so
// only non-test files are checked.
func TestOnlyImplementationsTouchStateFiles(t *testing.T) {
	root := filepath.Join("..", "..")
	accessors := storePathAccessors(t, filepath.Join(root, "internal", "store"))
	if len(accessors) < 10 {
		t.Fatalf("found only %d path accessors in the store: %v", len(accessors), accessors)
	}
	found := map[string][]string{}
	for _, top := range []string{"internal", "cmd"} {
		err := filepath.WalkDir(filepath.Join(root, top), func(path string, d fs.DirEntry, err error) error {
			if err != nil || !d.IsDir() {
				return err
			}
			rel, _ := filepath.Rel(root, path)
			pkg := filepath.ToSlash(rel)
			if implementation(pkg) {
				return nil
			}
			if p := fileBypasses(t, path, accessors); len(p) > 0 {
				found[pkg] = p
			}
			return nil
		})
		if err != nil {
			t.Fatal(err)
		}
	}
	for pkg, problems := range found {
		want, ok := pending[pkg]
		switch {
		case !ok:
			for _, p := range problems {
				t.Errorf("%s", p)
			}
		case len(problems) > want:
			t.Errorf("%s reaches the state files in %d places, %d allowed: %s", pkg, len(problems), want, strings.Join(problems, "\n\t"))
		case len(problems) < want:
			t.Errorf("%s now reaches the state files in %d places: lower its pending count from %d", pkg, len(problems), want)
		}
	}
	for pkg := range pending {
		if _, ok := found[pkg]; !ok {
			t.Errorf("%s no longer reaches the state files: remove it from pending", pkg)
		}
	}
}

func implementation(pkg string) bool {
	for _, p := range implementations {
		if pkg == p || strings.HasPrefix(pkg, p+"/") {
			return true
		}
	}
	return false
}

// notState are store accessors that name no state: the user's project
// and where a task's agents work in it (its worktree, WorktreePath), and config.json,
// which is internal/config's (configuration, not records).
var notState = map[string]bool{"ProjectDir": true, "WorkDir": true, "WorktreePath": true, "ConfigPath": true}

// storePathAccessors are the names of the store's methods that return a
// path (…Path, …Dir), read from its source so a new one is covered.
func storePathAccessors(t *testing.T, dir string) map[string]bool {
	t.Helper()
	out := map[string]bool{}
	for _, f := range parseDir(t, dir) {
		for _, decl := range f.Decls {
			fn, ok := decl.(*ast.FuncDecl)
			if !ok || fn.Recv == nil || !fn.Name.IsExported() || notState[fn.Name.Name] {
				continue
			}
			name := fn.Name.Name
			if strings.HasSuffix(name, "Path") || strings.HasSuffix(name, "Dir") {
				out[name] = true
			}
		}
	}
	return out
}

// parseDir parses the non-test Go files of dir.
func parseDir(t *testing.T, dir string) []*ast.File {
	t.Helper()
	ents, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	var out []*ast.File
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
		out = append(out, f)
	}
	return out
}

// fileBypasses lists, for the non-test files of dir, each import of a
// file-only helper, each call of a store path accessor and each
// filepath.Join onto a store's Root.
func fileBypasses(t *testing.T, dir string, accessors map[string]bool) []string {
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
		where := func(n ast.Node) string {
			p := fset.Position(n.Pos())
			return filepath.ToSlash(filepath.Join(filepath.Base(filepath.Dir(p.Filename)), filepath.Base(p.Filename))) + ":" + strconv.Itoa(p.Line)
		}
		for _, imp := range f.Imports {
			if p, _ := strconv.Unquote(imp.Path.Value); slices.Contains(fileOnly, p) {
				out = append(out, where(imp)+": imports "+p)
			}
		}
		var stack []ast.Node
		ast.Inspect(f, func(n ast.Node) bool {
			if n == nil {
				stack = stack[:len(stack)-1]
				return true
			}
			parent := ast.Node(nil)
			if len(stack) > 0 {
				parent = stack[len(stack)-1]
			}
			stack = append(stack, n)
			if lit, ok := n.(*ast.BasicLit); ok && lit.Kind == token.STRING {
				for _, name := range agentLogFiles {
					if strings.Contains(lit.Value, name) {
						out = append(out, where(lit)+": names the agent log file "+name)
					}
				}
			}
			call, ok := n.(*ast.CallExpr)
			if !ok {
				return true
			}
			sel, ok := call.Fun.(*ast.SelectorExpr)
			if !ok {
				return true
			}
			if pkg, isIdent := sel.X.(*ast.Ident); isIdent && pkg.Name == "filepath" {
				if sel.Sel.Name == "Join" && len(call.Args) > 0 && isRoot(call.Args[0]) {
					out = append(out, where(call)+": joins a path onto the state directory")
				}
				return true
			}
			if accessors[sel.Sel.Name] && !inMessage(parent) {
				out = append(out, where(call)+": takes the state path "+sel.Sel.Name)
			}
			return true
		})
	}
	return out
}

// inMessage reports whether a path is only named to the user: concatenated
// into a string, or an argument of a formatting call (Warnf, Failf,
// Sprintf, …).
func inMessage(parent ast.Node) bool {
	switch p := parent.(type) {
	case *ast.BinaryExpr:
		return p.Op == token.ADD
	case *ast.CallExpr:
		var name string
		switch fn := p.Fun.(type) {
		case *ast.SelectorExpr:
			name = fn.Sel.Name
		case *ast.Ident:
			name = fn.Name
		}
		return strings.HasSuffix(name, "f") && len(name) > 1
	}
	return false
}

// isRoot recognises x.Root (a store's directory).
func isRoot(e ast.Expr) bool {
	sel, ok := e.(*ast.SelectorExpr)
	return ok && sel.Sel.Name == "Root"
}

// The checker itself, on one file of a package.
func TestFileBypassesFinds(t *testing.T) {
	accessors := map[string]bool{"AgentDir": true, "InboxPath": true}
	cases := []struct {
		name, src string
		want      int
	}{
		{"clean", `import "path/filepath"
func f(root string) string { return filepath.Join(root, "x") }`, 0},
		{"lockedfile import", `import _ "github.com/plasmodium/pm/internal/lockedfile"`, 1},
		{"watch import", `import _ "github.com/plasmodium/pm/internal/watch"`, 1},
		{"fsnotify import", `import _ "github.com/fsnotify/fsnotify"`, 1},
		{"join on Root", `import "path/filepath"
func f(s *S) string { return filepath.Join(s.Root, "prompts") }`, 1},
		{"a path accessor", `import "os"
func f(s *S) { os.ReadFile(s.InboxPath("a")) }`, 1},
		{"a dir accessor joined", `import "path/filepath"
func f(s *S) string { return filepath.Join(s.AgentDir("a"), "x") }`, 1},
		{"filepath.Dir is no accessor", `import "path/filepath"
func f(p string) string { return filepath.Join(filepath.Dir(p), "x") }`, 0},
		{"another method", `func f(s *S) { s.Agent("a") }`, 0},
		{"named in a message", `func f(s *S) string { return "fix " + s.InboxPath("a") }`, 0},
		{"named in a warning", `func f(s *S) { s.Warnf("remove %s", s.AgentDir("a")) }`, 0},
		{"an agent log's file", `import "path/filepath"
func f(home string) string { return filepath.Join(home, "agents", "a", "transcript.jsonl") }`, 1},
		{"the ledger's file", `func f() string { return ".plasmodium/costs.jsonl" }`, 1},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			dir := t.TempDir()
			if err := os.WriteFile(filepath.Join(dir, "p.go"), []byte("package p\n"+c.src+"\n"), 0o644); err != nil {
				t.Fatal(err)
			}
			// A test file may do anything.
			if err := os.WriteFile(filepath.Join(dir, "p_test.go"), []byte("package p\nimport _ \"github.com/plasmodium/pm/internal/jsonl\"\n"), 0o644); err != nil {
				t.Fatal(err)
			}
			if got := fileBypasses(t, dir, accessors); len(got) != c.want {
				t.Fatalf("found %d, want %d: %v", len(got), c.want, got)
			}
		})
	}
}

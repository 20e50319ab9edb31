package state_test

import (
	"go/ast"
	"go/parser"
	"go/token"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"sort"
	"strconv"
	"strings"
	"testing"
)

// recordMethods are the store's methods that read or write records, what
// state.State is for: tasks, phases and their messages, agents, mailboxes,
// requests, designs, prompts, seen marks, watches, and the actor (an agent
// record). A package outside the implementations calling one keeps its
// records on the files whatever stateopen.Open chose.
var recordMethods = []string{
	// tasks
	"Task", "Tasks", "WriteTask", "UpdateTask", "TaskIDs", "LiveTasks", "LiveTasksHeld", "TaskCounts",
	"WithTasksLock", "CreateTask", "ChildrenHeld", "Children", "Unblock", "ReadContext",
	"TaskPathExists", "TaskDirExists",
	// phases and their rooms
	"Phase", "Phases", "ActivePhase", "FindPhase", "Messages", "MessageCount", "LastMessages",
	"WithPhase", "UpdatePhase", "CreatePhase", "CreatePhaseThen", "WithPhasesLock",
	"FollowMessages", "ReadMessageViews",
	"PhasesProgress", "AppendPhaseProgress",
	// agents
	"Agent", "WriteAgent", "CreateAgent", "UpdateAgent", "Agents", "AgentsOf", "AgentsChecked",
	"AgentNames", "RemoveAgent", "AgentDirExists", "EnsureAgentDir",
	// mailboxes
	"AppendInbox", "InboxFrom", "InboxTail", "InboxCursor", "SetInboxCursor",
	// requests
	"CreateRequest", "Request", "UpdateRequest", "Requests",
	// designs
	"CreateDesign", "WriteDesign", "ReadDesign", "AppendDesignLog", "DesignIDs", "WriteDesignCopy",
	"TryLockDesign",
	// prompts
	"CreatePrompt", "RemovePrompt",
	// seen marks
	"Seen", "MarkSeen",
	// watches
	"WatchTask",
}

// backends are the state implementations: only stateopen (inside
// internal/state) constructs one, so a package importing one chose its
// backend itself.
var backends = []string{
	"github.com/plasmodium/pm/internal/state/fsstate",
	"github.com/plasmodium/pm/internal/state/memstate",
	"github.com/plasmodium/pm/internal/state/natsstate",
}

// pendingRecords are the packages not yet moved onto state.State, with
// the number of places each still uses a record method of the store
// (recordMethods). As with pending: a count that falls must be lowered
// (the package goes at zero), a package not here must use none.
var pendingRecords = map[string]int{
	"internal/bench": 6, // measures the store itself
}

// Outside the implementations no package reads or writes a record through
// the store: its records come from the session's state.State (opened by
// internal/state/stateopen), so choosing a backend there moves them all.
func TestRecordsOnlyThroughTheState(t *testing.T) {
	root := filepath.Join("..", "..")
	methods := storeMethods(t, filepath.Join(root, "internal", "store"))
	for _, m := range recordMethods {
		if !methods[m] {
			t.Errorf("recordMethods names %s, which *store.Store no longer has: update the list", m)
		}
	}
	fields := storeFields(t, root)
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
			if p := recordCalls(t, path, fields); len(p) > 0 {
				found[pkg] = p
			}
			return nil
		})
		if err != nil {
			t.Fatal(err)
		}
	}
	var total int
	for pkg, uses := range found {
		total += len(uses)
		want, ok := pendingRecords[pkg]
		switch {
		case !ok:
			t.Errorf("%s uses the store's records in %d places; take them from the session's state.State:\n\t%s", pkg, len(uses), strings.Join(uses, "\n\t"))
		case len(uses) > want:
			t.Errorf("%s uses the store's records in %d places, %d allowed:\n\t%s", pkg, len(uses), want, strings.Join(uses, "\n\t"))
		case len(uses) < want:
			t.Errorf("%s now uses the store's records in %d places: lower its pendingRecords count from %d", pkg, len(uses), want)
		}
	}
	for pkg := range pendingRecords {
		if _, ok := found[pkg]; !ok {
			t.Errorf("%s no longer uses the store's records: remove it from pendingRecords", pkg)
		}
	}
	t.Logf("%d uses of the store's records in %d packages still to move", total, len(found))
}

// storeMethods are the exported methods of *store.Store.
func storeMethods(t *testing.T, dir string) map[string]bool {
	t.Helper()
	out := map[string]bool{}
	for _, f := range parseDir(t, dir) {
		for _, decl := range f.Decls {
			if fn, ok := decl.(*ast.FuncDecl); ok && fn.Recv != nil && fn.Name.IsExported() && isStorePtr(fn.Recv.List[0].Type, "") {
				out[fn.Name.Name] = true
			}
		}
	}
	return out
}

// storeFields are the names of struct fields of type *store.Store outside
// the store (ops.Session.Store, agent.Launcher.Store, …): x.Store.Task(…)
// is a record read whatever x is.
func storeFields(t *testing.T, root string) map[string]bool {
	t.Helper()
	out := map[string]bool{}
	for _, top := range []string{"internal", "cmd"} {
		err := filepath.WalkDir(filepath.Join(root, top), func(path string, d fs.DirEntry, err error) error {
			if err != nil || !d.IsDir() {
				return err
			}
			rel, _ := filepath.Rel(root, path)
			if implementation(filepath.ToSlash(rel)) {
				return nil
			}
			for _, f := range parseDir(t, path) {
				ast.Inspect(f, func(n ast.Node) bool {
					if st, ok := n.(*ast.StructType); ok {
						for _, fld := range st.Fields.List {
							if isStorePtr(fld.Type, "store") {
								for _, name := range fld.Names {
									out[name.Name] = true
								}
							}
						}
					}
					return true
				})
			}
			return nil
		})
		if err != nil {
			t.Fatal(err)
		}
	}
	return out
}

// isStorePtr recognises *store.Store (or *Store inside the store, pkg "").
func isStorePtr(e ast.Expr, pkg string) bool {
	star, ok := e.(*ast.StarExpr)
	if !ok {
		return false
	}
	if pkg == "" {
		id, ok := star.X.(*ast.Ident)
		return ok && id.Name == "Store"
	}
	sel, ok := star.X.(*ast.SelectorExpr)
	if !ok {
		return false
	}
	id, ok := sel.X.(*ast.Ident)
	return ok && id.Name == pkg && sel.Sel.Name == "Store"
}

// storeOpeners are the calls whose first result is a *store.Store
// (store.Open and its variants, a factory's Store, lite's Open).
var storeOpeners = map[string]bool{"Open": true, "OpenChecked": true, "OpenForConfig": true, "OpenStore": true, "Store": true, "StoreForConfig": true}

// recordCalls lists, for the non-test files of dir, each import of a
// backend and each use of a record method on a *store.Store: on a name declared as one in the same function
// (a parameter, a variable, the first result of an opener) or on a field
// of that type (fields). Without type checking, so it is conservative in
// one way: a name a function declares as a store is a store throughout it.
func recordCalls(t *testing.T, dir string, fields map[string]bool) []string {
	t.Helper()
	records := map[string]bool{}
	for _, m := range recordMethods {
		records[m] = true
	}
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
		pkgName := "store"
		for _, imp := range f.Imports {
			if imp.Path.Value == `"github.com/plasmodium/pm/internal/store"` && imp.Name != nil {
				pkgName = imp.Name.Name
			}
			if path, _ := strconv.Unquote(imp.Path.Value); slices.Contains(backends, path) {
				p := fset.Position(imp.Pos())
				out = append(out, filepath.Base(p.Filename)+":"+strconv.Itoa(p.Line)+": imports "+path)
			}
		}
		for _, decl := range f.Decls {
			fn, ok := decl.(*ast.FuncDecl)
			if !ok || fn.Body == nil {
				continue
			}
			stores := storeNames(fn, pkgName, fields)
			ast.Inspect(fn.Body, func(n ast.Node) bool {
				sel, ok := n.(*ast.SelectorExpr)
				if !ok || !records[sel.Sel.Name] {
					return true
				}
				var onStore bool
				switch x := sel.X.(type) {
				case *ast.Ident:
					onStore = stores[x.Name]
				case *ast.SelectorExpr:
					onStore = fields[x.Sel.Name]
				}
				if onStore {
					p := fset.Position(sel.Pos())
					out = append(out, filepath.Base(p.Filename)+":"+strconv.Itoa(p.Line)+": store."+sel.Sel.Name)
				}
				return true
			})
		}
	}
	sort.Strings(out)
	return out
}

// storeNames are the names fn (and the function literals in it) declare as
// a *store.Store.
func storeNames(fn *ast.FuncDecl, pkg string, fields map[string]bool) map[string]bool {
	out := map[string]bool{}
	fieldList := func(fl *ast.FieldList) {
		if fl == nil {
			return
		}
		for _, fld := range fl.List {
			if isStorePtr(fld.Type, pkg) {
				for _, n := range fld.Names {
					out[n.Name] = true
				}
			}
		}
	}
	fieldList(fn.Recv)
	fieldList(fn.Type.Params)
	fieldList(fn.Type.Results)
	ast.Inspect(fn.Body, func(n ast.Node) bool {
		switch n := n.(type) {
		case *ast.FuncLit:
			fieldList(n.Type.Params)
			fieldList(n.Type.Results)
		case *ast.ValueSpec:
			if n.Type != nil && isStorePtr(n.Type, pkg) {
				for _, id := range n.Names {
					out[id.Name] = true
				}
			}
		case *ast.AssignStmt:
			if len(n.Lhs) == 0 || len(n.Rhs) == 0 {
				return true
			}
			id, ok := n.Lhs[0].(*ast.Ident)
			if !ok {
				return true
			}
			switch r := n.Rhs[0].(type) {
			case *ast.CallExpr:
				if sel, ok := r.Fun.(*ast.SelectorExpr); ok && storeOpeners[sel.Sel.Name] {
					out[id.Name] = true
				}
			case *ast.SelectorExpr:
				if fields[r.Sel.Name] {
					out[id.Name] = true
				}
			}
		}
		return true
	})
	return out
}

// The checker itself, on one file of a package.
func TestRecordCallsFinds(t *testing.T) {
	fields := map[string]bool{"Store": true}
	cases := []struct {
		name, src string
		want      int
	}{
		{"a parameter", `import "github.com/plasmodium/pm/internal/store"
func f(s *store.Store) { s.Task("t-1") }`, 1},
		{"a field", `func f(sess *Session) { sess.Store.Agents() }`, 1},
		{"a method value", `import "github.com/plasmodium/pm/internal/store"
func f(s *store.Store) any { return s.Agent }`, 1},
		{"an opened store", `import "github.com/plasmodium/pm/internal/store"
func f() { s, _ := store.Open("x"); s.Requests() }`, 1},
		{"a store taken from a field", `func f(l *Launcher) { s := l.Store; s.UpdateAgent("a", nil) }`, 1},
		{"inside a closure", `import "github.com/plasmodium/pm/internal/store"
func f(s *store.Store) func() { return func() { s.Phases("t") } }`, 1},
		{"a closure's parameter", `import "github.com/plasmodium/pm/internal/store"
func f() any { return func(s *store.Store) { s.Seen("a", "p") } }`, 1},
		{"the state", `import "github.com/plasmodium/pm/internal/state"
func f(st state.State) { st.Task("t-1") }`, 0},
		{"a state field", `func f(sess *Session) { sess.State.Agents() }`, 0},
		{"not a record method", `import "github.com/plasmodium/pm/internal/store"
func f(s *store.Store) { s.Config(); s.Notify(nil) }`, 0},
		{"a backend", `import "github.com/plasmodium/pm/internal/state/fsstate"
func f(s *S) any { return fsstate.New(s) }`, 1},
		{"another name", `import "github.com/plasmodium/pm/internal/store"
func f(s *store.Store, t *T) { t.Task() }`, 0},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			dir := t.TempDir()
			if err := os.WriteFile(filepath.Join(dir, "p.go"), []byte("package p\n"+c.src+"\n"), 0o644); err != nil {
				t.Fatal(err)
			}
			// A test file may do anything.
			if err := os.WriteFile(filepath.Join(dir, "p_test.go"), []byte("package p\nimport \"github.com/plasmodium/pm/internal/store\"\nfunc g(s *store.Store) { s.Task(\"x\") }\n"), 0o644); err != nil {
				t.Fatal(err)
			}
			if got := recordCalls(t, dir, fields); len(got) != c.want {
				t.Fatalf("found %d, want %d: %v", len(got), c.want, got)
			}
		})
	}
}

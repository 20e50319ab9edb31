package tooldoc

import (
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/plasmodium/pm/internal/prompt"
)

func TestEveryBuiltinHasADoc(t *testing.T) {
	r, err := Builtins()
	if err != nil {
		t.Fatal(err)
	}
	for _, name := range prompt.BuiltinNames("") {
		d, ok := r.Lookup(name)
		if !ok {
			t.Errorf("built-in capability %q has no doc in prompts/tools/", name)
			continue
		}
		if d.Source != "builtin:"+name+".md" || d.Summary == "" {
			t.Errorf("%s: source %q summary %q", name, d.Source, d.Summary)
		}
		if !strings.HasPrefix(d.FirstLines(PreviewLines), "# Tool: "+name+"\n\n## Summary\n"+d.Summary) {
			t.Errorf("%s: preview does not start with title and summary:\n%s", name, d.FirstLines(PreviewLines))
		}
	}
	if got, want := len(r.Names()), len(prompt.BuiltinNames("")); got != want {
		t.Errorf("%d built-in docs for %d built-in capabilities: %v", got, want, r.Names())
	}
}

func TestFirstLines(t *testing.T) {
	d := &Doc{Text: "a\nb\nc\n"}
	for n, want := range map[int]string{0: "", 1: "a", 2: "a\nb", 3: "a\nb\nc", 10: "a\nb\nc"} {
		if got := d.FirstLines(n); got != want {
			t.Errorf("FirstLines(%d) = %q, want %q", n, got, want)
		}
	}
}

const good = "# Tool: x\n\n## Summary\nDoes x.\n\n## Parameters\n| name | type | required | description |\n| --- | --- | --- | --- |\n| a | string | yes | the a |\n| b | integer | no | the b |\n\n## Notes\n- n\n"

func TestParse(t *testing.T) {
	tests := []struct {
		name, file, data string
		line             int
		errSub           string
	}{
		{"good", "x.md", good, 0, ""},
		{"no params", "x.md", "# Tool: x\n\n## Summary\nS\n\n## Parameters\n(none)\n", 0, ""},
		{"no title", "x.md", "Tool x\n## Summary\nS\n## Parameters\n(none)\n", 1, "# Tool: NAME"},
		{"name mismatch", "dir/y.md", good, 1, `does not match the file name "y.md"`},
		{"no summary", "x.md", "# Tool: x\n## Parameters\n(none)\n", 4, `no "summary" section`},
		{"no parameters", "x.md", "# Tool: x\n## Summary\nS\n", 4, `no "parameters" section`},
		{"bad row", "x.md", strings.Replace(good, "| yes |", "| maybe |", 1), 6, "bad row"},
		{"not a table", "x.md", "# Tool: x\n## Summary\nS\n## Parameters\nsome words\n", 4, "want \"(none)\" or a table"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			d, err := Parse(tt.file, []byte(tt.data))
			if tt.errSub == "" {
				if err != nil || d.Name != "x" || d.Summary == "" {
					t.Fatalf("Parse = %+v, %v", d, err)
				}
				return
			}
			var e *Error
			if !errors.As(err, &e) || e.Line != tt.line || e.File != tt.file || !strings.Contains(err.Error(), tt.errSub) {
				t.Fatalf("Parse err = %v, want %s:%d ... %q", err, tt.file, tt.line, tt.errSub)
			}
		})
	}
}

func TestCheckSchema(t *testing.T) {
	d, err := Parse("x.md", []byte(good))
	if err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		name, schema, errSub string
	}{
		{"agrees", `{"properties":{"a":{"type":"string"},"b":{"type":["null","integer"]}},"required":["a"]}`, ""},
		{"undocumented property", `{"properties":{"a":{"type":"string"},"b":{"type":"integer"},"c":{"type":"boolean"}},"required":["a"]}`, `does not document "c"`},
		{"documented but absent", `{"properties":{"a":{"type":"string"}},"required":["a"]}`, `documents "b", which the schema does not have`},
		{"type differs", `{"properties":{"a":{"type":"string"},"b":{"type":"string"}},"required":["a"]}`, `"b" is integer in the doc, string in the schema`},
		{"required differs", `{"properties":{"a":{"type":"string"},"b":{"type":"integer"}},"required":["a","b"]}`, `"b" required=false in the doc, true`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			err := CheckSchema(d, json.RawMessage(tt.schema))
			if (tt.errSub == "") != (err == nil) || (err != nil && !strings.Contains(err.Error(), tt.errSub)) {
				t.Fatalf("CheckSchema = %v, want %q", err, tt.errSub)
			}
		})
	}
}

func write(t *testing.T, dir, name, text string) {
	t.Helper()
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, name), []byte(text), 0o644); err != nil {
		t.Fatal(err)
	}
}

// Overrides go through the prompt objects' layered lookup: built-in, then
// each directory in order; a prompt object's generated doc is overridden too.
func TestLoadOverridesAndObjects(t *testing.T) {
	state, local := t.TempDir(), t.TempDir()
	doc := func(name, summary string) string {
		return "# Tool: " + name + "\n\n## Summary\n" + summary + "\n\n## Parameters\n(none)\n"
	}
	write(t, state, "read_file.md", doc("read_file", "state override"))
	write(t, local, "read_file.md", doc("read_file", "local override"))
	write(t, state, "think.md", doc("think", "state override"))
	write(t, local, "helper.md", doc("helper", "object override"))
	set := prompt.Set{
		"greeter": {Name: "greeter", Description: "Greets\n people.", Capabilities: []string{"say"}, Source: "builtin:greeter.md"},
		"helper":  {Name: "helper", Description: "Helps.", Source: "prompts/helper.md"},
	}
	r, err := load(set, prompt.Dirs(state, local))
	if err != nil {
		t.Fatal(err)
	}
	for name, want := range map[string]string{"read_file": "local override", "think": "state override", "helper": "object override",
		"write_file": "Write a text file in the workspace, creating parent directories; replaces it unless append=true.", "greeter": "Greets people."} {
		d, ok := r.Lookup(name)
		if !ok || d.Summary != want {
			t.Errorf("%s: summary %q, want %q", name, d.Summary, want)
		}
	}
	g, _ := r.Lookup("greeter")
	if g.Source != "prompt:builtin:greeter.md" || !strings.Contains(g.Text, "Its capabilities: say.") {
		t.Errorf("greeter doc: %s\n%s", g.Source, g.Text)
	}
	if p, _ := g.Params(); len(p) != 1 || p[0] != MessageParam {
		t.Errorf("greeter params %+v", p)
	}

	write(t, local, "nosuch.md", doc("nosuch", "x"))
	if _, err := load(set, prompt.Dirs(local)); err == nil || !strings.Contains(err.Error(), `no tool "nosuch"`) {
		t.Errorf("a doc for no tool: %v", err)
	}
}

func TestPreviewOfAnUndocumentedTool(t *testing.T) {
	r := &Registry{docs: map[string]*Doc{}}
	if got := r.Preview("later", PreviewLines); !strings.HasPrefix(got, "# Tool: later\n") || !strings.Contains(got, "no documentation") {
		t.Errorf("Preview = %q", got)
	}
}

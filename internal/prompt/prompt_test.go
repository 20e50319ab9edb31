package prompt

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"testing/fstest"

	"github.com/plasmodium/pm/prompts"
)

func TestParse(t *testing.T) {
	tests := []struct {
		name string
		file string
		data string
		want Object // checked when errLine == 0
		// On error: the line the error must name, and a part of its message.
		errLine int
		errSub  string
	}{
		{
			name: "full frontmatter",
			file: "dir/owner.md",
			data: "---\nname: owner\ndescription: Owns a task\ncapabilities: [say, chat]\nmodel: m1\nruntime: exec\n---\n# Body {NAME}\n",
			want: Object{Name: "owner", Description: "Owns a task", Capabilities: []string{"say", "chat"}, Model: "m1", Runtime: "exec", Body: "# Body {NAME}\n", Source: "dir/owner.md"},
		},
		{
			name: "name defaults to the file stem",
			file: "builtin:qa.md",
			data: "---\ndescription: d\n---\nbody",
			want: Object{Name: "qa", Description: "d", Body: "body", Source: "builtin:qa.md"},
		},
		{
			name: "block list capabilities, blank lines before body",
			file: "x.md",
			data: "---\nname: x\ncapabilities:\n  - a\n  - b\n---\n\n\nbody\n",
			want: Object{Name: "x", Capabilities: []string{"a", "b"}, Body: "body\n", Source: "x.md"},
		},
		{
			name: "crlf and bom",
			file: "x.md",
			data: "\xef\xbb\xbf---\r\nname: x\r\nruntime: none\r\n---\r\nbody\r\n",
			want: Object{Name: "x", Runtime: "none", Body: "body\n", Source: "x.md"},
		},
		{
			name: "closing line at end of file",
			file: "x.md",
			data: "---\nname: x\n---",
			want: Object{Name: "x", Source: "x.md"},
		},
		{
			name: "empty frontmatter",
			file: "x.md",
			data: "---\n---\nbody\n",
			want: Object{Name: "x", Body: "body\n", Source: "x.md"},
		},
		{
			name: "dashes inside the body stay",
			file: "x.md",
			data: "---\nname: x\n---\nbody\n---\nmore\n",
			want: Object{Name: "x", Body: "body\n---\nmore\n", Source: "x.md"},
		},
		{name: "missing frontmatter", file: "x.md", data: "# just markdown\n", errLine: 1, errSub: "missing frontmatter"},
		{name: "empty file", file: "x.md", data: "", errLine: 1, errSub: "missing frontmatter"},
		{name: "dashes not alone on the first line", file: "x.md", data: "--- \nname: x\n---\n", errLine: 1, errSub: "missing frontmatter"},
		{name: "unterminated frontmatter", file: "x.md", data: "---\nname: x\ndescription: d\n", errLine: 1, errSub: "unterminated"},
		{name: "only an opening line", file: "x.md", data: "---\n", errLine: 1, errSub: "unterminated"},
		{name: "unknown key", file: "x.md", data: "---\nname: x\ncolor: blue\n---\n", errLine: 3, errSub: "color"},
		{name: "unknown key further down", file: "x.md", data: "---\nname: x\ndescription: d\n\nrole: r\n---\n", errLine: 5, errSub: "role"},
		{name: "bad yaml: unclosed flow sequence", file: "x.md", data: "---\nname: x\ncapabilities: [say, chat\n---\nbody\n", errLine: 3, errSub: "bad frontmatter"},
		{name: "bad yaml: unclosed flow mapping on line 4", file: "x.md", data: "---\nname: x\ndescription: d\nmodel: {a: 1\n---\n", errLine: 4, errSub: "bad frontmatter"},
		{name: "bad yaml: bad indentation", file: "x.md", data: "---\nname: x\n\ndescription: a\n  bad: indent\n---\n", errLine: 5, errSub: "bad frontmatter"},
		{name: "bad yaml: tab", file: "x.md", data: "---\n\tname: x\n---\n", errLine: 2, errSub: "bad frontmatter"},
		{name: "bad yaml: unclosed quote", file: "x.md", data: "---\nname: x\ndescription: \"open\n---\n", errLine: 3, errSub: "bad frontmatter"},
		{name: "bad yaml: wrong type", file: "x.md", data: "---\nname: x\ndescription: d\ncapabilities: 3\n---\n", errLine: 4, errSub: "bad frontmatter"},
		{name: "bad yaml: not a mapping", file: "x.md", data: "---\n- a\n---\n", errLine: 2, errSub: "bad frontmatter"},
		{name: "name that is not a safe directory name", file: "dir/My Bot.md", data: "---\n---\n", errLine: 1, errSub: `name "My Bot": want 1 to 64`},
		{name: "name with an escape", file: "dir/x\x1b.md", data: "---\n---\n", errLine: 1, errSub: "want 1 to 64"},
		{name: "name mismatch", file: "dir/x.md", data: "---\nname: y\n---\n", errLine: 2, errSub: `name "y" does not match`},
		{name: "name mismatch on line 4", file: "dir/x.md", data: "---\ndescription: d\nmodel: m\nname: y\n---\n", errLine: 4, errSub: `name "y" does not match`},
		{name: "lone CR line endings", file: "x.md", data: "---\rname: x\rruntime: bad\r---\r", errLine: 3, errSub: `runtime "bad"`},
		{name: "bad runtime", file: "x.md", data: "---\nname: x\nruntime: docker\n---\n", errLine: 3, errSub: `runtime "docker"`},
		{name: "bad runtime on line 5", file: "x.md", data: "---\nname: x\ndescription: d\n\nruntime: LLM\n---\n", errLine: 5, errSub: `runtime "LLM"`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			o, err := Parse(tt.file, []byte(tt.data))
			if tt.errLine != 0 {
				var pe *Error
				if !errors.As(err, &pe) {
					t.Fatalf("Parse = %+v, %v; want a *prompt.Error", o, err)
				}
				if pe.File != tt.file || pe.Line != tt.errLine {
					t.Errorf("error at %s:%d, want %s:%d (%v)", pe.File, pe.Line, tt.file, tt.errLine, err)
				}
				if !strings.Contains(err.Error(), tt.errSub) {
					t.Errorf("error %q does not mention %q", err, tt.errSub)
				}
				if !strings.HasPrefix(err.Error(), tt.file+":") {
					t.Errorf("error %q does not start with the file name", err)
				}
				return
			}
			if err != nil {
				t.Fatalf("Parse: %v", err)
			}
			if o.Name != tt.want.Name || o.Description != tt.want.Description || o.Model != tt.want.Model ||
				o.Runtime != tt.want.Runtime || o.Body != tt.want.Body || o.Source != tt.want.Source ||
				strings.Join(o.Capabilities, ",") != strings.Join(tt.want.Capabilities, ",") {
				t.Errorf("Parse =\n %+v\nwant\n %+v", *o, tt.want)
			}
		})
	}
}

func TestErrorString(t *testing.T) {
	if got := (&Error{File: "f.md", Line: 3, Msg: "m"}).Error(); got != "f.md:3: m" {
		t.Errorf("got %q", got)
	}
	if got := (&Error{File: "f.md", Msg: "m"}).Error(); got != "f.md: m" {
		t.Errorf("got %q", got)
	}
}

func writePrompt(t *testing.T, dir, name, desc string) {
	t.Helper()
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	data := "---\nname: " + name + "\ndescription: " + desc + "\n---\nbody of " + desc + "\n"
	if err := os.WriteFile(filepath.Join(dir, name+".md"), []byte(data), 0o644); err != nil {
		t.Fatal(err)
	}
}

func TestLoadOverrideOrder(t *testing.T) {
	project := t.TempDir()
	state := filepath.Join(project, ".plasmodium", "prompts")
	local := filepath.Join(project, "prompts")
	builtin := fstest.MapFS{
		"owner.md":     {Data: []byte("---\nname: owner\ndescription: builtin\n---\nb\n")},
		"designer.md":  {Data: []byte("---\nname: designer\ndescription: builtin\n---\nb\n")},
		"qa.md":        {Data: []byte("---\nname: qa\ndescription: builtin\n---\nb\n")},
		"README.txt":   {Data: []byte("not a prompt")},
		"sub/other.md": {Data: []byte("not at the top level")},
	}
	writePrompt(t, state, "owner", "state")
	writePrompt(t, state, "designer", "state")
	writePrompt(t, state, "extra", "state")
	writePrompt(t, local, "owner", "local")
	writePrompt(t, local, "mine", "local")
	if err := os.WriteFile(filepath.Join(local, "notes.txt"), []byte("ignored"), 0o644); err != nil {
		t.Fatal(err)
	}

	set, err := Load(builtin, Dirs(state, local)...)
	if err != nil {
		t.Fatal(err)
	}
	want := map[string]string{
		"owner":    "local",   // builtin < state < local
		"designer": "state",   // builtin < state
		"qa":       "builtin", // not overridden
		"extra":    "state",
		"mine":     "local",
	}
	if got := strings.Join(set.Names(), ","); got != "designer,extra,mine,owner,qa" {
		t.Fatalf("Names() = %s", got)
	}
	for name, from := range want {
		if set[name].Description != from {
			t.Errorf("%s comes from %q, want %q", name, set[name].Description, from)
		}
	}
	if src := set["owner"].Source; src != filepath.Join(local, "owner.md") {
		t.Errorf("owner Source = %q", src)
	}
	if src := set["qa"].Source; src != "builtin:qa.md" {
		t.Errorf("qa Source = %q", src)
	}
}

func TestLoadMissingDirsAndNilBuiltin(t *testing.T) {
	set, err := Load(nil, Dir(filepath.Join(t.TempDir(), "none")))
	if err != nil || len(set) != 0 {
		t.Fatalf("Load(nil, missing) = %v, %v", set, err)
	}
}

func TestLoadBadFileNamesIt(t *testing.T) {
	dir := t.TempDir()
	writePrompt(t, dir, "good", "fine")
	bad := filepath.Join(dir, "bad.md")
	if err := os.WriteFile(bad, []byte("---\nname: bad\nwhat: 1\n---\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	_, err := Load(prompts.FS, Dir(dir))
	var pe *Error
	if !errors.As(err, &pe) || pe.File != bad || pe.Line != 3 {
		t.Fatalf("Load = %v, want an error at %s:3", err, bad)
	}

	_, err = Load(fstest.MapFS{"x.md": {Data: []byte("no frontmatter")}})
	if !errors.As(err, &pe) || pe.File != "builtin:x.md" {
		t.Fatalf("Load of a bad builtin = %v, want it named builtin:x.md", err)
	}
}

func TestBuiltinPromptsLoad(t *testing.T) {
	set, err := Load(prompts.FS)
	if err != nil {
		t.Fatalf("built-in prompts: %v", err)
	}
	for _, name := range []string{"owner", "designer", "developer", "pm", "copywriter", "qa", "greeter", "reader", "coordinator"} {
		o, ok := set[name]
		if !ok {
			t.Errorf("built-in prompt %q missing", name)
			continue
		}
		if o.Description == "" || strings.TrimSpace(o.Body) == "" {
			t.Errorf("%s: empty description or body", name)
		}
		if len(o.Capabilities) == 0 {
			t.Errorf("%s: no capabilities", name)
		}
		if o.Source != "builtin:"+name+".md" {
			t.Errorf("%s: Source %q", name, o.Source)
		}
	}
	if !strings.Contains(set["owner"].Body, "{NAME}") {
		t.Errorf("owner body does not use {NAME}")
	}
}

func TestRender(t *testing.T) {
	tests := []struct {
		name string
		body string
		vars map[string]string
		want string
	}{
		{"fills", "I am {NAME} on {TASK_ID}.", map[string]string{"NAME": "cedar_a1b2", "TASK_ID": "tk-000001"}, "I am cedar_a1b2 on tk-000001."},
		{"repeats", "{NAME} {NAME}", map[string]string{"NAME": "x"}, "x x"},
		{"unknown placeholders stay", "{NAME} {OTHER} {}", map[string]string{"NAME": "x"}, "x {OTHER} {}"},
		{"values are not re-expanded", "{A}", map[string]string{"A": "{B}", "B": "no"}, "{B}"},
		{"nil vars", "{A}", nil, "{A}"},
		{"case sensitive", "{name}", map[string]string{"NAME": "x"}, "{name}"},
		{"empty value", "a{X}b", map[string]string{"X": ""}, "ab"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			o := &Object{Body: tt.body}
			if got := o.Render(tt.vars); got != tt.want {
				t.Errorf("Render = %q, want %q", got, tt.want)
			}
			if o.Body != tt.body {
				t.Errorf("Render changed the body")
			}
		})
	}
}

// FuzzParse: Parse never panics; its errors are *prompt.Error naming the file
// and a line inside it; a parsed object is named after its file.
func FuzzParse(f *testing.F) {
	for _, s := range []string{
		"", "---\n", "---\n---\n", "---\nname: x\n---\nbody",
		"---\nname: x\ncapabilities: [a, b\n---\n", "---\r\nname: x\r\n---\r\n",
		"\xef\xbb\xbf---\nname: x\n---", "---\n- [\n---\n", "---\na: &a [*a]\n---\n",
		"---\nname: x\nruntime: bad\n---\n", "---\nname: y\n---\n", "---\n!!binary x\n---\n",
		"---\n\"\r0\n---", // a lone CR is a YAML line break: the error line must stay in the file
	} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, data string) {
		const file = "dir/x.md"
		o, err := Parse(file, []byte(data))
		if err != nil {
			var pe *Error
			if !errors.As(err, &pe) {
				t.Fatalf("error %T %v is not a *prompt.Error", err, err)
			}
			if pe.File != file {
				t.Fatalf("error names file %q, want %q", pe.File, file)
			}
			// Lines as YAML counts them: CRLF, CR and LF each end one.
			lines := strings.Count(strings.ReplaceAll(data, "\r\n", "\n"), "\n") + strings.Count(strings.ReplaceAll(data, "\r\n", "\n"), "\r") + 1
			if pe.Line < 1 || pe.Line > lines {
				t.Fatalf("error line %d outside the file's %d lines: %v", pe.Line, lines, err)
			}
			return
		}
		if o == nil || o.Name != "x" || o.Source != file {
			t.Fatalf("Parse = %+v with no error", o)
		}
	})
}

// A prompt's CLI parts go to agents that drive pm by commands only; the
// marker lines go to nobody (an unclosed part runs to the end).
func TestRenderCLIParts(t *testing.T) {
	body := "a\n<!-- cli -->\npm say\n<!-- /cli -->\nb {NAME}\n  <!-- cli -->  \ntail\n"
	for _, tt := range []struct {
		runtime, want string
	}{
		{"exec", "a\npm say\nb x\ntail\n"},
		{"", "a\npm say\nb x\ntail\n"},
		{"llm", "a\nb x\n"},
	} {
		o := &Object{Body: body}
		if got := o.Render(map[string]string{"NAME": "x", "RUNTIME": tt.runtime}); got != tt.want {
			t.Errorf("runtime %q: %q, want %q", tt.runtime, got, tt.want)
		}
	}
}

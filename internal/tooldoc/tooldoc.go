package tooldoc

import (
	"fmt"
	"path/filepath"
	"sort"
	"strings"
)

// Doc is one tool's documentation (the seed's ToolDoc).
type Doc struct {
	Name     string            `json:"name"`
	Summary  string            `json:"summary"`
	Source   string            `json:"source"` // "builtin:NAME.md", a file path, or "prompt:SOURCE" when generated
	Text     string            `json:"text"`   // the whole document
	Sections map[string]string `json:"-"`      // by lower-case heading: summary, parameters, examples, notes
}

// PreviewLines is how much of a doc code-designer mode shows before a call.
const PreviewLines = 10

// FirstLines returns the doc's first n lines (all of it when shorter).
func (d *Doc) FirstLines(n int) string {
	lines := strings.SplitAfter(strings.TrimRight(d.Text, "\n"), "\n")
	if n < len(lines) {
		lines = lines[:n]
	}
	return strings.TrimRight(strings.Join(lines, ""), "\n")
}

// Error is a malformed doc: the file and the line.
type Error struct {
	File string
	Line int
	Msg  string
}

func (e *Error) Error() string { return fmt.Sprintf("%s:%d: %s", e.File, e.Line, e.Msg) }

// required sections of every doc; Examples and Notes are optional.
var required = []string{"summary", "parameters"}

// Parse reads one doc. file names it in errors; its stem must be the tool's
// name.
func Parse(file string, data []byte) (*Doc, error) {
	text := strings.ReplaceAll(strings.TrimPrefix(string(data), "\xef\xbb\xbf"), "\r\n", "\n")
	lines := strings.Split(text, "\n")
	name, ok := strings.CutPrefix(lines[0], "# Tool: ")
	name = strings.TrimSpace(name)
	if !ok || name == "" {
		return nil, &Error{File: file, Line: 1, Msg: `the first line must be "# Tool: NAME"`}
	}
	if stem := strings.TrimSuffix(filepath.Base(strings.TrimPrefix(file, "builtin:")), ".md"); name != stem {
		return nil, &Error{File: file, Line: 1, Msg: fmt.Sprintf("tool %q does not match the file name %q", name, stem+".md")}
	}
	d := &Doc{Name: name, Source: file, Text: text, Sections: map[string]string{}}
	var cur string
	var body []string
	flush := func() {
		if cur != "" {
			d.Sections[cur] = strings.TrimSpace(strings.Join(body, "\n"))
		}
	}
	for _, l := range lines[1:] {
		if h, ok := strings.CutPrefix(l, "## "); ok {
			flush()
			cur, body = strings.ToLower(strings.TrimSpace(h)), nil
			continue
		}
		body = append(body, l)
	}
	flush()
	for _, s := range required {
		if d.Sections[s] == "" {
			return nil, &Error{File: file, Line: len(lines), Msg: fmt.Sprintf("no %q section (want ## Summary, ## Parameters, ## Examples, ## Notes)", s)}
		}
	}
	d.Summary = strings.SplitN(d.Sections["summary"], "\n", 2)[0]
	if _, err := d.Params(); err != nil {
		return nil, &Error{File: file, Line: lineOf(lines, "## Parameters"), Msg: err.Error()}
	}
	return d, nil
}

func lineOf(lines []string, prefix string) int {
	for i, l := range lines {
		if strings.HasPrefix(l, prefix) {
			return i + 1
		}
	}
	return 1
}

// Param is one row of a doc's Parameters table.
type Param struct {
	Name        string `json:"name"`
	Type        string `json:"type"`
	Required    bool   `json:"required"`
	Description string `json:"description"`
}

// Params reads the Parameters table: "(none)" or a header row, a separator
// row and one row per parameter (name | type | yes/no | description).
func (d *Doc) Params() ([]Param, error) {
	sec := strings.TrimSpace(d.Sections["parameters"])
	if sec == "(none)" {
		return nil, nil
	}
	rows := strings.Split(sec, "\n")
	if len(rows) < 2 || cells(rows[0]) == nil || !strings.HasPrefix(strings.TrimSpace(rows[1]), "| ---") {
		return nil, fmt.Errorf(`parameters: want "(none)" or a table "| name | type | required | description |"`)
	}
	var out []Param
	for _, r := range rows[2:] {
		c := cells(r)
		if len(c) != 4 || (c[2] != "yes" && c[2] != "no") || c[0] == "" || c[1] == "" {
			return nil, fmt.Errorf("parameters: bad row %q: want | name | type | yes or no | description |", r)
		}
		out = append(out, Param{Name: c[0], Type: c[1], Required: c[2] == "yes", Description: c[3]})
	}
	return out, nil
}

// cells splits a markdown table row "| a | b |" into trimmed cells.
func cells(row string) []string {
	row = strings.TrimSpace(row)
	if !strings.HasPrefix(row, "|") || !strings.HasSuffix(row, "|") || len(row) < 2 {
		return nil
	}
	parts := strings.Split(row[1:len(row)-1], "|")
	for i := range parts {
		parts[i] = strings.TrimSpace(parts[i])
	}
	return parts
}

// Registry holds the docs of a project's tools (the seed's ToolRegistry).
type Registry struct {
	docs map[string]*Doc
}

// Lookup returns the doc of a tool.
func (r *Registry) Lookup(name string) (*Doc, bool) {
	d, ok := r.docs[name]
	return d, ok
}

// Names lists the documented tools, sorted.
func (r *Registry) Names() []string {
	out := make([]string, 0, len(r.docs))
	for n := range r.docs {
		out = append(out, n)
	}
	sort.Strings(out)
	return out
}

// Preview is the first n lines of a tool's doc; a tool with no doc (an
// object created after the registry was read) gets a line saying so.
func (r *Registry) Preview(name string, n int) string {
	if d, ok := r.Lookup(name); ok {
		return d.FirstLines(n)
	}
	return "# Tool: " + name + "\n\n(no documentation for this tool yet: check its description in the tool list)"
}

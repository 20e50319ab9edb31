package prompt

import (
	"bytes"
	"fmt"
	"io/fs"
	"path/filepath"
	"sort"
	"strings"

	"gopkg.in/yaml.v3"

	"github.com/plasmodium/pm/internal/config"
	"github.com/plasmodium/pm/internal/ids"
	"github.com/plasmodium/pm/internal/state"
	"github.com/plasmodium/pm/internal/store"
)

// Object is a prompt object: frontmatter is its interface, body its soul.
type Object struct {
	Name         string             `yaml:"name"`
	Description  string             `yaml:"description"`
	Capabilities []string           `yaml:"capabilities"`
	Model        string             `yaml:"model"`
	Runtime      config.RuntimeName `yaml:"runtime"`
	// CodeDesigner turns code-designer mode on or off for this object's
	// agents (internal/designmode; nil: not set here).
	CodeDesigner *bool `yaml:"code_designer"`
	// Weight and Criteria are an angle's (prompts/angles/, pm design):
	// its importance in [0,1] and what it looks for.
	Weight   float64  `yaml:"weight"`
	Criteria []string `yaml:"criteria"`
	Body     string   `yaml:"-"`
	Source   string   `yaml:"-"` // "builtin:owner.md" or a file path
	// CapabilityLines holds the file line of each capability, parallel to
	// Capabilities, so a checker can name where a bad one is written.
	CapabilityLines []int `yaml:"-" json:"-"`
}

// Error is a load error that names the file and, where known, the line.
type Error struct {
	File string
	Line int
	Msg  string
}

func (e *Error) Error() string {
	if e.Line > 0 {
		return fmt.Sprintf("%s:%d: %s", e.File, e.Line, e.Msg)
	}
	return fmt.Sprintf("%s: %s", e.File, e.Msg)
}

// Parse reads one prompt object file. name is the file's stem, used when the
// frontmatter has no name and checked against it when it has one.
func Parse(file string, data []byte) (*Object, error) {
	stem := strings.TrimSuffix(filepath.Base(strings.TrimPrefix(file, "builtin:")), ".md")
	data = bytes.TrimPrefix(data, []byte("\xef\xbb\xbf"))
	// A lone CR is a line break to YAML too: normalise it so every line
	// number we report counts lines the way the YAML parser does.
	text := strings.ReplaceAll(strings.ReplaceAll(string(data), "\r\n", "\n"), "\r", "\n")
	if !strings.HasPrefix(text, "---\n") {
		return nil, &Error{File: file, Line: 1, Msg: "missing frontmatter: the file must start with a line '---'"}
	}
	rest := text[3:] // from the opening line's newline, so an empty frontmatter closes too
	end := strings.Index(rest, "\n---\n")
	if end < 0 {
		if strings.HasSuffix(rest, "\n---") {
			end = len(rest) - 4
		} else {
			return nil, &Error{File: file, Line: 1, Msg: "unterminated frontmatter: no closing '---' line"}
		}
	}
	front := rest[1 : end+1]
	body := ""
	if end+5 <= len(rest) {
		body = rest[end+5:]
	}
	var o Object
	dec := yaml.NewDecoder(strings.NewReader(front))
	dec.KnownFields(true)
	if err := dec.Decode(&o); err != nil && err.Error() != "EOF" {
		return nil, yamlError(file, err)
	}
	if o.Name == "" {
		o.Name = stem
	}
	if !ids.ValidAgentName(o.Name) {
		// The name becomes a directory (its resident agent, its inbox).
		return nil, &Error{File: file, Line: 1, Msg: fmt.Sprintf("name %q: want 1 to 64 of a-z, 0-9, _ and -, starting with a letter or digit", o.Name)}
	}
	if o.Name != stem {
		return nil, &Error{File: file, Line: lineOf(front, "name:") + 1, Msg: fmt.Sprintf("name %q does not match the file name %q", o.Name, stem+".md")}
	}
	switch o.Runtime {
	case "", config.RuntimeLLM, config.RuntimeExec, config.RuntimeNone:
	default:
		return nil, &Error{File: file, Line: lineOf(front, "runtime:") + 1, Msg: fmt.Sprintf("runtime %q: want llm, exec or none", o.Runtime)}
	}
	o.Body = strings.TrimLeft(body, "\n")
	o.Source = file
	o.CapabilityLines = capabilityLines(front, len(o.Capabilities))
	return &o, nil
}

// capabilityLines finds the file line of each capabilities item (the
// frontmatter starts on line 2 of the file); it returns nil when it cannot
// account for exactly n items.
func capabilityLines(front string, n int) []int {
	var doc yaml.Node
	if yaml.Unmarshal([]byte(front), &doc) != nil || len(doc.Content) == 0 || doc.Content[0].Kind != yaml.MappingNode {
		return nil
	}
	m := doc.Content[0]
	for i := 0; i+1 < len(m.Content); i += 2 {
		if m.Content[i].Value != "capabilities" || m.Content[i+1].Kind != yaml.SequenceNode {
			continue
		}
		items := m.Content[i+1].Content
		if len(items) != n {
			return nil
		}
		out := make([]int, n)
		for j, it := range items {
			out[j] = it.Line + 1
		}
		return out
	}
	return nil
}

// CapabilityLine is the file line where capability i is written (the frontmatter's
// first line when unknown).
func (o *Object) CapabilityLine(i int) int {
	if i >= 0 && i < len(o.CapabilityLines) {
		return o.CapabilityLines[i]
	}
	return 2
}

// yamlError turns yaml.v3's "yaml: line N: msg" into a file:line error; the
// frontmatter starts on line 2 of the file.
func yamlError(file string, err error) error {
	msg := err.Error()
	var line int
	if te, ok := err.(*yaml.TypeError); ok && len(te.Errors) > 0 {
		msg = te.Errors[0]
	}
	msg = strings.TrimPrefix(msg, "yaml: ")
	if _, e := fmt.Sscanf(msg, "line %d:", &line); e == nil {
		msg = strings.TrimSpace(msg[strings.Index(msg, ":")+1:])
	}
	if yamlParserProblem(msg) {
		line++ // yaml.v3 counts parser error lines from 0 (and omits line 0)
	}
	return &Error{File: file, Line: max(line, 1) + 1, Msg: "bad frontmatter: " + msg}
}

// yamlParserProblem reports whether msg is one of yaml.v3's parser errors (an
// unclosed [ or {, a missing key), whose line numbers count from 0; its
// scanner and type errors count from 1.
func yamlParserProblem(msg string) bool {
	for _, p := range []string{
		"did not find expected <", "did not find expected node content", "did not find expected key",
		"did not find expected '-' indicator", "did not find expected ',' or ", "found duplicate %",
		"found incompatible YAML document", "found undefined tag handle",
	} {
		if strings.HasPrefix(msg, p) {
			return true
		}
	}
	return false
}

// lineOf is the 1-based line of text that starts with needle, or 1 when no
// line does (a flow mapping written on one line).
func lineOf(text, needle string) int {
	for i, l := range strings.Split(text, "\n") {
		if strings.HasPrefix(l, needle) {
			return i + 1
		}
	}
	return 1
}

// Set is the prompt objects visible to a project, by name.
type Set map[string]*Object

// Load reads the built-in objects, then each layer in order (later wins).
// A missing directory has no files; a bad file is an error naming it.
func Load(builtin fs.FS, layers ...Layer) (Set, error) {
	set := Set{}
	err := LoadFiles(builtin, layers, func(file string, data []byte) error {
		o, err := Parse(file, data)
		if err != nil {
			return err
		}
		set[o.Name] = o
		return nil
	})
	if err != nil {
		return nil, err
	}
	return set, nil
}

// A Layer is one place markdown files come from, passing each to add: a
// directory of the project (Dir) or the prompt files the project's state
// keeps (Kept). Later layers override earlier ones by name.
type Layer func(add func(file string, data []byte) error) error

// Dir is the top-level *.md of directory d, each named by its path.
func Dir(d string) Layer {
	return func(add func(file string, data []byte) error) error { return store.MarkdownFiles(d, add) }
}

// Dirs is a Dir for each directory, in order.
func Dirs(ds ...string) []Layer {
	out := make([]Layer, len(ds))
	for i, d := range ds {
		out[i] = Dir(d)
	}
	return out
}

// Kept is the prompt files st keeps under sub (state.Prompts), each named
// where it is kept.
func Kept(st state.Prompts, sub string) Layer {
	return func(add func(file string, data []byte) error) error { return st.PromptFiles(sub, add) }
}

// LoadFiles is the one layered lookup of markdown files that prompt objects,
// tool docs (internal/tooldoc) and anything else shipped beside them share:
// it passes each top-level *.md of builtin (named "builtin:NAME.md"), then
// each file of each layer in order, to add, so a later file of the same
// name overrides an earlier one. The first error add returns stops the
// load.
func LoadFiles(builtin fs.FS, layers []Layer, add func(file string, data []byte) error) error {
	if builtin != nil {
		names, err := fs.Glob(builtin, "*.md")
		if err != nil {
			return err
		}
		for _, n := range names {
			data, err := fs.ReadFile(builtin, n)
			if err != nil {
				return err
			}
			if err := add("builtin:"+n, data); err != nil {
				return err
			}
		}
	}
	for _, l := range layers {
		if err := l(add); err != nil {
			return err
		}
	}
	return nil
}

// Names lists the objects' names, sorted.
func (s Set) Names() []string {
	out := make([]string, 0, len(s))
	for n := range s {
		out = append(out, n)
	}
	sort.Strings(out)
	return out
}

// Render fills {KEY} placeholders in the body. Unknown placeholders stay as
// they are, so a prompt can show braces literally. A part of the body
// between the lines "<!-- cli -->" and "<!-- /cli -->" is for agents that
// drive pm by commands (its quick reference, its exit codes): an llm agent
// (vars RUNTIME "llm") has tools that say the same, so it is left out for
// one, and only the marker lines for the others.
func (o *Object) Render(vars map[string]string) string {
	pairs := make([]string, 0, len(vars)*2)
	for k, v := range vars {
		pairs = append(pairs, "{"+k+"}", v)
	}
	return strings.NewReplacer(pairs...).Replace(cliParts(o.Body, vars["RUNTIME"] == "llm"))
}

// The lines that open and close a part of a prompt for the CLI.
const (
	cliOpen  = "<!-- cli -->"
	cliClose = "<!-- /cli -->"
)

// cliParts drops the marker lines, and with drop the parts between them
// (an open part with no close runs to the end).
func cliParts(body string, drop bool) string {
	if !strings.Contains(body, cliOpen) {
		return body
	}
	var b strings.Builder
	in := false
	for _, line := range strings.SplitAfter(body, "\n") {
		switch strings.TrimSpace(line) {
		case cliOpen:
			in = true
			continue
		case cliClose:
			in = false
			continue
		}
		if !in || !drop {
			b.WriteString(line)
		}
	}
	return b.String()
}

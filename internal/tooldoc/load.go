package tooldoc

import (
	"fmt"
	"io/fs"
	"strings"

	"github.com/plasmodium/pm/internal/errs"
	"github.com/plasmodium/pm/internal/prompt"
	"github.com/plasmodium/pm/internal/state"
	"github.com/plasmodium/pm/internal/store"
	"github.com/plasmodium/pm/prompts"
)

// builtinFS is the embedded docs, at the top level as prompt.LoadFiles reads them.
func builtinFS() fs.FS {
	sub, err := fs.Sub(prompts.Tools, "tools")
	if err != nil {
		panic(err) // the embed pattern guarantees the directory
	}
	return sub
}

// Builtins reads the embedded docs only.
func Builtins() (*Registry, error) {
	return load(nil, nil)
}

// Load reads the docs visible to the store's project: every prompt object's
// generated doc, the built-in docs, then the project's overrides. A bad file
// is an error naming it, with a Try: line.
func Load(s *store.Store, st state.State) (*Registry, error) {
	set, err := prompt.LoadProject(s, st)
	if err != nil {
		return nil, err
	}
	r, err := load(set, prompt.ProjectLayers(s, st, "tools"))
	if err != nil && errs.TryOf(err) == "" {
		err = &errs.Error{Code: errs.Usage, Err: err, Try: "fix the file at the line named above, then run 'pm tools'"}
	}
	return r, err
}

func load(set prompt.Set, layers []prompt.Layer) (*Registry, error) {
	r := &Registry{docs: map[string]*Doc{}}
	for _, name := range set.Names() {
		r.docs[name] = ForObject(set[name])
	}
	err := prompt.LoadFiles(builtinFS(), layers, func(file string, data []byte) error {
		d, err := Parse(file, data)
		if err != nil {
			return err
		}
		if _, builtin := prompt.Builtin(d.Name); !builtin && set[d.Name] == nil {
			return &Error{File: file, Line: 1, Msg: fmt.Sprintf("no tool %q: a doc is for a built-in capability (%s) or a prompt object",
				d.Name, strings.Join(prompt.BuiltinNames(""), ", "))}
		}
		r.docs[d.Name] = d
		return nil
	})
	if err != nil {
		return nil, err
	}
	return r, nil
}

// MessageParam is the one parameter of a tool that is another prompt object
// (internal/capability's objectTool).
var MessageParam = Param{Name: "message", Type: "string", Required: true, Description: "what to ask or tell it, in plain language"}

// ForObject generates a prompt object's doc from its frontmatter.
func ForObject(o *prompt.Object) *Doc {
	desc := strings.TrimSpace(o.Description)
	if desc == "" {
		desc = "A prompt object."
	}
	desc = strings.Join(strings.Fields(desc), " ")
	var b strings.Builder
	fmt.Fprintf(&b, "# Tool: %s\n\n## Summary\n%s\n\n## Parameters\n", o.Name, desc)
	b.WriteString("| name | type | required | description |\n| --- | --- | --- | --- |\n")
	p := MessageParam
	fmt.Fprintf(&b, "| %s | %s | yes | %s |\n\n", p.Name, p.Type, p.Description)
	b.WriteString("## Examples\n```json\n{\"message\": \"...\"}\n```\n\n## Notes\n")
	fmt.Fprintf(&b, "- A prompt object (%s): it gets your message in its inbox; its reply is the result.\n", o.Source)
	caps := "none declared"
	if len(o.Capabilities) > 0 {
		caps = strings.Join(o.Capabilities, ", ")
	}
	fmt.Fprintf(&b, "- Its capabilities: %s.\n", caps)
	if o.Model != "" || o.Runtime != "" {
		fmt.Fprintf(&b, "- Model %q, runtime %q.\n", o.Model, o.Runtime)
	}
	d, err := Parse(o.Name+".md", []byte(b.String()))
	if err != nil {
		panic(fmt.Sprintf("tooldoc: generated doc of %s does not parse: %v", o.Name, err)) // a bug here, not in the object
	}
	d.Source = "prompt:" + o.Source
	return d
}

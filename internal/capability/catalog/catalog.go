// Package catalog names the built-in capabilities and checks prompt objects'
// frontmatter against them. It is data only (no behaviour), so the prompt
// loader (internal/agent) can validate every load without importing the
// capability implementations, which import the loader.
package catalog

import (
	"errors"
	"fmt"
	"sort"
	"strings"

	"github.com/plasmodium/pm/internal/prompt"
)

// Kind is what implements a capability.
type Kind string

const (
	PM        Kind = "pm"        // a pm operation, run in-process as the agent
	Primitive Kind = "primitive" // deterministic code confined to the workspace
	Universal Kind = "universal" // available to every prompt object without declaring it
	Object    Kind = "object"    // another prompt object, reached by message
)

// builtins maps each built-in capability to its kind.
var builtins = map[string]Kind{
	"say": PM, "chat": PM, "status": PM, "history": PM, "phase": PM, "extend_phase": PM,
	"end_phase": PM, "subtask": PM, "wait_children": PM, "done": PM,
	"read_file": Primitive, "list_files": Primitive, "write_file": Primitive, "run_command": Primitive, "http_get": Primitive,
	"think": Universal, "ask_human": Universal, "create_capability": Universal,
}

// Builtin reports the kind of a built-in capability.
func Builtin(name string) (Kind, bool) {
	k, ok := builtins[name]
	return k, ok
}

// Names lists the built-in capabilities of a kind (all kinds when kind is
// ""), sorted.
func Names(kind Kind) []string {
	var out []string
	for n, k := range builtins {
		if kind == "" || k == kind {
			out = append(out, n)
		}
	}
	sort.Strings(out)
	return out
}

// Universals are the capabilities every prompt object has, declared or not.
func Universals() []string { return Names(Universal) }

// Known reports whether name is a capability: a built-in or a prompt object
// of set.
func Known(name string, set prompt.Set) bool {
	if _, ok := builtins[name]; ok {
		return true
	}
	_, ok := set[name]
	return ok
}

// Validate checks every object's frontmatter: each capability must be known,
// listed once and not the object itself, and no object may take a built-in
// capability's name. Each problem is a *prompt.Error naming the file and the
// line; all of them come back joined, in name order.
func Validate(set prompt.Set) error {
	var problems []error
	for _, name := range set.Names() {
		o := set[name]
		if _, ok := builtins[o.Name]; ok {
			problems = append(problems, &prompt.Error{File: o.Source, Line: 2,
				Msg: fmt.Sprintf("name %q is a built-in capability; rename the prompt object", o.Name)})
		}
		seen := map[string]bool{}
		for i, c := range o.Capabilities {
			line := o.CapabilityLine(i)
			switch {
			case c == o.Name:
				problems = append(problems, &prompt.Error{File: o.Source, Line: line,
					Msg: fmt.Sprintf("capability %q is the prompt object itself", c)})
			case !Known(c, set):
				problems = append(problems, &prompt.Error{File: o.Source, Line: line,
					Msg: fmt.Sprintf("unknown capability %q; known: %s, or a prompt object (%s)", c,
						strings.Join(Names(""), ", "), strings.Join(set.Names(), ", "))})
			case seen[c]:
				problems = append(problems, &prompt.Error{File: o.Source, Line: line,
					Msg: fmt.Sprintf("capability %q is listed twice", c)})
			}
			seen[c] = true
		}
	}
	return errors.Join(problems...)
}

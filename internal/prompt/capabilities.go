// The built-in capabilities, and the check of every object's frontmatter
// against them. They are names only (the behaviour is internal/capability),
// so loading a prompt set validates it without importing the implementations.

package prompt

import (
	"errors"
	"fmt"
	"sort"
	"strings"
)

// CapabilityKind is what implements a capability.
type CapabilityKind string

const (
	CapPM        CapabilityKind = "pm"        // a pm operation, run in-process as the agent
	CapPrimitive CapabilityKind = "primitive" // deterministic code confined to the workspace
	CapUniversal CapabilityKind = "universal" // available to every prompt object without declaring it
	CapObject    CapabilityKind = "object"    // another prompt object, reached by message
)

// builtins maps each built-in capability to its kind.
var builtins = map[string]CapabilityKind{
	"say": CapPM, "chat": CapPM, "status": CapPM, "history": CapPM, "phase": CapPM, "extend_phase": CapPM,
	"end_phase": CapPM, "subtask": CapPM, "wait_children": CapPM, "done": CapPM, "design_review": CapPM,
	"read_file": CapPrimitive, "list_files": CapPrimitive, "write_file": CapPrimitive, "run_command": CapPrimitive, "http_get": CapPrimitive,
	"think": CapUniversal, "ask_human": CapUniversal, "create_capability": CapUniversal,
}

// Builtin reports the kind of a built-in capability.
func Builtin(name string) (CapabilityKind, bool) {
	k, ok := builtins[name]
	return k, ok
}

// Names lists the built-in capabilities of a kind (all kinds when kind is
// ""), sorted.
func BuiltinNames(kind CapabilityKind) []string {
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
func Universals() []string { return BuiltinNames(CapUniversal) }

// Known reports whether name is a capability: a built-in or a prompt object
// of the set.
func (set Set) Known(name string) bool {
	if _, ok := builtins[name]; ok {
		return true
	}
	_, ok := set[name]
	return ok
}

// Validate checks every object's frontmatter: each capability must be known,
// listed once and not the object itself, and no object may take a built-in
// capability's name. Each problem is a *Error naming the file and the
// line; all of them come back joined, in name order.
func (set Set) Validate() error {
	var problems []error
	for _, name := range set.Names() {
		o := set[name]
		if _, ok := builtins[o.Name]; ok {
			problems = append(problems, &Error{File: o.Source, Line: 2,
				Msg: fmt.Sprintf("name %q is a built-in capability; rename the prompt object", o.Name)})
		}
		seen := map[string]bool{}
		for i, c := range o.Capabilities {
			line := o.CapabilityLine(i)
			switch {
			case c == o.Name:
				problems = append(problems, &Error{File: o.Source, Line: line,
					Msg: fmt.Sprintf("capability %q is the prompt object itself", c)})
			case !set.Known(c):
				problems = append(problems, &Error{File: o.Source, Line: line,
					Msg: fmt.Sprintf("unknown capability %q; known: %s, or a prompt object (%s)", c,
						strings.Join(BuiltinNames(""), ", "), strings.Join(set.Names(), ", "))})
			case seen[c]:
				problems = append(problems, &Error{File: o.Source, Line: line,
					Msg: fmt.Sprintf("capability %q is listed twice", c)})
			}
			seen[c] = true
		}
	}
	return errors.Join(problems...)
}

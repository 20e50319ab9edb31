package prompt

import (
	"io/fs"
	"path/filepath"
	"strings"

	"github.com/plasmodium/pm/internal/errs"
	"github.com/plasmodium/pm/internal/state"
	"github.com/plasmodium/pm/internal/store"
	"github.com/plasmodium/pm/prompts"
)

// LoadProject loads the prompt objects visible to the store's project:
// built-in, then .plasmodium/prompts/, then ./prompts/ (later wins). Every
// load validates the set (an unknown capability is an error naming file and
// line), so a broken edit is caught on the next load, never half-used.
func LoadProject(s *store.Store, st state.State) (Set, error) {
	set, err := Load(prompts.FS, ProjectLayers(s, st, "")...)
	if err == nil {
		err = set.Validate()
	}
	if err != nil {
		if errs.TryOf(err) == "" {
			// Like every pm error, a broken prompt file says what to do next.
			err = &errs.Error{Code: errs.CodeOf(err), Err: err, Try: "fix the file at the line named above, then run 'pm prompts'"}
		}
		return nil, err
	}
	return set, nil
}

// ProjectLayers are what overrides the built-ins, in order (later wins):
// the prompt files the project's state st keeps under SUB
// (.plasmodium/prompts/SUB on the files), then the
// project's ./prompts/SUB ("" for the prompt objects themselves; "tools"
// for tool docs; "angles" for the code designer's angles).
func ProjectLayers(s *store.Store, st state.State, sub string) []Layer {
	return []Layer{Kept(st, sub), Dir(filepath.Join(s.ProjectDir(), "prompts", sub))}
}

// Lookup finds a prompt object by name, with a clear error listing the others.
func (set Set) Lookup(name string) (*Object, error) {
	if o, ok := set[name]; ok {
		return o, nil
	}
	return nil, errs.NotFoundf("known prompt objects: "+strings.Join(set.Names(), ", "), "no prompt object %q", name)
}

// LoadAngles loads the code designer's angles: built-in prompts/angles/,
// then .plasmodium/prompts/angles/, then ./prompts/angles/ (later wins). An
// angle is a prompt object whose body is the reviewer's system prompt, with
// weight (in [0,1]) and criteria in its frontmatter.
func LoadAngles(s *store.Store, st state.State) (Set, error) {
	builtin, err := fs.Sub(prompts.FS, "angles")
	if err != nil {
		return nil, err
	}
	set, err := Load(builtin, ProjectLayers(s, st, "angles")...)
	if err != nil {
		return nil, &errs.Error{Code: errs.CodeOf(err), Err: err, Try: "fix the angle file at the line named above"}
	}
	for _, n := range set.Names() {
		if a := set[n]; a.Weight < 0 || a.Weight > 1 {
			return nil, errs.Usagef("give the angle a weight between 0 and 1", "%s: weight %v is outside [0, 1]", a.Source, a.Weight)
		}
	}
	return set, nil
}

package capability

import (
	"testing"

	"github.com/plasmodium/pm/internal/prompt"
	"github.com/plasmodium/pm/internal/tooldoc"
)

// Every built-in capability has a doc whose Parameters table agrees with the
// schema the model is given (derived by ops.SchemaFor), and a prompt
// object's generated doc agrees with the {message} tool it becomes.
func TestToolDocsMatchSchemas(t *testing.T) {
	r, err := tooldoc.Builtins()
	if err != nil {
		t.Fatal(err)
	}
	for name, b := range impls {
		d, ok := r.Lookup(name)
		if !ok {
			t.Errorf("capability %q has no doc: add prompts/tools/%s.md", name, name)
			continue
		}
		if err := tooldoc.CheckSchema(d, b.params()); err != nil {
			t.Error(err)
		}
	}
	obj := tooldoc.ForObject(&prompt.Object{Name: "helper", Description: "Helps.", Source: "x.md"})
	if err := tooldoc.CheckSchema(obj, messageSchema()); err != nil {
		t.Error(err)
	}
}

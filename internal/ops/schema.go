package ops

import (
	"encoding/json"
	"fmt"
	"strings"

	"github.com/google/jsonschema-go/jsonschema"

	"github.com/plasmodium/pm/internal/design"
	"github.com/plasmodium/pm/internal/errs"
)

// SchemaFor derives the JSON Schema of a tool's arguments from In's fields:
// `json` tags name the properties (without omitempty they are required),
// `jsonschema` tags describe them. It panics on a type that has no schema,
// which is a programming error caught by any test that lists the tools.
// Lists are plain arrays (design.SchemaOptions, shared with the designer's
// formats).
func SchemaFor[In any]() json.RawMessage {
	s, err := jsonschema.For[In](design.SchemaOptions)
	if err != nil {
		panic(fmt.Sprintf("ops: schema of %T: %v", *new(In), err))
	}
	if s.Properties == nil {
		s.Properties = map[string]*jsonschema.Schema{} // an object with no arguments still lists none
	}
	data, err := json.Marshal(s)
	if err != nil {
		panic(err)
	}
	return data
}

// Decode reads a tool call's JSON arguments into v; none at all is an empty
// object.
func Decode(args json.RawMessage, v any) error {
	trimmed := strings.TrimSpace(string(args))
	if trimmed == "" || trimmed == "null" {
		return nil
	}
	if err := json.Unmarshal(args, v); err != nil {
		return errs.Usagef("send the arguments as one JSON object matching the tool's schema", "cannot read the arguments: %v", err)
	}
	return nil
}

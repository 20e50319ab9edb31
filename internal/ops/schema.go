package ops

import (
	"encoding/json"
	"fmt"
	"reflect"
	"strings"

	"github.com/google/jsonschema-go/jsonschema"

	"github.com/plasmodium/pm/internal/errs"
)

// schemaOptions make lists plain arrays: the library's default for a Go
// slice is ["null","array"] (a nil slice marshals to null), which some model
// providers reject; pm reads a missing or null list as empty anyway.
var schemaOptions = &jsonschema.ForOptions{TypeSchemas: map[reflect.Type]*jsonschema.Schema{
	reflect.TypeFor[[]string](): {Type: "array", Items: &jsonschema.Schema{Type: "string"}},
}}

// SchemaFor derives the JSON Schema of a tool's arguments from In's fields:
// `json` tags name the properties (without omitempty they are required),
// `jsonschema` tags describe them. It panics on a type that has no schema,
// which is a programming error caught by any test that lists the tools.
func SchemaFor[In any]() json.RawMessage {
	s, err := jsonschema.For[In](schemaOptions)
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

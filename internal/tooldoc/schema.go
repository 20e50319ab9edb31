package tooldoc

import (
	"encoding/json"
	"fmt"
	"slices"
	"sort"
	"strings"
)

// CheckSchema reports where a doc's Parameters table disagrees with the
// tool's JSON Schema: a property missing from either side, a different type
// (the schema's types without "null"), or a different required flag.
func CheckSchema(d *Doc, schema json.RawMessage) error {
	var s struct {
		Properties map[string]struct {
			Type json.RawMessage `json:"type"`
		} `json:"properties"`
		Required []string `json:"required"`
	}
	if err := json.Unmarshal(schema, &s); err != nil {
		return fmt.Errorf("%s: bad schema: %v", d.Name, err)
	}
	params, err := d.Params()
	if err != nil {
		return err
	}
	var problems []string
	documented := map[string]bool{}
	for _, p := range params {
		documented[p.Name] = true
		prop, ok := s.Properties[p.Name]
		if !ok {
			problems = append(problems, fmt.Sprintf("documents %q, which the schema does not have", p.Name))
			continue
		}
		if t := schemaType(prop.Type); t != p.Type {
			problems = append(problems, fmt.Sprintf("%q is %s in the doc, %s in the schema", p.Name, p.Type, t))
		}
		if req := slices.Contains(s.Required, p.Name); req != p.Required {
			problems = append(problems, fmt.Sprintf("%q required=%v in the doc, %v in the schema", p.Name, p.Required, req))
		}
	}
	var missing []string
	for name := range s.Properties {
		if !documented[name] {
			missing = append(missing, name)
		}
	}
	sort.Strings(missing)
	for _, name := range missing {
		problems = append(problems, fmt.Sprintf("does not document %q", name))
	}
	if len(problems) > 0 {
		return fmt.Errorf("%s (%s): parameters disagree with the schema: %s", d.Name, d.Source, strings.Join(problems, "; "))
	}
	return nil
}

// schemaType is a property's type as a doc writes it: "string", or
// "string|integer" for several, leaving out "null".
func schemaType(raw json.RawMessage) string {
	var one string
	if json.Unmarshal(raw, &one) == nil {
		return one
	}
	var many []string
	_ = json.Unmarshal(raw, &many)
	many = slices.DeleteFunc(many, func(t string) bool { return t == "null" })
	return strings.Join(many, "|")
}

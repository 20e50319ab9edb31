package ops

import (
	"encoding/json"
	"slices"
	"testing"
)

// The tools' schemas are derived from the input structs: the required
// arguments are exactly the fields without omitempty.
func TestToolSchemas(t *testing.T) {
	tests := []struct {
		tool     string
		required []string
		props    []string
	}{
		{"say", []string{"message"}, []string{"message", "phase"}},
		{"chat", nil, []string{"phase", "wait"}},
		{"status", nil, []string{"all", "task"}},
		{"history", nil, []string{"tail", "task"}},
		{"phase", []string{"name", "limit", "roles"}, []string{"limit", "name", "roles", "rules", "task"}},
		{"extend_phase", []string{"n"}, []string{"n", "task"}},
		{"end_phase", nil, []string{"task"}},
		{"subtask", []string{"description"}, []string{"context", "description", "on", "runtime", "task"}},
		{"wait_children", nil, []string{"task", "timeout"}},
		{"done", nil, []string{"task"}},
		{"design_review", []string{"file", "goal"}, []string{"angles", "apply", "file", "goal", "max_passes", "task", "test"}},
	}
	if got := len(ToolNames()); got != len(tests) {
		t.Fatalf("%d tools, the table covers %d: %v", got, len(tests), ToolNames())
	}
	for _, tt := range tests {
		t.Run(tt.tool, func(t *testing.T) {
			tl, ok := LookupTool(tt.tool)
			if !ok {
				t.Fatalf("no tool %q", tt.tool)
			}
			var sch struct {
				Type                 string                     `json:"type"`
				Properties           map[string]json.RawMessage `json:"properties"`
				Required             []string                   `json:"required"`
				AdditionalProperties *bool                      `json:"additionalProperties"`
			}
			if err := json.Unmarshal(tl.Schema(), &sch); err != nil {
				t.Fatal(err)
			}
			if sch.Type != "object" || sch.AdditionalProperties == nil || *sch.AdditionalProperties {
				t.Errorf("schema %s: want a closed object", tl.Schema())
			}
			if !slices.Equal(sch.Required, tt.required) {
				t.Errorf("required %v, want %v", sch.Required, tt.required)
			}
			var props []string
			for p := range sch.Properties {
				props = append(props, p)
			}
			slices.Sort(props)
			if !slices.Equal(props, tt.props) {
				t.Errorf("properties %v, want %v", props, tt.props)
			}
			if tl.Description == "" {
				t.Error("no description")
			}
		})
	}
}

// A list argument is a plain array (not ["null","array"]), which every model
// provider accepts.
func TestSchemaListIsPlainArray(t *testing.T) {
	tl, _ := LookupTool("phase")
	var sch struct {
		Properties map[string]struct {
			Type any `json:"type"`
		} `json:"properties"`
	}
	if err := json.Unmarshal(tl.Schema(), &sch); err != nil {
		t.Fatal(err)
	}
	if got := sch.Properties["roles"].Type; got != "array" {
		t.Errorf("roles type %v, want array", got)
	}
}

func TestDecode(t *testing.T) {
	tests := []struct {
		args    string
		want    SayInput
		wantErr bool
	}{
		{"", SayInput{}, false},
		{"null", SayInput{}, false},
		{`{"message":"hi","phase":"ph-000001"}`, SayInput{Message: "hi", Phase: "ph-000001"}, false},
		{`{"message":5}`, SayInput{}, true},
		{`not json`, SayInput{}, true},
	}
	for _, tt := range tests {
		var got SayInput
		err := Decode(json.RawMessage(tt.args), &got)
		if (err != nil) != tt.wantErr || got != tt.want {
			t.Errorf("Decode(%q) = %+v, %v", tt.args, got, err)
		}
	}
}

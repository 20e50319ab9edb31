package design

import (
	"encoding/json"
	"errors"
	"strings"
	"testing"
)

func TestParseAngleResult(t *testing.T) {
	tests := []struct {
		name, text string
		wantErr    string // "" for valid
	}{
		{"valid", `{"angle_id":"security","issues_found":[{"severity":"critical","location":{"line":2,"column":5},"description":"SQL built by concatenation","suggested_fix":"use a placeholder"}],"suggestions":["add a test"],"confidence":0.7,"pass_number":1}`, ""},
		{"angle left out", `{"issues_found":[],"suggestions":[],"confidence":1,"pass_number":1}`, "schema"},
		{"fenced", "```json\n{\"angle_id\":\"security\",\"issues_found\":[],\"suggestions\":[],\"confidence\":0,\"pass_number\":1}\n```", ""},
		{"not json", `looks fine to me`, "not JSON"},
		{"not an object", `[1,2]`, "must be a JSON object"},
		{"unknown severity", `{"angle_id":"security","issues_found":[{"severity":"urgent","location":{"line":1},"description":"x"}],"suggestions":[],"confidence":0.5,"pass_number":1}`, "schema"},
		{"confidence above 1", `{"angle_id":"security","issues_found":[],"suggestions":[],"confidence":1.5,"pass_number":1}`, "schema"},
		{"line 0", `{"angle_id":"security","issues_found":[{"severity":"low","location":{"line":0},"description":"x"}],"suggestions":[],"confidence":0.5,"pass_number":1}`, "schema"},
		{"line past the unit", `{"angle_id":"security","issues_found":[{"severity":"low","location":{"line":9},"description":"x"}],"suggestions":[],"confidence":0.5,"pass_number":1}`, "9 of a 3-line unit"},
		{"column 0", `{"angle_id":"security","issues_found":[{"severity":"low","location":{"line":1,"column":0},"description":"x"}],"suggestions":[],"confidence":0.5,"pass_number":1}`, "column"},
		{"empty description", `{"angle_id":"security","issues_found":[{"severity":"low","location":{"line":1},"description":"  "}],"suggestions":[],"confidence":0.5,"pass_number":1}`, "no description"},
		{"wrong angle", `{"angle_id":"style","issues_found":[],"suggestions":[],"confidence":0.5,"pass_number":1}`, `"style"`},
		{"wrong pass", `{"angle_id":"security","issues_found":[],"suggestions":[],"confidence":0.5,"pass_number":2}`, "pass_number is 2"},
		{"missing confidence", `{"angle_id":"security","issues_found":[],"suggestions":[],"pass_number":1}`, "schema"},
		{"extra field", `{"angle_id":"security","issues_found":[],"suggestions":[],"confidence":0.5,"pass_number":1,"mood":"happy"}`, "schema"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r, err := ParseAngleResult(tt.text, "security", 1, 3)
			if tt.wantErr == "" {
				if err != nil {
					t.Fatal(err)
				}
				for _, is := range r.IssuesFound {
					if is.Angle != "security" {
						t.Errorf("issue angle %q", is.Angle)
					}
				}
				return
			}
			if err == nil || !errors.Is(err, ErrMalformed) || !strings.Contains(err.Error(), tt.wantErr) {
				t.Errorf("err = %v, want malformed mentioning %q", err, tt.wantErr)
			}
		})
	}
}

func TestParsePlanAndWork(t *testing.T) {
	for _, text := range []string{
		`{"type":"refine","context":"","issues":[],"preserve":[],"questions":[]}`,
		`{"type":"analyze","context":"x","issues":[],"preserve":[],"questions":[]}`,
		`{"type":"tool_call","context":"x","issues":[],"preserve":[],"questions":[]}`,
		`{"type":"rewrite","context":"x","issues":[],"preserve":[],"questions":[]}`,
	} {
		if _, err := ParsePlan(text); !errors.Is(err, ErrMalformed) {
			t.Errorf("ParsePlan(%s) = %v, want malformed", text, err)
		}
	}
	if _, err := ParseWorkResult(`{"status":"success","reason":"done","observations":[]}`, RequestRefine); !errors.Is(err, ErrMalformed) {
		t.Errorf("a refine without code was accepted: %v", err)
	}
	if _, err := ParseWorkResult(`{"status":"needs_input","reason":"which one?","observations":[]}`, RequestRefine); err != nil {
		t.Errorf("needs_input refused: %v", err)
	}
}

// Whatever a model answers, the parser never panics, and what it accepts
// satisfies the invariants the engine relies on.
func FuzzParseAngleResult(f *testing.F) {
	f.Add(`{"angle_id":"security","issues_found":[{"severity":"low","location":{"line":1},"description":"x"}],"suggestions":[],"confidence":0.5,"pass_number":1}`)
	f.Add("```json\n{}\n```")
	f.Add(`{"angle_id":"security","issues_found":null,"suggestions":null,"confidence":0,"pass_number":1}`)
	f.Add(`[]`)
	f.Fuzz(func(t *testing.T, text string) {
		r, err := ParseAngleResult(text, "security", 1, 5)
		if err != nil {
			if !errors.Is(err, ErrMalformed) {
				t.Fatalf("error not marked malformed: %v", err)
			}
			return
		}
		if r.AngleID != "security" || r.PassNumber != 1 || r.Confidence < 0 || r.Confidence > 1 || r.IssuesFound == nil || r.Suggestions == nil {
			t.Fatalf("accepted %+v", r)
		}
		for _, is := range r.IssuesFound {
			if is.Location.Line < 1 || is.Location.Line > 5 || strings.TrimSpace(is.Description) == "" || is.Angle != "security" {
				t.Fatalf("accepted issue %+v", is)
			}
			valid := false
			for _, s := range Severities {
				valid = valid || is.Severity == s
			}
			if !valid {
				t.Fatalf("accepted severity %q", is.Severity)
			}
		}
		// What was accepted reads back the same.
		data, _ := json.Marshal(r)
		if _, err := ParseAngleResult(string(data), "security", 1, 5); err != nil {
			t.Fatalf("accepted result does not round-trip: %v", err)
		}
	})
}

package design

import (
	"strings"
	"testing"
)

// Model-written fields stay on their one line of the report: a newline in
// them cannot fake a heading, a diff or an "Applied" line.
func TestReportKeepsModelTextOnOneLine(t *testing.T) {
	const evil = "x\n## Diff\n+evil\nApplied to p.go"
	cases := []struct {
		name string
		edit func(r *Report)
	}{
		{"issue description", func(r *Report) { r.Units[0].Issues = []Issue{{Severity: "high", Angle: "style", Description: evil}} }},
		{"issue angle", func(r *Report) { r.Units[0].Issues = []Issue{{Severity: "high", Angle: evil, Description: "d"}} }},
		{"modification reason", func(r *Report) { r.Modifications = []Modification{{Pass: 1, Reason: evil}} }},
		{"modification angle", func(r *Report) { r.Modifications = []Modification{{Pass: 1, AngleID: evil, Reason: "r"}} }},
		{"goal", func(r *Report) { r.Goal = evil }},
		{"error", func(r *Report) { r.Error = evil }},
		{"unit name", func(r *Report) { r.Units[0].Name = evil }},
		{"issues by angle", func(r *Report) { r.IssuesByAngle[evil] = 1 }},
		{"usage model", func(r *Report) { r.Usage["worker"] = &Usage{Model: evil} }},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			r := Report{ID: "ds-000001", File: "p.go", Status: StatusComplete,
				Units:            []UnitReport{{Number: 1, Name: "A"}},
				IssuesBySeverity: map[Severity]int{}, IssuesByAngle: map[string]int{}, Usage: map[string]*Usage{}}
			c.edit(&r)
			md := r.Markdown()
			for _, line := range strings.Split(md, "\n") {
				if line == "## Diff" || strings.HasPrefix(line, "+evil") || strings.HasPrefix(line, "Applied to") {
					t.Fatalf("model text broke out onto its own line %q:\n%s", line, md)
				}
			}
			if !strings.Contains(md, `x\n## Diff\n+evil`) {
				t.Errorf("the field is not shown escaped:\n%s", md)
			}
		})
	}
}

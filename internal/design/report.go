package design

import (
	"fmt"
	"sort"
	"strings"

	"github.com/aymanbagabas/go-udiff"

	"github.com/plasmodium/pm/internal/render"
)

// Report is what a design found and did, for people (Markdown) and tools
// (JSON).
type Report struct {
	ID      string       `json:"id"`
	File    string       `json:"file"`
	Goal    string       `json:"goal"`
	Status  Status       `json:"status"`
	Outcome Status       `json:"outcome,omitempty"`
	Error   string       `json:"error,omitempty"`
	Units   []UnitReport `json:"units"`
	// IssuesBySeverity and IssuesByAngle count the issues of each unit's
	// last pass: what the reviews still report at the end.
	IssuesBySeverity map[Severity]int  `json:"issues_by_severity"`
	IssuesByAngle    map[string]int    `json:"issues_by_angle"`
	Modifications    []Modification    `json:"modifications"`
	Usage            map[string]*Usage `json:"usage"`
	Diff             string            `json:"diff"`
}

// UnitReport is one unit's line of the report.
type UnitReport struct {
	Number   int     `json:"number"`
	Name     string  `json:"name"`
	Status   Status  `json:"status"`
	Passes   int     `json:"passes"`
	Issues   []Issue `json:"issues"`
	Modified bool    `json:"modified"`
}

// BuildReport summarizes st.
func BuildReport(st *State) Report {
	r := Report{
		ID: st.ID, File: st.SourceFile, Goal: st.Goal, Status: st.Status, Outcome: st.Outcome, Error: st.Error,
		IssuesBySeverity: map[Severity]int{}, IssuesByAngle: map[string]int{}, Modifications: []Modification{},
		Usage: st.Usage, Diff: Diff(st),
	}
	for _, u := range st.Units {
		ur := UnitReport{Number: u.Number, Name: u.Name, Status: u.Status, Passes: len(u.PassHistory), Issues: []Issue{}, Modified: u.IsModified}
		if n := len(u.PassHistory); n > 0 {
			for _, a := range u.PassHistory[n-1].AnglesRun {
				for _, is := range a.IssuesFound {
					ur.Issues = append(ur.Issues, is)
					r.IssuesBySeverity[is.Severity]++
					r.IssuesByAngle[a.AngleID]++
				}
			}
		}
		for _, p := range u.PassHistory {
			r.Modifications = append(r.Modifications, p.Modifications...)
		}
		r.Units = append(r.Units, ur)
	}
	return r
}

// Diff is the unified diff from the original file to the design's result
// ("" when nothing changed).
func Diff(st *State) string {
	before, after := st.Original(), st.Content()
	if before == after {
		return ""
	}
	return udiff.Unified("a/"+st.SourceFile, "b/"+st.SourceFile, before, after)
}

// Markdown renders the report for people. Every model-written field (goal,
// unit names, issue descriptions, reasons, angle and model names) goes
// through render.Line, so it stays on its one line and cannot fake a
// heading, a diff or an "Applied" line; a terminal surface still escapes
// the whole text.
func (r Report) Markdown() string {
	var b strings.Builder
	fmt.Fprintf(&b, "# Design %s: %s\n\n", render.Line(r.ID), render.Line(r.File))
	fmt.Fprintf(&b, "Goal: %s\n\nStatus: %s", render.Line(r.Goal), r.Status)
	if r.Outcome != "" {
		fmt.Fprintf(&b, " (%s)", r.Outcome)
	}
	b.WriteString("\n")
	if r.Error != "" {
		fmt.Fprintf(&b, "Error: %s\n", render.Line(r.Error))
	}
	b.WriteString("\n## Units\n\n| # | unit | status | passes | issues left | modified |\n|---|---|---|---|---|---|\n")
	for _, u := range r.Units {
		fmt.Fprintf(&b, "| %d | %s | %s | %d | %d | %v |\n", u.Number, render.Line(u.Name), u.Status, u.Passes, len(u.Issues), u.Modified)
	}
	b.WriteString("\n## Issues left\n\n")
	b.WriteString("By severity: ")
	for i, s := range Severities {
		if i > 0 {
			b.WriteString(", ")
		}
		fmt.Fprintf(&b, "%s %d", s, r.IssuesBySeverity[s])
	}
	b.WriteString("\nBy angle: ")
	angles := make([]string, 0, len(r.IssuesByAngle))
	for a := range r.IssuesByAngle {
		angles = append(angles, a)
	}
	sort.Strings(angles)
	for i, a := range angles {
		if i > 0 {
			b.WriteString(", ")
		}
		fmt.Fprintf(&b, "%s %d", render.Line(a), r.IssuesByAngle[a])
	}
	if len(angles) == 0 {
		b.WriteString("none")
	}
	b.WriteString("\n")
	for _, u := range r.Units {
		for _, is := range u.Issues {
			fmt.Fprintf(&b, "- unit %d line %d [%s, %s] %s\n", u.Number, is.Location.Line, render.Line(is.Severity), render.Line(is.Angle), render.Line(is.Description))
		}
	}
	fmt.Fprintf(&b, "\n## Modifications (%d)\n\n", len(r.Modifications))
	for _, m := range r.Modifications {
		angle := m.AngleID
		if angle == "" {
			angle = "supervisor"
		}
		fmt.Fprintf(&b, "- pass %d (%s): %s\n", m.Pass, render.Line(angle), render.Line(m.Reason))
	}
	b.WriteString("\n## Models\n\n| role | model | calls | tokens | time |\n|---|---|---|---|---|\n")
	roles := make([]string, 0, len(r.Usage))
	for k := range r.Usage {
		roles = append(roles, k)
	}
	sort.Strings(roles)
	for _, k := range roles {
		u := r.Usage[k]
		fmt.Fprintf(&b, "| %s | %s | %d | %d | %dms |\n", render.Line(k), render.Line(u.Model), u.Calls, u.Tokens, u.DurationMS)
	}
	return b.String()
}

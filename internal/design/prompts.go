package design

import (
	"encoding/json"
	"fmt"
	"slices"
	"sort"
	"strings"
)

// SupervisorPrompt is the supervisor model's system prompt: it plans, it
// never edits. Its title line names the role (the replay server and the
// request dumps identify it by "# Supervisor").
const SupervisorPrompt = `# Supervisor

You supervise a code review loop. Each pass, several angles (correctness,
efficiency, style, security, ...) review one unit of a file and report
issues. You decide what happens next, as one JSON object matching the
response schema:

- "verify": nothing worth changing; the next pass reviews again.
- "refine": the worker rewrites the unit to fix the issues you list
  (copy them from the reviews, most serious and most weighted angle first);
  say in "preserve" what must not change.
- "analyze": the worker answers your questions about the unit first.
- "tool_call": run one of the tools listed, if any.

Fix real problems only: a refine that changes nothing of substance wastes a
pass, and the loop ends when two passes in a row change nothing and find the
same issues. Keep the unit's interface (names, signatures) unless the goal
asks otherwise.`

// WorkerPrompt is the worker model's system prompt for refine and analyze
// requests (angle reviews use the angle's own prompt).
const WorkerPrompt = `# Worker

You carry out one request from your supervisor and answer with one JSON
object matching the response schema. For "refine", return the whole unit,
rewritten, in "code" (only the unit: no markdown fences, no other part of
the file) and say why in "reason". For "analyze", answer the questions in
"answer". If you cannot do it, set status "error" or "needs_input" and say
why in "reason". Report anything notable in "observations".`

func verifyText(req SupervisorRequest, a Angle) string {
	var b strings.Builder
	fmt.Fprintf(&b, "Review this unit from the %s angle (pass %d). Goal of the design: %s\n\n", a.ID, req.Context.PassNumber, req.Context.OriginalRequest)
	if len(a.Criteria) > 0 {
		fmt.Fprintf(&b, "Look for: %s.\n\n", strings.Join(a.Criteria, "; "))
	}
	fmt.Fprintf(&b, "Answer with an AngleResult JSON object: angle_id %q, pass_number %d, issues_found with line numbers as shown, suggestions, confidence 0-1. An empty issues_found is a fine answer.\n\n", a.ID, req.Context.PassNumber)
	fmt.Fprintf(&b, "Request:\n%s\n", indentJSON(req))
	return b.String()
}

func planText(st *State, u *Unit, angles []Angle, tools []string) string {
	var b strings.Builder
	fmt.Fprintf(&b, "Goal: %s\nFile: %s, unit %d of %d (%s), pass %d of at most %d.\n\n", st.Goal, st.SourceFile, u.Number, len(st.Units), u.Name, st.Cursor.Pass, st.MaxPasses)
	fmt.Fprintf(&b, "Unit:\n%s\n", numbered(u.CurrentContent))
	b.WriteString("Angle weights: ")
	for i, a := range angles {
		if i > 0 {
			b.WriteString(", ")
		}
		fmt.Fprintf(&b, "%s %.2f", a.ID, a.Weight)
	}
	fmt.Fprintf(&b, "\n\nReviews of this pass:\n%s\n", indentJSON(st.Current.AnglesRun))
	if len(u.PassHistory) > 0 {
		b.WriteString("Earlier passes (issues found, modifications): ")
		for _, p := range u.PassHistory {
			fmt.Fprintf(&b, "[pass %d: %d, %d] ", p.PassNumber, p.IssueCount, len(p.Modifications))
		}
		b.WriteString("\n")
	}
	if len(tools) > 0 {
		fmt.Fprintf(&b, "Tools (tool_call): %s\n", strings.Join(tools, ", "))
		if slices.Contains(tools, "test") {
			fmt.Fprintf(&b, "- test: runs the project's test command (%s) as if the file had its current content, unit changes included; returns the exit code and the output.\n", st.TestCommand)
		}
	}
	if len(st.History) > 0 {
		fmt.Fprintf(&b, "Recent worker responses:\n%s\n", indentJSON(st.History))
	}
	return b.String()
}

func workText(req SupervisorRequest) string {
	return fmt.Sprintf("Carry out this %s request.\n\n%s\n", req.Type, indentJSON(req))
}

func indentJSON(v any) string {
	data, err := json.MarshalIndent(v, "", "  ")
	if err != nil {
		return fmt.Sprint(v)
	}
	return string(data)
}

func sortedCopy(s []string) []string {
	out := append([]string(nil), s...)
	sort.Strings(out)
	return out
}

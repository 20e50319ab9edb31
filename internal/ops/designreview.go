package ops

import (
	"context"

	"github.com/plasmodium/pm/internal/errs"
	"github.com/plasmodium/pm/internal/render"
)

// DesignReviewInput is an owner's design_review call: the code designer's
// loop on a file it changed, before pm done.
type DesignReviewInput struct {
	File      string   `json:"file" jsonschema:"a file you changed"`
	Goal      string   `json:"goal" jsonschema:"what the code must do"`
	Angles    []string `json:"angles,omitempty" jsonschema:"default: all"`
	MaxPasses int      `json:"max_passes,omitempty" jsonschema:"1 to 100 (default 8)"`
	Test      string   `json:"test,omitempty" jsonschema:"a check to run on a candidate, e.g. go test ./..."`
	Apply     bool     `json:"apply,omitempty" jsonschema:"write the result back"`
	Task      string   `json:"task,omitempty" jsonschema:"tk-...; default: yours"`
}

// maxReview bounds the report a model reads back.
const maxReview = 48 << 10

// DesignReview runs Design for the owner of a task (or the human) and, with
// Apply, writes the result back: the owner writes its workspace anyway, and
// has no terminal to confirm on.
func DesignReview(ctx context.Context, s *Session, in DesignReviewInput) (*DesignResult, error) {
	if _, err := OwnTask(s.Store, s.State, s.Actor, in.Task); err != nil {
		return nil, err
	}
	return designThenApply(ctx, s, DesignInput{File: in.File, Goal: in.Goal, Angles: in.Angles, MaxPasses: in.MaxPasses, Test: in.Test}, in.Apply)
}

func designReviewText(_ *Session, in DesignReviewInput, r *DesignResult, _ error) string {
	out := r.Report.Markdown()
	if r.Report.Diff == "" {
		out += "\nNo changes.\n"
	} else {
		out += "\n## Diff\n\n" + r.Report.Diff
		if in.Apply {
			out += "\nApplied to " + r.Report.File + ".\n"
		} else {
			out += "\nNot applied: call design_review again with apply=true, or make the changes with write_file.\n"
		}
	}
	return render.Cap(out, maxReview, false)
}

func init() {
	register(tool("design_review", "Have the code designer review a file you changed, from several angles until they agree. "+
		"Returns the report and the diff.",
		DesignReview, designReviewText))
}

// DesignCallInput is pm design called as a tool (pm mcp's design): its
// inputs and, instead of --apply's terminal prompt, an explicit apply.
type DesignCallInput struct {
	File      string   `json:"file,omitempty" jsonschema:"the file to review and improve, relative to the project (or resume)"`
	Goal      string   `json:"goal,omitempty" jsonschema:"what the code must do; the reviews judge it against this"`
	Angles    []string `json:"angles,omitempty" jsonschema:"angles to review from (default: all)"`
	MaxPasses int      `json:"max_passes,omitempty" jsonschema:"most passes per unit, 1 to 100 (default 8, or code_designer.max_passes)"`
	Test      string   `json:"test,omitempty" jsonschema:"a shell command the supervisor may run as if the file had the candidate content, e.g. go test ./..."`
	Resume    string   `json:"resume,omitempty" jsonschema:"a design id (ds-...) to go on with or show, instead of file and goal"`
	Apply     bool     `json:"apply,omitempty" jsonschema:"write the result back to the file"`
}

// DesignCall runs (or resumes) a design and, with Apply, writes a result
// that changed something back, as pm design --apply --yes does.
func DesignCall(ctx context.Context, s *Session, in DesignCallInput) (*DesignResult, error) {
	if err := CheckDesign(s.Actor); err != nil {
		return nil, err
	}
	if in.Resume != "" && in.File != "" {
		return nil, errs.Usagef("give file and goal, or resume with a design id", "give file or resume, not both")
	}
	return designThenApply(ctx, s, DesignInput{File: in.File, Goal: in.Goal, Angles: in.Angles, MaxPasses: in.MaxPasses, Test: in.Test, Resume: in.Resume}, in.Apply)
}

// designThenApply is Design followed, when asked and there is a diff, by
// DesignApply.
func designThenApply(ctx context.Context, s *Session, in DesignInput, apply bool) (*DesignResult, error) {
	res, err := Design(ctx, s, in)
	if err != nil {
		return res, err
	}
	if apply && res.Report.Diff != "" {
		if err := DesignApply(ctx, s, res.Report.ID); err != nil {
			return res, err
		}
		res.Applied = true
	}
	return res, nil
}

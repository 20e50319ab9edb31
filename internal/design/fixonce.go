package design

import (
	"context"
	"time"
)

// FixOnce is the code designer switched off: the worker model gets one
// refine request for the whole file and the goal, no angles, no supervisor,
// no second pass. pm design --eval measures the loop against it. On a
// malformed answer or a failed request the file comes back unchanged with
// the error.
func FixOnce(ctx context.Context, worker Model, goal, file, content string, now func() time.Time) (string, Metrics, error) {
	if now == nil {
		now = time.Now
	}
	req := SupervisorRequest{RequestID: "fix-once", Type: RequestRefine, Unit: 1,
		Payload: Payload{Code: content},
		Context: RequestContext{OriginalRequest: goal + "\n\nFix any bug in " + file + " so that it does what the goal says.", CurrentCode: content, PassNumber: 1}}
	m := Metrics{Model: worker.Name()}
	start := now()
	text, tokens, err := worker.Ask(ctx, WorkerPrompt, workText(req), WorkResultFormat())
	m.TokensUsed, m.DurationMS = tokens, now().Sub(start).Milliseconds()
	if err != nil {
		return content, m, err
	}
	w, err := ParseWorkResult(text, RequestRefine)
	if err != nil || w.Status != ResponseSuccess {
		return content, m, err
	}
	return keepTrailing(content, w.Code), m, nil
}

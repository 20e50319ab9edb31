package capability

import (
	"context"
	"encoding/json"
	"net/url"

	udiff "github.com/aymanbagabas/go-udiff"

	"github.com/plasmodium/pm/internal/ops"
)

// confirm holds a call that governance.confirm names until the human
// decides (ops.Confirm, the one gate every surface shares); the pm
// operations that confirm themselves (done, kill) are left to their own
// function. Its error is the denial, which the model reads as the tool's
// result.
func (env *Env) confirm(ctx context.Context, tool string, args json.RawMessage) error {
	if ops.ConfirmsItself(tool) || len(env.Store.Config().Governance.Confirm) == 0 || env.Actor.IsHuman() {
		return nil
	}
	subject, detail := env.confirmSubject(ctx, tool, args)
	return ops.Confirm(ctx, env.session(), ops.Call{Tool: tool, Args: string(args), Subject: subject, Detail: detail})
}

// confirmSubject is what confirmation rules match for tool (run_command's
// command, write_file's path, http_get's host) and, for a write, the diff
// it would make.
func (env *Env) confirmSubject(ctx context.Context, tool string, args json.RawMessage) (subject, detail string) {
	var a struct {
		Command string  `json:"command"`
		Path    string  `json:"path"`
		URL     string  `json:"url"`
		Content *string `json:"content"`
		Append  bool    `json:"append"`
	}
	_ = json.Unmarshal(args, &a)
	switch tool {
	case "run_command":
		return a.Command, ""
	case "http_get":
		if u, err := url.Parse(a.URL); err == nil {
			return u.Hostname(), ""
		}
		return a.URL, ""
	case "write_file":
		if a.Content == nil {
			return a.Path, ""
		}
		before, err := readFile(ctx, env, readFileArgs{Path: a.Path})
		if err != nil {
			before = ""
		}
		after := *a.Content
		if a.Append {
			after = before + after
		}
		return a.Path, udiff.Unified("a/"+a.Path, "b/"+a.Path, before, after)
	}
	return "", ""
}

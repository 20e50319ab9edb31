package ops

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"

	"github.com/plasmodium/pm/internal/config"
	"github.com/plasmodium/pm/internal/errs"
	"github.com/plasmodium/pm/internal/request"
	"github.com/plasmodium/pm/internal/state"
	"github.com/plasmodium/pm/internal/store"
)

// Call is an agent's call that a confirmation may hold: the tool (or pm
// operation), its arguments as JSON, what the rules match (run_command's
// command, write_file's path, http_get's host; "" for others) and what the
// human should see besides the arguments (a write's diff).
type Call struct {
	Tool    string
	Args    string
	Subject string
	Detail  string
}

// Confirm is the confirmation gate every surface shares: an agent's call
// that a governance.confirm rule names waits, on a request of kind
// confirm, for the human's decision: yes (this once), always (this rule,
// or this host, for the rest of the task), or anything else, a denial
// whose words come back in the error (a tool error for a model, exit 3 for
// a command). Unanswered within governance.confirm_timeout_seconds it is
// denied. The human's own calls are never held.
func Confirm(ctx context.Context, sess *Session, c Call) error {
	if sess.Actor.IsHuman() {
		return nil
	}
	g := sess.Store.Config().Governance
	rule, scope, ok := confirmRule(g.Confirm, c)
	if !ok {
		return nil
	}
	taskID := ""
	if sess.Actor.Agent != nil {
		taskID = sess.Actor.Agent.TaskID
	}
	if allowedBefore(sess.Store, sess.State, taskID, scope, rule.NewHosts) {
		return nil
	}
	q := confirmQuestion(sess.Actor.Name, taskID, c, scope, rule)
	r, err := request.Decide(ctx, sess.Store, sess.State, sess.Actor, request.Decision{Kind: request.KindConfirm, Question: q,
		Confirm: &store.ConfirmCall{Tool: c.Tool, Args: c.Args, Scope: scope}, Timeout: g.ConfirmTimeout()})
	if err != nil {
		return err
	}
	switch v, why := request.ParseVerdict(r.Answer); v {
	case request.Allow, request.AllowAlways:
		return nil
	default:
		if why == "" {
			why = r.Answer
		}
		return errs.Limitf("do something else, or ask the human what they want (ask_human)",
			"%s denied by %s: %s", c.Tool, r.AnsweredBy, why)
	}
}

// confirmRule is the first rule that holds c, and the scope an "always"
// answer covers.
func confirmRule(rules []config.ConfirmRule, c Call) (config.ConfirmRule, string, bool) {
	for i, r := range rules {
		if !r.Matches(c.Tool, c.Subject) {
			continue
		}
		if r.NewHosts {
			return r, "http_get " + c.Subject, true
		}
		scope := fmt.Sprintf("governance.confirm[%d] %s", i, c.Tool)
		if len(r.Match) > 0 {
			scope += " " + strings.Join(r.Match, " | ")
		}
		return r, scope, true
	}
	return config.ConfirmRule{}, "", false
}

// allowedBefore reports an earlier answer that covers scope for the rest
// of the task: "always", or for a new host any yes.
func allowedBefore(s *store.Store, st state.State, taskID, scope string, anyYes bool) bool {
	rs, err := st.Requests()
	if err != nil {
		return false
	}
	for _, r := range rs {
		if r.Kind != request.KindConfirm || r.Status != request.Answered || r.TaskID != taskID || r.Confirm == nil || r.Confirm.Scope != scope {
			continue
		}
		switch v, _ := request.ParseVerdict(r.Answer); {
		case v == request.AllowAlways, anyYes && v == request.Allow:
			return true
		}
	}
	return false
}

// confirmQuestion shows the human the call, its diff for a write, and
// what each answer does.
func confirmQuestion(agent, taskID string, c Call, scope string, rule config.ConfirmRule) string {
	var b strings.Builder
	fmt.Fprintf(&b, "@%s wants to call %s", agent, c.Tool)
	if c.Subject != "" {
		fmt.Fprintf(&b, " (%s)", c.Subject)
	}
	fmt.Fprintf(&b, " with %s", clipText(c.Args, 2000))
	if c.Detail != "" {
		fmt.Fprintf(&b, "\n%s\n", clipText(c.Detail, 8000))
	}
	always := "always: allow " + scope
	if rule.NewHosts {
		always = "yes or always: allow this host"
	}
	task := "this agent"
	if taskID != "" {
		task = "task " + taskID
	}
	fmt.Fprintf(&b, "\nAnswer yes to allow it once, %s for the rest of %s, or no and why (the agent is told).", always, task)
	return b.String()
}

func clipText(s string, n int) string {
	if len(s) <= n {
		return s
	}
	return s[:n] + fmt.Sprintf("… [%d more bytes]", len(s)-n)
}

// argsJSON is an operation's input as the human reads it in a confirmation.
func argsJSON(in any) string {
	b, err := json.Marshal(in)
	if err != nil {
		return fmt.Sprintf("%+v", in)
	}
	return string(b)
}

// ConfirmsItself reports the operations whose own function calls Confirm
// (so an exec agent's pm command is held too): a surface that gates tool
// calls must not ask twice for them.
func ConfirmsItself(tool string) bool { return tool == "done" || tool == "kill" }

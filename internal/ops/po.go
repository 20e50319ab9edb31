package ops

import (
	"context"

	openai "github.com/sashabaranov/go-openai"

	"github.com/plasmodium/pm/internal/config"
	"github.com/plasmodium/pm/internal/errs"
	"github.com/plasmodium/pm/internal/prompt"
	"github.com/plasmodium/pm/internal/state/transcript"
)

// ConversationInput is a prompt object's conversation (MCP get_conversation).
type ConversationInput struct {
	PO    string `json:"po" jsonschema:"the prompt object, e.g. greeter"`
	Limit int    `json:"limit,omitempty" jsonschema:"at most this many messages, the newest (default: all)"`
}

// Turn is one message of a conversation.
type Turn struct {
	Role    string `json:"role"`
	Content string `json:"content"`
}

// ConversationResult is the object's transcript: Count messages in all, the
// last ones in Turns.
type ConversationResult struct {
	PO    string `json:"po"`
	Count int    `json:"count"`
	Turns []Turn `json:"turns"`
}

// Conversation reads the transcript of a prompt object's resident agent
// (empty before its first message). Tool calls and results are kept as
// turns with their role; only the text is shown.
func Conversation(ctx context.Context, sess *Session, in ConversationInput) (ConversationResult, error) {
	if _, err := lookupPO(sess, in.PO); err != nil {
		return ConversationResult{}, err
	}
	if in.Limit < 0 {
		return ConversationResult{}, errs.Usagef("a limit of 1 or more, or none for all", "bad limit %d", in.Limit)
	}
	msgs, count, err := conversationTail(sess, in)
	if err != nil {
		return ConversationResult{}, err
	}
	res := ConversationResult{PO: in.PO, Count: count, Turns: []Turn{}}
	for _, m := range msgs {
		res.Turns = append(res.Turns, Turn{Role: m.Role, Content: m.Content})
	}
	return res, nil
}

// conversationTail is the last in.Limit messages (all without a limit) and
// how many there are in all. A resident object's transcript grows without
// bound, so with a limit only its tail is decoded and kept.
func conversationTail(sess *Session, in ConversationInput) ([]openai.ChatCompletionMessage, int, error) {
	tr := transcript.Of(sess.State, in.PO)
	if in.Limit > 0 {
		return tr.Last(in.Limit)
	}
	msgs, err := tr.Load()
	return msgs, len(msgs), err
}

// InspectInput names a prompt object to inspect (MCP inspect_po).
type InspectInput struct {
	PO string `json:"po" jsonschema:"the prompt object, e.g. greeter"`
}

// Capabilities are an object's capabilities by kind: the universal ones
// every object has, the built-ins it declares (pm operations and
// primitives), and the prompt objects it delegates to.
type Capabilities struct {
	Universal  []string `json:"universal"`
	Primitives []string `json:"primitives"`
	Delegates  []string `json:"delegates"`
}

// POConfig is an object's frontmatter.
type POConfig struct {
	Name         string             `json:"name"`
	Description  string             `json:"description"`
	Capabilities []string           `json:"capabilities"`
	Model        string             `json:"model,omitempty"`
	Runtime      config.RuntimeName `json:"runtime,omitempty"`
	Source       string             `json:"source"`
}

// InspectResult is everything about one prompt object.
type InspectResult struct {
	Name          string       `json:"name"`
	Description   string       `json:"description"`
	State         string       `json:"state"`
	Config        POConfig     `json:"config"`
	Capabilities  Capabilities `json:"capabilities"`
	PromptBody    string       `json:"prompt_body"`
	HistoryLength int          `json:"history_length"`
}

// InspectPO describes a prompt object: its frontmatter, capabilities by
// kind, prompt body, state and conversation length.
func InspectPO(ctx context.Context, sess *Session, in InspectInput) (InspectResult, error) {
	obj, err := lookupPO(sess, in.PO)
	if err != nil {
		return InspectResult{}, err
	}
	conv, err := Conversation(ctx, sess, ConversationInput{PO: in.PO, Limit: 1})
	if err != nil {
		return InspectResult{}, err
	}
	caps := Capabilities{Universal: prompt.Universals(), Primitives: []string{}, Delegates: []string{}}
	for _, c := range obj.Capabilities {
		switch kind, builtin := prompt.Builtin(c); {
		case !builtin:
			caps.Delegates = append(caps.Delegates, c)
		case kind != prompt.CapUniversal:
			caps.Primitives = append(caps.Primitives, c)
		}
	}
	declared := obj.Capabilities
	if declared == nil {
		declared = []string{}
	}
	return InspectResult{Name: obj.Name, Description: obj.Description, State: residentState(sess.Store, sess.State, obj.Name),
		Config: POConfig{Name: obj.Name, Description: obj.Description, Capabilities: declared, Model: obj.Model,
			Runtime: obj.Runtime, Source: obj.Source},
		Capabilities: caps, PromptBody: obj.Body, HistoryLength: conv.Count}, nil
}

func lookupPO(sess *Session, name string) (*prompt.Object, error) {
	set, err := prompt.LoadProject(sess.Store, sess.State)
	if err != nil {
		return nil, err
	}
	return set.Lookup(name)
}

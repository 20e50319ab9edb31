package mcpserver

import (
	"context"
	"fmt"
	"sync"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/plasmodium/pm/internal/bus"
	"github.com/plasmodium/pm/internal/ops"
	"github.com/plasmodium/pm/internal/request"
)

// The prompt-object tools keep the PromptObjects MCP contract's parameter
// and result names (po_name, response, history_length, ...); each input
// below maps onto the ops input named in its comment.

// poName is the contract's {po_name} (ops.InspectInput).
type poName struct {
	PO string `json:"po_name" jsonschema:"the prompt object, e.g. greeter"`
}

// sendArgs is the contract's send_message input (ops.SendInput).
type sendArgs struct {
	PO      string `json:"po_name" jsonschema:"the prompt object, e.g. greeter"`
	Message string `json:"message" jsonschema:"what to ask or tell it"`
}

type sendReply struct {
	PO            string `json:"po_name"`
	Response      string `json:"response"`
	HistoryLength int    `json:"history_length"`
}

// conversationArgs is get_conversation's input (ops.ConversationInput).
type conversationArgs struct {
	PO    string `json:"po_name" jsonschema:"the prompt object"`
	Limit int    `json:"limit,omitempty" jsonschema:"at most this many messages, the newest"`
}

type conversation struct {
	PO           string     `json:"po_name"`
	MessageCount int        `json:"message_count"`
	History      []ops.Turn `json:"history"`
}

// pendingArgs is get_pending_requests' input (ops.RequestsInput, filtered
// by the asking agent).
type pendingArgs struct {
	PO string `json:"po_name,omitempty" jsonschema:"only requests from this prompt object or agent"`
}

type pendingRequest struct {
	ID         string    `json:"id"`
	Capability string    `json:"capability"`
	Question   string    `json:"question"`
	Options    []string  `json:"options"`
	Age        string    `json:"age"`
	CreatedAt  time.Time `json:"created_at"`
}

type pending struct {
	Count    int              `json:"count"`
	Requests []pendingRequest `json:"requests"`
}

// respondArgs is respond_to_request's input (ops.AnswerInput).
type respondArgs struct {
	ID       string `json:"request_id" jsonschema:"id from get_pending_requests, rq-..."`
	Response string `json:"response" jsonschema:"your answer"`
}

type responded struct {
	Success    bool   `json:"success"`
	ID         string `json:"request_id"`
	Capability string `json:"capability"`
	Question   string `json:"question"`
	Response   string `json:"response"`
}

func (s *Server) addPOTools() {
	addTool(s.MCP, "list_prompt_objects", "List the prompt objects with their state and capabilities.", op(s.sess, ops.Prompts))
	addTool(s.MCP, "send_message", "Send a message to a prompt object and wait for its response (pm send). Reports progress.", s.sendMessage)
	addTool(s.MCP, "get_conversation", "A prompt object's conversation history.", op(s.sess, s.conversation))
	addTool(s.MCP, "inspect_po", "A prompt object's config, capabilities, prompt body, state and history length.",
		op(s.sess, func(ctx context.Context, sess *ops.Session, in poName) (ops.InspectResult, error) {
			return ops.InspectPO(ctx, sess, ops.InspectInput{PO: in.PO})
		}))
	s.addRequestTools()
}

func (s *Server) addRequestTools() {
	addTool(s.MCP, "get_pending_requests", "Questions agents wait on a human for (pm requests).", op(s.sess, s.pending))
	addTool(s.MCP, "respond_to_request", "Answer a pending request; the waiting agent resumes (pm answer).", op(s.sess, s.respond))
}

func (s *Server) conversation(ctx context.Context, sess *ops.Session, in conversationArgs) (conversation, error) {
	c, err := ops.Conversation(ctx, sess, ops.ConversationInput{PO: in.PO, Limit: in.Limit})
	return conversation{PO: c.PO, MessageCount: c.Count, History: c.Turns}, err
}

func (s *Server) pending(ctx context.Context, sess *ops.Session, in pendingArgs) (pending, error) {
	list, err := ops.Requests(ctx, sess, ops.RequestsInput{})
	if err != nil {
		return pending{}, err
	}
	out := pending{Requests: []pendingRequest{}}
	now := sess.Store.Now()
	for _, r := range list {
		if in.PO != "" && r.From != in.PO {
			continue
		}
		out.Requests = append(out.Requests, pendingRequest{ID: r.ID, Capability: r.From, Question: r.Question, Options: []string{},
			Age: now.Sub(r.CreatedAt).Round(time.Second).String(), CreatedAt: r.CreatedAt})
	}
	out.Count = len(out.Requests)
	return out, nil
}

func (s *Server) respond(ctx context.Context, sess *ops.Session, in respondArgs) (responded, error) {
	r, err := ops.Answer(ctx, sess, ops.AnswerInput{ID: in.ID, Text: in.Response})
	if err != nil {
		return responded{}, err
	}
	return responded{Success: r.Status == request.Answered, ID: r.ID, Capability: r.From, Question: r.Question, Response: r.Answer}, nil
}

// sendMessage is ops.Send with progress: each piece of streamed text and
// each tool the object calls is a notifications/progress when the client
// sent a progress token. Cancelling the call ends the wait.
func (s *Server) sendMessage(ctx context.Context, req *mcp.CallToolRequest, in sendArgs) (sendReply, error) {
	in2 := ops.SendInput{PO: in.PO, Message: in.Message}
	if token := req.Params.GetProgressToken(); token != nil {
		p := &progress{ctx: ctx, session: req.Session, token: token}
		in2.OnDelta = p.send
		// From the bus's end before sending, so no tool call slips past.
		b := s.sess.Store.Bus()
		if _, end, err := b.Tail(0); err == nil {
			watchCtx, stop := context.WithCancel(ctx)
			defer stop()
			go p.toolCalls(watchCtx, b, end, in.PO)
		}
	}
	res, err := ops.Send(ctx, s.sess, in2)
	if err != nil {
		return sendReply{}, err
	}
	c, err := ops.Conversation(ctx, s.sess, ops.ConversationInput{PO: in.PO, Limit: 1})
	if err != nil {
		return sendReply{}, err
	}
	return sendReply{PO: res.PO, Response: res.Reply, HistoryLength: c.Count}, nil
}

// progress numbers the notifications of one call (progress must grow).
type progress struct {
	ctx     context.Context
	session *mcp.ServerSession
	token   any
	mu      sync.Mutex
	n       float64
}

func (p *progress) send(msg string) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.n++
	// A lost progress notification is not the call's failure.
	_ = p.session.NotifyProgress(p.ctx, &mcp.ProgressNotificationParams{ProgressToken: p.token, Progress: p.n, Message: msg})
}

// toolCalls reports each tool the object calls while the send waits.
func (p *progress) toolCalls(ctx context.Context, b bus.Bus, from bus.Cursor, po string) {
	for d, err := range b.Subscribe(ctx, from) {
		if err != nil {
			return
		}
		if d.Event.Kind == bus.EvToolCall && d.Event.Agent == po {
			p.send(fmt.Sprintf("@%s calls %s", po, d.Event.Text))
		}
	}
}

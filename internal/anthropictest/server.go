package anthropictest

import (
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"strings"
	"sync"
)

// Turn is one assistant reply: optional text, then optional tool calls.
type Turn struct {
	Text  string
	Tools []ToolUse
}

// ToolUse is one tool_use block.
type ToolUse struct {
	Name  string
	Input map[string]any
}

// Bash is a turn that runs command with Claude Code's Bash tool. Its
// timeout is the tool's longest (BASH_MAX_TIMEOUT_MS decides what that is),
// so a blocking pm chat --follow is not cut.
func Bash(command string) Turn {
	return Turn{Tools: []ToolUse{{Name: "Bash", Input: map[string]any{
		"command": command, "description": "run " + firstWord(command), "timeout": 600000}}}}
}

// Say is a turn of text only: it ends the agent's turn (stop_reason end_turn).
func Say(text string) Turn { return Turn{Text: text} }

func firstWord(s string) string {
	if f := strings.Fields(s); len(f) > 0 {
		return f[0]
	}
	return s
}

type script struct {
	match string
	turns []Turn
}

// Request is one /v1/messages request as received.
type Request struct {
	Model    string
	Stream   bool
	Messages []Message
	Tools    []string // tool names offered
	Script   string   // the match string of the script that answered, or ""
	Turn     int      // the turn answered
}

// Message is one message of a request, its text and tool results flattened.
type Message struct {
	Role        string
	Text        string
	ToolResults []string
}

// Server is the fake API.
type Server struct {
	URL string

	key     string
	srv     *http.Server
	ln      net.Listener
	mu      sync.Mutex
	scripts []script
	reqs    []Request
	ids     int
}

// Option configures New.
type Option func(*Server)

// WithAPIKey makes the server check the key clients send.
func WithAPIKey(key string) Option { return func(s *Server) { s.key = key } }

// New starts a server on 127.0.0.1 at a free port.
func New(opts ...Option) *Server {
	s := &Server{}
	for _, o := range opts {
		o(s)
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		panic("anthropictest: listen: " + err.Error())
	}
	s.ln, s.URL = ln, "http://"+ln.Addr().String()
	mux := http.NewServeMux()
	mux.HandleFunc("POST /v1/messages", s.messages)
	mux.HandleFunc("POST /v1/messages/count_tokens", s.countTokens)
	mux.HandleFunc("/", func(w http.ResponseWriter, r *http.Request) {
		apiError(w, http.StatusNotFound, "not_found_error", "Not found: "+r.Method+" "+r.URL.Path)
	})
	s.srv = &http.Server{Handler: mux}
	go func() { _ = s.srv.Serve(ln) }()
	return s
}

// Close stops the server.
func (s *Server) Close() { _ = s.srv.Close() }

// Script adds a conversation for the agents whose first user message
// contains match. Scripts are tried in the order added.
func (s *Server) Script(match string, turns ...Turn) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.scripts = append(s.scripts, script{match: match, turns: turns})
}

// Requests returns every /v1/messages request received, in order.
func (s *Server) Requests() []Request {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]Request(nil), s.reqs...)
}

func (s *Server) authorized(r *http.Request) bool {
	if s.key == "" {
		return true
	}
	return r.Header.Get("x-api-key") == s.key || r.Header.Get("Authorization") == "Bearer "+s.key
}

func apiError(w http.ResponseWriter, code int, typ, msg string) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(code)
	_ = json.NewEncoder(w).Encode(map[string]any{"type": "error", "error": map[string]any{"type": typ, "message": msg}})
}

func (s *Server) countTokens(w http.ResponseWriter, r *http.Request) {
	if !s.authorized(r) {
		apiError(w, http.StatusUnauthorized, "authentication_error", "invalid x-api-key")
		return
	}
	body, _ := io.ReadAll(io.LimitReader(r.Body, 64<<20))
	w.Header().Set("Content-Type", "application/json")
	_ = json.NewEncoder(w).Encode(map[string]any{"input_tokens": tokens(string(body))})
}

func (s *Server) messages(w http.ResponseWriter, r *http.Request) {
	if !s.authorized(r) {
		apiError(w, http.StatusUnauthorized, "authentication_error", "invalid x-api-key")
		return
	}
	body, err := io.ReadAll(io.LimitReader(r.Body, 64<<20))
	if err != nil {
		apiError(w, http.StatusBadRequest, "invalid_request_error", err.Error())
		return
	}
	req, err := decode(body)
	if err != nil {
		apiError(w, http.StatusBadRequest, "invalid_request_error", err.Error())
		return
	}
	turn := s.answer(&req)
	s.mu.Lock()
	s.reqs = append(s.reqs, req)
	s.ids++
	id := fmt.Sprintf("msg_test%08d", s.ids)
	s.mu.Unlock()
	reply := newReply(id, req, turn, tokens(string(body)))
	if req.Stream {
		reply.stream(w)
		return
	}
	w.Header().Set("Content-Type", "application/json")
	_ = json.NewEncoder(w).Encode(reply.message(true))
}

// answer picks the script and turn for req and records them in it.
func (s *Server) answer(req *Request) Turn {
	first := ""
	assistant := 0
	for i, m := range req.Messages {
		if m.Role == "user" && first == "" && i == 0 {
			first = m.Text
		}
		if m.Role == "assistant" {
			assistant++
		}
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	for _, sc := range s.scripts {
		if first == "" || !strings.Contains(first, sc.match) {
			continue
		}
		req.Script, req.Turn = sc.match, assistant
		if assistant < len(sc.turns) {
			return sc.turns[assistant]
		}
		return Say("Done.")
	}
	return Say("OK.")
}

// tokens is a rough count (4 bytes a token), enough for usage fields.
func tokens(s string) int { return len(s)/4 + 1 }

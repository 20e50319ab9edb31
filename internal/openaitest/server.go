package openaitest

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"strconv"
	"strings"
	"sync"
	"time"
)

// DefaultModel is the model listed by GET /v1/models unless WithModel is
// given.
const DefaultModel = "gpt-4o-mini"

// Server is a fake OpenAI Chat Completions endpoint listening on a real TCP
// socket. Its methods are safe for concurrent use.
type Server struct {
	// URL is the server root, "http://127.0.0.1:port" (no trailing slash);
	// the OpenAI API lives under URL + "/v1" (see BaseURL).
	URL string

	apiKey string
	model  string

	ln net.Listener
	hs *http.Server

	mu       sync.Mutex
	queue    []Reply
	handler  func(Request) Reply
	requests []Request
	seq      int
	closed   bool
	inflight sync.WaitGroup

	done      chan struct{} // closed by Close: aborts delays and streams
	closeOnce sync.Once
}

// Option configures a Server.
type Option func(*Server)

// WithAPIKey makes the server require "Authorization: Bearer key" and answer
// 401 otherwise. Without it any key, or none, is accepted.
func WithAPIKey(key string) Option { return func(s *Server) { s.apiKey = key } }

// WithModel sets the model listed by GET /v1/models (default DefaultModel).
// Chat completions echo the model of each request whatever it is.
func WithModel(name string) Option { return func(s *Server) { s.model = name } }

// New starts a server on 127.0.0.1 with an ephemeral port, like
// httptest.NewServer. It panics if it cannot listen. Close it when done.
func New(opts ...Option) *Server {
	s, err := listen("127.0.0.1:0", opts)
	if err != nil {
		panic(fmt.Sprintf("openaitest: %v", err))
	}
	return s
}

// ListenAndServe starts a server on addr (":8080", "127.0.0.1:0", …) with
// script queued, and returns once it is accepting connections; it serves in
// the background until Close. It is meant for running the fake as a
// standalone process, e.g. an offline demo replaying a script loaded with
// LoadScript. Unlike net/http's function of the same name it does not block.
func ListenAndServe(addr string, script []Reply, opts ...Option) (*Server, error) {
	s, err := listen(addr, opts)
	if err != nil {
		return nil, err
	}
	s.Enqueue(script...)
	return s, nil
}

func listen(addr string, opts []Option) (*Server, error) {
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		return nil, err
	}
	s := &Server{model: DefaultModel, ln: ln, done: make(chan struct{})}
	for _, o := range opts {
		o(s)
	}
	host, port, _ := net.SplitHostPort(ln.Addr().String())
	if ip := net.ParseIP(host); ip == nil || ip.IsUnspecified() {
		host = "127.0.0.1"
	}
	s.URL = "http://" + net.JoinHostPort(host, port)

	mux := http.NewServeMux()
	mux.HandleFunc("POST /v1/chat/completions", s.chatCompletions)
	mux.HandleFunc("GET /v1/models", s.listModels)
	mux.HandleFunc("GET /v1/models/{model}", s.getModel)
	mux.HandleFunc("/", func(w http.ResponseWriter, r *http.Request) {
		writeError(w, &apiError{
			status:  http.StatusNotFound,
			Message: fmt.Sprintf("Invalid URL (%s %s)", r.Method, r.URL.Path),
			Type:    "invalid_request_error",
		})
	})
	s.hs = &http.Server{Handler: s.track(s.authorize(mux)), ReadHeaderTimeout: 10 * time.Second}
	go func() { _ = s.hs.Serve(ln) }()
	return s, nil
}

// BaseURL is URL + "/v1", the value for go-openai's ClientConfig.BaseURL.
func (s *Server) BaseURL() string { return s.URL + "/v1" }

// Close stops the server: delayed and streaming responses in progress are
// aborted (streams are cut without [DONE]), and Close waits for their
// handlers to return. It is safe to call more than once.
func (s *Server) Close() {
	s.closeOnce.Do(func() {
		close(s.done)
		s.mu.Lock()
		s.closed = true
		s.mu.Unlock()
		_ = s.hs.Close()
		s.inflight.Wait()
	})
}

// Enqueue appends replies to the script. Each chat completion request
// consumes the oldest remaining reply, unless a handler is set.
func (s *Server) Enqueue(r ...Reply) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.queue = append(s.queue, r...)
}

// Pending reports how many enqueued replies have not been consumed.
func (s *Server) Pending() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return len(s.queue)
}

// Handle sets a function computing the reply from each request; while set,
// it takes precedence over the queue. Handle(nil) reverts to the queue. fn
// may be called concurrently and may call the Server's methods, except
// Close. It must not modify the Request, which is also the recorded one.
func (s *Server) Handle(fn func(req Request) Reply) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.handler = fn
}

// Requests returns the chat completion requests received so far, in arrival
// order: every one that was authorized and parsed as JSON, including those
// then rejected as invalid or answered with a scripted error. The slice is a
// copy; the Requests in it are shared and must be treated as read-only.
func (s *Server) Requests() []Request {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]Request(nil), s.requests...)
}

// track counts handlers in flight so that Close can wait for them.
func (s *Server) track(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		s.mu.Lock()
		if s.closed {
			s.mu.Unlock()
			panic(http.ErrAbortHandler)
		}
		s.inflight.Add(1)
		s.mu.Unlock()
		defer s.inflight.Done()
		next.ServeHTTP(w, r)
	})
}

func (s *Server) authorize(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if s.apiKey == "" {
			next.ServeHTTP(w, r)
			return
		}
		auth := r.Header.Get("Authorization")
		key, ok := strings.CutPrefix(auth, "Bearer ")
		switch {
		case auth == "":
			writeError(w, &apiError{
				status: http.StatusUnauthorized,
				Message: "You didn't provide an API key. You need to provide your API key in an Authorization header " +
					"using Bearer auth (i.e. Authorization: Bearer YOUR_KEY), or as the password field (with blank username) " +
					"if you're accessing the API from your browser and are prompted for a username and password. " +
					"You can obtain an API key from https://platform.openai.com/account/api-keys.",
				Type: "invalid_request_error",
			})
		case !ok || key != s.apiKey:
			writeError(w, &apiError{
				status: http.StatusUnauthorized,
				Message: "Incorrect API key provided: " + redact(key) +
					". You can find your API key at https://platform.openai.com/account/api-keys.",
				Type: "invalid_request_error",
				Code: strPtr("invalid_api_key"),
			})
		default:
			next.ServeHTTP(w, r)
		}
	})
}

func redact(key string) string {
	if len(key) <= 8 {
		return strings.Repeat("*", len(key))
	}
	return key[:3] + strings.Repeat("*", len(key)-7) + key[len(key)-4:]
}

func (s *Server) listModels(w http.ResponseWriter, r *http.Request) {
	writeJSON(w, http.StatusOK, map[string]any{"object": "list", "data": []any{s.modelObject()}})
}

func (s *Server) getModel(w http.ResponseWriter, r *http.Request) {
	if id := r.PathValue("model"); id != s.model {
		writeError(w, &apiError{
			status:  http.StatusNotFound,
			Message: fmt.Sprintf("The model '%s' does not exist", id),
			Type:    "invalid_request_error",
			Param:   strPtr("model"),
			Code:    strPtr("model_not_found"),
		})
		return
	}
	writeJSON(w, http.StatusOK, s.modelObject())
}

func (s *Server) modelObject() map[string]any {
	return map[string]any{"id": s.model, "object": "model", "created": 1715367049, "owned_by": "openaitest"}
}

// nextReply records req and picks its reply: from the handler if set, else
// from the queue. ok is false when the script is exhausted.
func (s *Server) nextReply(req Request) (id int, r Reply, ok bool) {
	s.mu.Lock()
	s.seq++
	id = s.seq
	s.requests = append(s.requests, req)
	fn := s.handler
	if fn == nil && len(s.queue) > 0 {
		r, ok = s.queue[0], true
		s.queue = s.queue[1:]
	}
	s.mu.Unlock()
	if fn != nil {
		return id, fn(req), true
	}
	return id, r, ok
}

func (s *Server) chatCompletions(w http.ResponseWriter, r *http.Request) {
	body, err := io.ReadAll(r.Body)
	if err != nil {
		return // client went away
	}
	wreq, req, perr := parseRequest(body)
	if perr != nil {
		writeError(w, perr)
		return
	}
	req.Header = r.Header.Clone()
	req.Body = body
	if verr := validate(wreq, req); verr != nil {
		s.mu.Lock()
		s.requests = append(s.requests, req)
		s.mu.Unlock()
		writeError(w, verr)
		return
	}

	seq, reply, ok := s.nextReply(req)
	if !ok {
		writeError(w, &apiError{
			status:  http.StatusInternalServerError,
			Message: "openaitest: no scripted reply left",
			Type:    "server_error",
		})
		return
	}
	if !s.sleep(r.Context(), reply.Delay) {
		panic(http.ErrAbortHandler) // nothing written: drop the connection
	}
	if reply.Status != 0 {
		if reply.Status == http.StatusTooManyRequests || reply.RetryAfter > 0 {
			d := retryAfter(reply)
			w.Header().Set("Retry-After", strconv.FormatInt(int64((d+time.Second-1)/time.Second), 10))
			w.Header().Set("Retry-After-Ms", strconv.FormatInt(d.Milliseconds(), 10))
		}
		writeError(w, replyError(reply))
		return
	}

	reply.ToolCalls = append([]ToolCall(nil), reply.ToolCalls...) // the script's copy stays intact
	for i := range reply.ToolCalls {
		if reply.ToolCalls[i].ID == "" {
			reply.ToolCalls[i].ID = fmt.Sprintf("call_openaitest%04d%04d", seq, i)
		}
		if reply.ToolCalls[i].Arguments == "" {
			reply.ToolCalls[i].Arguments = "{}" // models always send an object
		}
	}
	id := fmt.Sprintf("chatcmpl-openaitest%06d", seq)
	usage := replyUsage(req, reply)
	w.Header().Set("X-Request-Id", fmt.Sprintf("req_openaitest%06d", seq))
	if req.Stream {
		s.stream(w, r, req, reply, id, usage)
		return
	}

	msg := responseMessage{Role: "assistant", Annotations: []struct{}{}}
	if reply.Content != "" || len(reply.ToolCalls) == 0 {
		msg.Content = strPtr(reply.Content)
	}
	for _, tc := range reply.ToolCalls {
		wtc := wireToolCall{ID: tc.ID, Type: "function"}
		wtc.Function.Name, wtc.Function.Arguments = tc.Name, tc.Arguments
		msg.ToolCalls = append(msg.ToolCalls, wtc)
	}
	resp := completion{
		ID:      id,
		Object:  "chat.completion",
		Created: time.Now().Unix(),
		Model:   req.Model,
		Choices: []choice{{
			Message:      msg,
			Logprobs:     jsonNull,
			FinishReason: finishReason(reply),
		}},
		Usage:             usage.wire(),
		ServiceTier:       "default",
		SystemFingerprint: "fp_openaitest",
	}
	writeJSON(w, http.StatusOK, resp)
}

func finishReason(r Reply) string {
	if len(r.ToolCalls) > 0 {
		return "tool_calls"
	}
	return "stop"
}

// stream writes reply as server-sent events, flushing after each one.
func (s *Server) stream(w http.ResponseWriter, r *http.Request, req Request, reply Reply, id string, usage Usage) {
	h := w.Header()
	h.Set("Content-Type", "text/event-stream; charset=utf-8")
	h.Set("Cache-Control", "no-cache")
	w.WriteHeader(http.StatusOK)
	rc := http.NewResponseController(w)

	base := chunk{
		ID:                id,
		Object:            "chat.completion.chunk",
		Created:           time.Now().Unix(),
		Model:             req.Model,
		ServiceTier:       "default",
		SystemFingerprint: "fp_openaitest",
	}
	if req.IncludeUsage {
		base.Usage = jsonNull
	}
	var events []chunk
	for _, d := range streamDeltas(reply.Content, reply.ToolCalls) {
		c := base
		c.Choices = []chunkChoice{{Delta: d, Logprobs: jsonNull}}
		events = append(events, c)
	}
	final := base
	final.Choices = []chunkChoice{{Delta: delta{}, Logprobs: jsonNull, FinishReason: strPtr(finishReason(reply))}}
	events = append(events, final)
	if req.IncludeUsage {
		u := base
		u.Choices = []chunkChoice{}
		u.Usage, _ = json.Marshal(usage.wire())
		events = append(events, u)
	}

	send := func(data []byte) {
		if _, err := fmt.Fprintf(w, "data: %s\n\n", data); err != nil {
			panic(http.ErrAbortHandler)
		}
		if err := rc.Flush(); err != nil {
			panic(http.ErrAbortHandler)
		}
	}
	for i, ev := range events {
		if i > 0 && !s.sleep(r.Context(), reply.ChunkDelay) {
			// Cut the connection rather than end the body cleanly: a
			// clean end without [DONE] would look complete to clients.
			panic(http.ErrAbortHandler)
		}
		data, err := json.Marshal(ev)
		if err != nil {
			panic(err) // all fields are plain data
		}
		send(data)
	}
	send([]byte("[DONE]"))
}

// sleep waits d, or until the request is cancelled or the server closed;
// it reports whether the full delay elapsed.
func (s *Server) sleep(ctx context.Context, d time.Duration) bool {
	if d <= 0 {
		select {
		case <-ctx.Done():
			return false
		case <-s.done:
			return false
		default:
			return true
		}
	}
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-t.C:
		return true
	case <-ctx.Done():
		return false
	case <-s.done:
		return false
	}
}

func replyError(r Reply) *apiError {
	e := &apiError{status: r.Status, Message: r.ErrorMessage}
	switch {
	case r.Status == http.StatusTooManyRequests:
		e.Type, e.Code = "requests", strPtr("rate_limit_exceeded")
		if e.Message == "" {
			e.Message = fmt.Sprintf("Rate limit reached for requests. Please try again in %s. "+
				"Visit https://platform.openai.com/account/rate-limits to learn more.", retryAfter(r))
		}
	case r.Status == http.StatusUnauthorized:
		e.Type, e.Code = "invalid_request_error", strPtr("invalid_api_key")
		if e.Message == "" {
			e.Message = "Incorrect API key provided."
		}
	case r.Status >= 500:
		e.Type = "server_error"
		if e.Message == "" {
			e.Message = "The server had an error while processing your request. Sorry about that!"
		}
	default:
		e.Type = "invalid_request_error"
		if e.Message == "" {
			e.Message = fmt.Sprintf("openaitest: scripted error %d", r.Status)
		}
	}
	return e
}

func retryAfter(r Reply) time.Duration {
	if r.RetryAfter > 0 {
		return r.RetryAfter
	}
	return time.Second
}

func writeError(w http.ResponseWriter, e *apiError) {
	writeJSON(w, e.status, map[string]*apiError{"error": e})
}

func writeJSON(w http.ResponseWriter, status int, v any) {
	data, err := json.Marshal(v)
	if err != nil {
		panic(err)
	}
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	_, _ = w.Write(append(data, '\n'))
}

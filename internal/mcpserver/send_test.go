package mcpserver

import (
	"bufio"
	"context"
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/plasmodium/pm/internal/inbox"
	"github.com/plasmodium/pm/internal/request"
	"github.com/plasmodium/pm/internal/state/fsstate"
	"github.com/plasmodium/pm/internal/store"
)

// send_message goes through the object's mailbox; its streamed text comes
// as progress; while it waits on ask_human, get_pending_requests and
// respond_to_request from the same client are served and unblock it.
func TestSendProgressAndConcurrentAnswer(t *testing.T) {
	sess := newSession(t)
	s := sess.Store
	asked := make(chan string, 1)
	servePO(t, s, func(ctx context.Context, m inbox.Message) (string, error) {
		if err := inbox.Stream(fsstate.New(s), "echo", m.Corr, "thinking"); err != nil {
			return "", err
		}
		r, err := request.Create(s, fsstate.New(s), store.Actor{Name: "echo"}, "May I echo "+m.Text+"?")
		if err != nil {
			return "", err
		}
		asked <- r.ID
		done, err := request.Wait(ctx, s, fsstate.New(s), r.ID)
		if err != nil {
			return "", err
		}
		return "echo: " + m.Text + " (" + done.Answer + ")", nil
	})
	progress := make(chan string, 16)
	_, cs := connect(t, sess, ToolsPO, &mcp.ClientOptions{ProgressNotificationHandler: func(_ context.Context, r *mcp.ProgressNotificationClientRequest) {
		progress <- r.Params.Message
	}})
	type result struct {
		text  string
		isErr bool
	}
	sent := make(chan result, 1)
	go func() {
		res, err := cs.CallTool(context.Background(), &mcp.CallToolParams{Name: "send_message",
			Arguments: map[string]any{"po_name": "echo", "message": "hi"}, Meta: mcp.Meta{"progressToken": "p1"}})
		if err != nil {
			sent <- result{err.Error(), true}
			return
		}
		sent <- result{text(res.Content), res.IsError}
	}()
	id := <-asked
	if got, isErr := callTool(t, cs, "get_pending_requests", map[string]any{"po_name": "echo"}); isErr || !strings.Contains(got, id) {
		t.Fatalf("pending during the send: %s", got)
	}
	if got, isErr := callTool(t, cs, "respond_to_request", map[string]any{"request_id": id, "response": "yes"}); isErr {
		t.Fatalf("respond: %s", got)
	}
	r := <-sent
	if r.isErr || r.text != `{"po_name":"echo","response":"echo: hi (yes)","history_length":0}` {
		t.Fatalf("send_message: %+v", r)
	}
	if got := <-progress; got != "thinking" {
		t.Errorf("progress %q, want the streamed text", got)
	}
}

// Cancelling a send ends the call at once; the server keeps serving.
func TestSendCancel(t *testing.T) {
	sess := newSession(t)
	got := make(chan struct{})
	servePO(t, sess.Store, func(ctx context.Context, m inbox.Message) (string, error) {
		close(got)
		<-ctx.Done() // never answers
		return "", ctx.Err()
	})
	_, cs := connect(t, sess, ToolsPO, nil)
	ctx, cancel := context.WithCancel(context.Background())
	errc := make(chan error, 1)
	go func() {
		_, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: "send_message", Arguments: map[string]any{"po_name": "echo", "message": "hang"}})
		errc <- err
	}()
	<-got
	cancel()
	if err := <-errc; !errors.Is(err, context.Canceled) {
		t.Fatalf("cancelled send: %v", err)
	}
	if _, isErr := callTool(t, cs, "list_prompt_objects", nil); isErr {
		t.Fatal("server stopped serving after a cancel")
	}
}

// A frame that is not JSON, or JSON but not JSON-RPC, is answered with a
// protocol error and the session goes on.
func TestMalformedFrames(t *testing.T) {
	exchange(t, []frame{
		{"garbage{", `"code":-32700`},
		{`{"x":1}`, `"code":-32600`},
		{`{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"t","version":"1"}}}`, `"id":1,"result"`},
		{`not json either`, `"code":-32700`},
		{`{"jsonrpc":"2.0","id":2,"method":"ping"}`, `"id":2,"result":{}`},
		// JSON-RPC batches are gone from the protocol since 2025-06-18: an
		// error answer, and the session goes on (the SDK's reader ends it).
		{`[{"jsonrpc":"2.0","id":3,"method":"ping"}]`, `"code":-32600`},
		{`[]`, `"code":-32600`},
		{`{"jsonrpc":"2.0","id":4,"method":"ping"}`, `"id":4,"result":{}`},
	})
}

// In a version that has batches, the SDK answers them.
func TestBatchInOlderVersion(t *testing.T) {
	exchange(t, []frame{
		{`{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-03-26","capabilities":{},"clientInfo":{"name":"t","version":"1"}}}`, `"id":1,"result"`},
		{`[{"jsonrpc":"2.0","id":3,"method":"ping"}]`, `[{"jsonrpc":"2.0","id":3,"result":{}}]`},
		{`{"jsonrpc":"2.0","id":4,"method":"ping"}`, `"id":4,"result":{}`},
	})
}

type frame struct{ send, want string }

// exchange sends each frame to a stdio server and checks the line it answers.
func exchange(t *testing.T, frames []frame) {
	t.Helper()
	srv, err := New(newSession(t), ToolsPO)
	if err != nil {
		t.Fatal(err)
	}
	inR, inW := io.Pipe()
	outR, outW := io.Pipe()
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	go func() { _ = srv.Run(ctx, StdioTransport(inR, outW)) }()
	out := bufio.NewScanner(outR)
	out.Buffer(nil, 1<<20)
	for _, f := range frames {
		if _, err := io.WriteString(inW, f.send+"\n"); err != nil {
			t.Fatal(err)
		}
		if !out.Scan() {
			t.Fatalf("after %s: no answer (%v)", f.send, out.Err())
		}
		if !strings.Contains(out.Text(), f.want) {
			t.Errorf("after %s: %s, want %s", f.send, out.Text(), f.want)
		}
	}
	inW.Close()
}

// Over HTTP the bearer token is required and a foreign Origin is refused;
// with both right, a client lists the tools.
func TestHTTPGuard(t *testing.T) {
	srv, err := New(newSession(t), ToolsPO)
	if err != nil {
		t.Fatal(err)
	}
	hs := httptest.NewServer(srv.Handler("s3cret"))
	defer hs.Close()
	post := func(auth, origin string) int {
		req, _ := http.NewRequest("POST", hs.URL+Path, strings.NewReader(`{"jsonrpc":"2.0","id":1,"method":"ping"}`))
		req.Header.Set("Content-Type", "application/json")
		req.Header.Set("Accept", "application/json, text/event-stream")
		if auth != "" {
			req.Header.Set("Authorization", auth)
		}
		if origin != "" {
			req.Header.Set("Origin", origin)
		}
		res, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		res.Body.Close()
		return res.StatusCode
	}
	tests := []struct {
		auth, origin string
		want         int
	}{
		{"", "", http.StatusUnauthorized},
		{"Bearer wrong", "", http.StatusUnauthorized},
		{"Bearer s3cret", "https://evil.example", http.StatusForbidden},
		{"", "https://evil.example", http.StatusForbidden},
	}
	for _, tt := range tests {
		if got := post(tt.auth, tt.origin); got != tt.want {
			t.Errorf("auth %q origin %q: %d, want %d", tt.auth, tt.origin, got, tt.want)
		}
	}
	client := &http.Client{Transport: bearer{"s3cret"}}
	cs, err := mcp.NewClient(&mcp.Implementation{Name: "t", Version: "1"}, nil).Connect(context.Background(),
		&mcp.StreamableClientTransport{Endpoint: hs.URL + Path, HTTPClient: client}, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer cs.Close()
	if got, isErr := callTool(t, cs, "list_prompt_objects", nil); isErr || !strings.Contains(got, `"echo"`) {
		t.Fatalf("over HTTP: %s", got)
	}
}

type bearer struct{ token string }

func (b bearer) RoundTrip(r *http.Request) (*http.Response, error) {
	r = r.Clone(r.Context())
	r.Header.Set("Authorization", "Bearer "+b.token)
	r.Header.Set("Origin", "http://127.0.0.1")
	return http.DefaultTransport.RoundTrip(r)
}

func TestCheckLoopback(t *testing.T) {
	for addr, ok := range map[string]bool{"127.0.0.1:7071": true, "[::1]:0": true, "localhost:1": true, "0.0.0.0:7071": false, "10.0.0.1:80": false, "nope": false} {
		if err := CheckLoopback(addr); (err == nil) != ok {
			t.Errorf("%s: %v", addr, err)
		}
	}
}

// With Elicit, an agent's question goes to the client's user; what they
// accept answers it and the waiting send completes.
func TestElicit(t *testing.T) {
	sess := newSession(t)
	s := sess.Store
	servePO(t, s, func(ctx context.Context, m inbox.Message) (string, error) {
		answer, err := request.Ask(ctx, s, fsstate.New(s), store.Actor{Name: "echo"}, "Echo "+m.Text+"?")
		return "echo: " + answer, err
	})
	asked := make(chan string, 1)
	srv, err := New(sess, ToolsPO)
	if err != nil {
		t.Fatal(err)
	}
	srv.Elicit = true
	cs := serve(t, srv, sess, &mcp.ClientOptions{ElicitationHandler: func(_ context.Context, r *mcp.ElicitRequest) (*mcp.ElicitResult, error) {
		asked <- r.Params.Message
		return &mcp.ElicitResult{Action: "accept", Content: map[string]any{"answer": "sure"}}, nil
	}})
	got, isErr := callTool(t, cs, "send_message", map[string]any{"po_name": "echo", "message": "hi"})
	if isErr || !strings.Contains(got, `"response":"echo: sure"`) {
		t.Fatalf("send_message: %s", got)
	}
	if q := <-asked; !strings.Contains(q, "@echo asks") || !strings.Contains(q, "Echo hi?") {
		t.Errorf("elicitation message %q", q)
	}
}

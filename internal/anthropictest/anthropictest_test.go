package anthropictest

import (
	"bufio"
	"encoding/json"
	"io"
	"net/http"
	"strings"
	"testing"
)

func post(t *testing.T, url, key, body string) *http.Response {
	t.Helper()
	req, err := http.NewRequest(http.MethodPost, url, strings.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("x-api-key", key)
	req.Header.Set("content-type", "application/json")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	return resp
}

// event is one server-sent event.
type event struct {
	name string
	data map[string]any
}

func readEvents(t *testing.T, r io.Reader) []event {
	t.Helper()
	var out []event
	sc := bufio.NewScanner(r)
	var cur event
	for sc.Scan() {
		line := sc.Text()
		switch {
		case strings.HasPrefix(line, "event: "):
			cur.name = strings.TrimPrefix(line, "event: ")
		case strings.HasPrefix(line, "data: "):
			if err := json.Unmarshal([]byte(strings.TrimPrefix(line, "data: ")), &cur.data); err != nil {
				t.Fatalf("data line %q: %v", line, err)
			}
		case line == "":
			if cur.data["type"] != cur.name {
				t.Fatalf("event %q carries data of type %v", cur.name, cur.data["type"])
			}
			out = append(out, cur)
			cur = event{}
		}
	}
	return out
}

func names(evs []event) string {
	var n []string
	for _, e := range evs {
		n = append(n, e.name)
	}
	return strings.Join(n, " ")
}

const (
	ownerFirst  = `{"model":"claude-x","stream":true,"tools":[{"name":"Bash"}],"messages":[{"role":"user","content":[{"type":"text","text":"You are @a, owner of task tk-1"}]}]}`
	ownerSecond = `{"model":"claude-x","stream":true,"messages":[{"role":"user","content":"You are @a, owner of task tk-1"},` +
		`{"role":"assistant","content":[{"type":"tool_use","id":"t1","name":"Bash","input":{"command":"pm say hi"}}]},` +
		`{"role":"user","content":[{"type":"tool_result","tool_use_id":"t1","content":"msg-1"}]}]}`
)

func TestStreamEvents(t *testing.T) {
	srv := New(WithAPIKey("k"))
	defer srv.Close()
	srv.Script("owner of task", Bash("pm say hi"), Say("All done now."))
	tests := []struct {
		name, body, want, stop string
	}{
		{"a tool call", ownerFirst, "message_start ping content_block_start content_block_delta content_block_delta content_block_delta content_block_stop message_delta message_stop", "tool_use"},
		{"text after a tool result", ownerSecond, "message_start ping content_block_start content_block_delta content_block_delta content_block_delta content_block_stop message_delta message_stop", "end_turn"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			resp := post(t, srv.URL+"/v1/messages?beta=true", "k", tc.body)
			defer resp.Body.Close()
			if ct := resp.Header.Get("Content-Type"); !strings.HasPrefix(ct, "text/event-stream") {
				t.Fatalf("Content-Type %q", ct)
			}
			evs := readEvents(t, resp.Body)
			if got := names(evs); got != tc.want {
				t.Fatalf("events\n got %s\nwant %s", got, tc.want)
			}
			start := evs[0].data["message"].(map[string]any)
			if start["role"] != "assistant" || start["model"] != "claude-x" || start["stop_reason"] != nil {
				t.Fatalf("message_start %v", start)
			}
			delta := evs[len(evs)-2].data
			if delta["delta"].(map[string]any)["stop_reason"] != tc.stop {
				t.Fatalf("message_delta %v, want stop_reason %s", delta, tc.stop)
			}
			if _, ok := delta["usage"].(map[string]any)["output_tokens"]; !ok {
				t.Fatalf("message_delta without usage: %v", delta)
			}
		})
	}
	// The tool call's input, joined from its pieces, is the command.
	resp := post(t, srv.URL+"/v1/messages", "k", ownerFirst)
	defer resp.Body.Close()
	var input strings.Builder
	for _, e := range readEvents(t, resp.Body) {
		if d, ok := e.data["delta"].(map[string]any); ok && d["type"] == "input_json_delta" {
			input.WriteString(d["partial_json"].(string))
		}
	}
	var got map[string]any
	if err := json.Unmarshal([]byte(input.String()), &got); err != nil || got["command"] != "pm say hi" {
		t.Fatalf("tool input %q (%v)", input.String(), err)
	}
	reqs := srv.Requests()
	if len(reqs) != 3 || reqs[0].Turn != 0 || reqs[1].Turn != 1 || reqs[1].Messages[2].ToolResults[0] != "msg-1" {
		t.Fatalf("requests %+v", reqs)
	}
}

func TestReplies(t *testing.T) {
	srv := New(WithAPIKey("k"))
	defer srv.Close()
	srv.Script("owner of task", Bash("pm say hi"))
	tests := []struct {
		name, path, key, body string
		code                  int
		want                  string // in the body
	}{
		{"no stream: one message", "/v1/messages", "k", strings.Replace(ownerFirst, `"stream":true`, `"stream":false`, 1), 200, `"stop_reason":"tool_use"`},
		{"past the script's end", "/v1/messages", "k", strings.Replace(ownerSecond, `"stream":true`, `"stream":false`, 1), 200, `"text":"Done."`},
		{"no script matches", "/v1/messages", "k", `{"messages":[{"role":"user","content":"Write a title"}]}`, 200, `"text":"OK."`},
		{"wrong key", "/v1/messages", "nope", ownerFirst, 401, `"type":"authentication_error"`},
		{"bad body", "/v1/messages", "k", `{`, 400, `"type":"invalid_request_error"`},
		{"no messages", "/v1/messages", "k", `{"messages":[]}`, 400, `at least one message`},
		// The conversation checks of the real API: a loop that cut its
		// history wrong is refused here as it would be there.
		{"a tool result without its call", "/v1/messages", "k", `{"messages":[{"role":"user","content":[{"type":"tool_result","tool_use_id":"t1","content":"x"}]}]}`, 400, "unexpected `tool_use_id` found in `tool_result` blocks: t1"},
		{"a tool result for another call", "/v1/messages", "k", strings.Replace(ownerSecond, `"tool_use_id":"t1"`, `"tool_use_id":"t2"`, 1), 400, "unexpected `tool_use_id` found in `tool_result` blocks: t2"},
		{"a tool call left unanswered", "/v1/messages", "k", strings.Replace(ownerSecond, `[{"type":"tool_result","tool_use_id":"t1","content":"msg-1"}]`, `"go on"`, 1), 400, "`tool_use` ids were found without `tool_result` blocks immediately after: t1"},
		{"an assistant first", "/v1/messages", "k", `{"messages":[{"role":"assistant","content":"hi"},{"role":"user","content":"x"}]}`, 400, `first message must use the \"user\" role`},
		{"an unknown role", "/v1/messages", "k", `{"messages":[{"role":"user","content":"x"},{"role":"tool","content":"y"}]}`, 400, `messages.1.role: Input should be 'user', 'assistant' or 'system'`},
		// Claude Code 2.1 sends context as a system message after the first
		// (claude_landing.txtar): the API takes it, between a call and its result too.
		{"a system message between", "/v1/messages", "k", `{"messages":[{"role":"user","content":"x"},{"role":"system","content":"agent types"},{"role":"assistant","content":"y"},{"role":"user","content":"z"}]}`, 200, `"text":"OK."`},
		{"users in a row, the last a prefill", "/v1/messages", "k", `{"messages":[{"role":"user","content":"[dropped]"},{"role":"user","content":"x"},{"role":"assistant","content":"y"}]}`, 200, `"text":"OK."`},
		{"count tokens", "/v1/messages/count_tokens", "k", ownerFirst, 200, `"input_tokens":`},
		{"other endpoint", "/v1/models", "k", `{}`, 404, `"type":"not_found_error"`},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			resp := post(t, srv.URL+tc.path, tc.key, tc.body)
			defer resp.Body.Close()
			body, _ := io.ReadAll(resp.Body)
			if resp.StatusCode != tc.code || !strings.Contains(string(body), tc.want) {
				t.Fatalf("%d %s, want %d with %s", resp.StatusCode, body, tc.code, tc.want)
			}
		})
	}
}

func TestLoadScripts(t *testing.T) {
	tests := []struct {
		name, file, err string
	}{
		{"good", `[{"match":"m","turns":[{"bash":"pm say x"},{"text":"bye"}]}]`, ""},
		{"no match", `[{"turns":[]}]`, "has no match"},
		{"both in a turn", `[{"match":"m","turns":[{"bash":"a","text":"b"}]}]`, "give bash or text"},
		{"unknown field", `[{"match":"m","turn":[]}]`, "unknown field"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			srv := New()
			defer srv.Close()
			err := srv.LoadScripts(strings.NewReader(tc.file))
			if (err == nil) != (tc.err == "") || (err != nil && !strings.Contains(err.Error(), tc.err)) {
				t.Fatalf("err %v, want %q", err, tc.err)
			}
		})
	}
}

func TestChunksKeepUTF8(t *testing.T) {
	s := strings.Repeat("é€", 20)
	var joined strings.Builder
	for _, c := range chunks(s, 5) {
		if !strings.HasPrefix(s[joined.Len():], c) || len(c) > 5 {
			t.Fatalf("bad chunk %q", c)
		}
		joined.WriteString(c)
	}
	if joined.String() != s || strings.Join(words("a b  c"), "") != "a b  c" {
		t.Fatal("pieces do not join back")
	}
}

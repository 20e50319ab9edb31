package dashboard

import (
	"errors"
	"fmt"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/gorilla/websocket"

	"github.com/plasmodium/pm/internal/agent"
	"github.com/plasmodium/pm/internal/bus"
	"github.com/plasmodium/pm/internal/config"
	"github.com/plasmodium/pm/internal/ops"
	"github.com/plasmodium/pm/internal/request"
	"github.com/plasmodium/pm/internal/state/fsstate"
	"github.com/plasmodium/pm/internal/store"
	"github.com/plasmodium/pm/internal/store/storetest"
	"github.com/plasmodium/pm/internal/task"
)

func TestOpenRefusesNonLoopbackWithoutToken(t *testing.T) {
	sesss := storetest.New(t)
	sess := &ops.Session{Store: sesss, State: fsstate.New(sesss)}
	tests := []struct {
		addr, token string
		ok          bool
	}{
		{"127.0.0.1:0", "", true},
		{"localhost:0", "", true},
		{"[::1]:0", "", true},
		{"0.0.0.0:0", "", false},
		{":0", "", false},
		{"0.0.0.0:0", "secret", true},
		{"no-port", "secret", false},
	}
	for _, tt := range tests {
		srv, err := Open(Config{Addr: tt.addr, Token: tt.token, Session: sess})
		if err != nil && tt.addr == "[::1]:0" && strings.Contains(err.Error(), "assign") {
			continue // no IPv6 loopback on this machine
		}
		if (err == nil) != tt.ok {
			t.Errorf("Open(%q, token %q) = %v; want ok=%v", tt.addr, tt.token, err, tt.ok)
		}
		if srv != nil {
			if tt.token != "" && !strings.Contains(srv.URL(), "token="+tt.token) {
				t.Errorf("URL %s lacks the token", srv.URL())
			}
			_ = srv.Close()
		}
	}
}

func TestSnapshotThenEventsMissNothing(t *testing.T) {
	r := newRig(t, nil)
	first, err := ops.CreateTask(t.Context(), r.sess, ops.TaskInput{Description: "first", Runtime: config.RuntimeNone})
	if err != nil {
		t.Fatal(err)
	}
	asker := store.Actor{Name: "oak_0001", Agent: &store.Agent{Name: "oak_0001", TaskID: first.ID}}
	rq, err := request.Create(r.s, fsstate.New(r.s), asker, "which colour?")
	if err != nil {
		t.Fatal(err)
	}
	snap := r.snapshot()
	if len(snap.Tasks) != 1 || snap.Tasks[0].ID != first.ID || snap.Total != 1 {
		t.Errorf("snapshot tasks = %+v", snap.Tasks)
	}
	if len(snap.Requests) != 1 || snap.Requests[0].ID != rq.ID {
		t.Errorf("snapshot requests = %+v", snap.Requests)
	}
	if len(snap.Log) == 0 || snap.Prompts == nil || snap.Agents == nil || snap.Rooms == nil {
		t.Errorf("snapshot lacks a section: %+v", snap)
	}
	c, _, err := r.dial(snap.Cursor.String(), nil)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	second, err := ops.CreateTask(t.Context(), r.sess, ops.TaskInput{Description: "second", Runtime: config.RuntimeNone})
	if err != nil {
		t.Fatal(err)
	}
	for { // every event after the snapshot is about the second task
		m, ev := next(t, c)
		if m.Type != "event" || ev.TaskID != second.ID {
			t.Fatalf("event after the snapshot = %s %+v; want one of %s", m.Type, ev, second.ID)
		}
		if ev.Kind == string(bus.EvTaskCreated) {
			break
		}
	}
}

// publish puts n numbered events on the bus, from i.
func publish(r *rig, from, n int) {
	for i := from; i < from+n; i++ {
		r.s.Notify(bus.Event{Kind: bus.EvMessage, Actor: "oak_0001", Text: fmt.Sprintf("m%d", i)})
	}
}

func TestEventsInOrderAndResumeAcrossRestart(t *testing.T) {
	r := newRig(t, nil)
	start := r.snapshot().Cursor.String()
	publish(r, 0, 40)
	c, _, err := r.dial(start, nil)
	if err != nil {
		t.Fatal(err)
	}
	var resume string
	for i := range 20 {
		m, ev := nextText(t, c)
		if ev.Text != fmt.Sprintf("m%d", i) {
			t.Fatalf("event %d = %q", i, ev.Text)
		}
		resume = m.Cursor
	}
	if err := r.srv.Close(); err != nil {
		t.Fatal(err)
	}
	if _, _, err := c.ReadMessage(); err == nil {
		t.Log("read after Close may still drain buffered events") // not an error: only the close matters
	}
	c.Close()
	publish(r, 40, 10) // while no server runs
	r.open(nil)
	c, _, err = r.dial(resume, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	for i := 20; i < 50; i++ {
		if _, ev := nextText(t, c); ev.Text != fmt.Sprintf("m%d", i) {
			t.Fatalf("after resume: event %q, want m%d", ev.Text, i)
		}
	}
	publish(r, 50, 1) // live, after the catch-up
	if _, ev := nextText(t, c); ev.Text != "m50" {
		t.Fatalf("live event %q, want m50", ev.Text)
	}
}

func TestSlowClientIsToldToResnapshot(t *testing.T) {
	release, behind := make(chan struct{}), make(chan struct{})
	r := newRig(t, func(c *Config) {
		c.MaxQueue = 4
		c.beforeWrite = func() { <-release }
		c.onBehind = func() { close(behind) }
	})
	start := r.snapshot().Cursor.String()
	c, _, err := r.dial(start, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	publish(r, 0, 20)
	<-behind // the follower overflowed the queue while the writer was held
	close(release)
	var last string
	for i := 0; ; i++ {
		m, ev := next(t, c)
		if m.Type == "resnapshot" {
			if i == 0 || m.Cursor != last {
				t.Fatalf("resnapshot after %d events at %q; want after the last sent %q", i, m.Cursor, last)
			}
			break
		}
		if ev.Text != fmt.Sprintf("m%d", i) || i >= 20 {
			t.Fatalf("event %d = %q", i, ev.Text)
		}
		last = m.Cursor
	}
	_, _, err = c.ReadMessage()
	var ce *websocket.CloseError
	if !errors.As(err, &ce) || ce.Code != websocket.CloseTryAgainLater {
		t.Fatalf("after resnapshot: %v; want close %d", err, websocket.CloseTryAgainLater)
	}
}

func TestAuth(t *testing.T) {
	r := newRig(t, nil)
	cookie := "pm_token=" + testToken
	tests := []struct {
		name, method, path, body string
		hdr                      map[string]string
		want                     int
	}{
		{"state without token", "GET", "/api/state", "", map[string]string{}, 401},
		{"state with a wrong bearer", "GET", "/api/state", "", map[string]string{"Authorization": "Bearer nope"}, 401},
		{"state with the bearer", "GET", "/api/state", "", nil, 200},
		{"state with the cookie", "GET", "/api/state", "", map[string]string{"Cookie": cookie}, 200},
		{"state with a bad limit", "GET", "/api/state?limit=x", "", nil, 400},
		{"page opens without token", "GET", "/", "", map[string]string{}, 200},
		{"page with a wrong token", "GET", "/?token=nope", "", map[string]string{}, 401},
		{"page with the token sets the cookie", "GET", "/?token=" + testToken, "", map[string]string{}, 303},
		{"asset", "GET", "/assets/app.js", "", map[string]string{}, 200},
		{"post without token", "POST", "/api/say", `{}`, map[string]string{"Content-Type": "application/json"}, 401},
		{"cookie post without the CSRF header", "POST", "/api/say", `{"message":"hi","phase":"ph-999999"}`,
			map[string]string{"Cookie": cookie, "Content-Type": "application/json"}, 403},
		{"cookie post with the CSRF header", "POST", "/api/say", `{"message":"hi","phase":"ph-999999"}`,
			map[string]string{"Cookie": cookie, "Content-Type": "application/json", csrfHeader: "1"}, 404},
		{"cross-origin post", "POST", "/api/say", `{"message":"hi","phase":"ph-999999"}`,
			map[string]string{"Authorization": "Bearer " + testToken, "Content-Type": "application/json", "Origin": "http://evil.example"}, 403},
		{"get on a write action", "GET", "/api/say", "", nil, 405},
	}
	for _, tt := range tests {
		resp, b := r.do(tt.method, tt.path, tt.body, tt.hdr)
		if resp.StatusCode != tt.want {
			t.Errorf("%s: %d %s; want %d", tt.name, resp.StatusCode, b, tt.want)
		}
		if tt.want == 303 {
			c := resp.Header.Get("Set-Cookie")
			if !strings.Contains(c, cookie) || !strings.Contains(c, "HttpOnly") || !strings.Contains(c, "SameSite=Strict") {
				t.Errorf("%s: Set-Cookie %q", tt.name, c)
			}
		}
	}
}

func TestWebsocketRefusals(t *testing.T) {
	r := newRig(t, nil)
	tests := []struct {
		name   string
		cursor string
		hdr    http.Header
		want   int
	}{
		{"no token", "", http.Header{}, 401},
		{"cross-site origin", "", http.Header{"Cookie": {"pm_token=" + testToken}, "Origin": {"http://evil.example"}}, 403},
		{"bad cursor", "garbage", nil, 400},
	}
	for _, tt := range tests {
		c, resp, err := r.dial(tt.cursor, tt.hdr)
		if err == nil {
			c.Close()
			t.Errorf("%s: connected", tt.name)
			continue
		}
		if resp == nil || resp.StatusCode != tt.want {
			t.Errorf("%s: %v %v; want %d", tt.name, resp, err, tt.want)
		}
	}
	c, _, err := r.dial("", http.Header{"Cookie": {"pm_token=" + testToken}, "Origin": {"http://" + r.srv.Addr()}})
	if err != nil {
		t.Fatalf("same-origin websocket with the cookie: %v", err)
	}
	c.Close()
}

func TestActionBodies(t *testing.T) {
	r := newRig(t, func(c *Config) { c.MaxBody = 1024 })
	tests := []struct {
		name, path, body string
		hdr              map[string]string
		want             int
	}{
		{"oversized", "/api/say", `{"message":"` + strings.Repeat("x", 2048) + `"}`, nil, 413},
		{"malformed", "/api/say", `{"message":`, nil, 400},
		{"unknown field", "/api/say", `{"msg":"hi"}`, nil, 400},
		{"two values", "/api/answer", `{"id":"rq-1","text":"a"}{}`, nil, 400},
		{"not JSON", "/api/say", `message=hi`, map[string]string{"Authorization": "Bearer " + testToken, "Content-Type": "application/x-www-form-urlencoded"}, 415},
		{"unknown phase", "/api/say", `{"message":"hi","phase":"ph-999999"}`, nil, 404},
		{"unknown request", "/api/answer", `{"id":"rq-999999","text":"a"}`, nil, 404},
		{"empty task", "/api/task", `{"description":"","runtime":"none"}`, nil, 400},
	}
	for _, tt := range tests {
		resp, b := r.do("POST", tt.path, tt.body, tt.hdr)
		if resp.StatusCode != tt.want {
			t.Errorf("%s: %d %s; want %d", tt.name, resp.StatusCode, b, tt.want)
		}
	}
}

func TestActionsRunAsTheHuman(t *testing.T) {
	r := newRig(t, nil)
	resp, b := r.do("POST", "/api/task", jsonBody(ops.TaskInput{Description: "from the page", Runtime: config.RuntimeNone}), nil)
	if resp.StatusCode != 200 {
		t.Fatalf("create task: %d %s", resp.StatusCode, b)
	}
	tasks, _ := r.s.Tasks()
	if len(tasks) != 1 || tasks[0].Description != "from the page" {
		t.Fatalf("tasks after POST /api/task: %+v", tasks)
	}
	asker := store.Actor{Name: "oak_0001", Agent: &store.Agent{Name: "oak_0001", TaskID: tasks[0].ID}}
	rq, err := request.Create(r.s, fsstate.New(r.s), asker, "go on?")
	if err != nil {
		t.Fatal(err)
	}
	start := r.snapshot().Cursor.String()
	resp, b = r.do("POST", "/api/answer", jsonBody(ops.AnswerInput{ID: rq.ID, Text: "yes"}), nil)
	if resp.StatusCode != 200 {
		t.Fatalf("answer: %d %s", resp.StatusCode, b)
	}
	got, err := request.Get(r.s, fsstate.New(r.s), rq.ID)
	if err != nil || got.Status != request.Answered || got.Answer != "yes" {
		t.Fatalf("request after answer: %+v %v", got, err)
	}
	c, _, err := r.dial(start, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	if _, ev := next(t, c); ev.Kind != string(bus.EvRequestAnswered) || ev.Actor != "human" {
		t.Fatalf("answer on the bus as %+v; want request.answered by human", ev)
	}
	resp, b = r.do("POST", "/api/kill", jsonBody(ops.KillInput{Task: tasks[0].ID}), nil)
	if resp.StatusCode != 200 {
		t.Fatalf("kill: %d %s", resp.StatusCode, b)
	}
	if k, _ := r.s.Task(tasks[0].ID); k.Status != store.TaskKilled {
		t.Fatalf("task after kill: %s", k.Status)
	}
}

// A frame whose event names a task carries that task's health as the server
// works it out now: once the owner runs (a real process: health asks the OS)
// the agent.started frame says `working`, which no event states; an event
// that cannot change a task (a message) carries none.
func TestFramesCarryTaskHealth(t *testing.T) {
	r := newRig(t, nil)
	host := filepath.Join(t.TempDir(), "host")
	if err := os.WriteFile(host, []byte("#!/bin/sh\nexec sleep 300\n"), 0o755); err != nil {
		t.Fatal(err)
	}
	r.sess.Launcher = &agent.Launcher{Store: r.s, State: fsstate.New(r.s), Exe: host} // the process driver
	model := map[string]string{"OPENAI_API_KEY": "k", "OPENAI_BASE_URL": "http://127.0.0.1:1/v1", "PM_MODEL": "m"}
	r.sess.Getenv = func(k string) string { return model[k] } // the host runs no model
	// The server starts agents too (a health that shows a never-started
	// owner runs Settle, ops.settleSeen): it gets the same launcher.
	_ = r.srv.Close()
	r.open(nil)
	c, _, err := r.dial(r.snapshot().Cursor.String(), nil)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	r.s.Notify(bus.Event{Kind: bus.EvMessage, Actor: "human", TaskID: "tk-000000", Text: "hello"})
	if m, ev := next(t, c); ev.Kind != string(bus.EvMessage) || m.Health != nil {
		t.Fatalf("message frame %s with health %+v; want none", ev.Kind, m.Health)
	}
	tk, err := ops.CreateTask(t.Context(), r.sess, ops.TaskInput{Description: "owned", Runtime: config.RuntimeLLM})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if a, err := r.s.Agent(tk.Owner); err == nil {
			_ = r.sess.Launcher.StopHost(a)
		}
	})
	for {
		m, ev := next(t, c)
		if ev.Kind != string(bus.EvAgentStarted) {
			continue
		}
		if ev.TaskID != tk.ID || m.Health == nil || m.Health.State != task.StateWorking {
			t.Fatalf("agent.started of %s with health %+v; want %s working", ev.TaskID, m.Health, tk.ID)
		}
		return
	}
}

// A client that resumes from a cursor keeps the message log's depths: the
// server rebuilds the cascade from the bus before the cursor, so a reply to
// a call made before the reconnect sits at that call's depth.
func TestResumeKeepsLogDepth(t *testing.T) {
	r := newRig(t, nil)
	start := r.snapshot().Cursor.String()
	call := func(kind, from, to, text string, data bus.POMessage) {
		r.s.Notify(bus.Event{Kind: bus.POKind(kind), Actor: from, Agent: to, Text: from + " → " + to + ": " + text, Data: data})
	}
	call("request", "human", "coord", "help", bus.POMessage{Corr: "c1"})
	call("request", "coord", "reader", "list files", bus.POMessage{Corr: "c2", Cause: "c1"})
	c, _, err := r.dial(start, nil)
	if err != nil {
		t.Fatal(err)
	}
	var resume string
	for range 2 {
		m, _ := next(t, c)
		resume = m.Cursor
	}
	c.Close()
	publish(r, 0, 3) // not log lines: the seed reads past them
	call("reply", "reader", "coord", "README.md", bus.POMessage{Corr: "c2"})
	call("reply", "coord", "human", "done", bus.POMessage{Corr: "c1"})
	for _, tc := range []struct {
		name, cursor string
		depths       []int
	}{
		{"resumed after the calls", resume, []int{1, 0}},
		{"from the start", start, []int{0, 1, 1, 0}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			c, _, err := r.dial(tc.cursor, nil)
			if err != nil {
				t.Fatal(err)
			}
			defer c.Close()
			var got []int
			for len(got) < len(tc.depths) {
				if m, _ := next(t, c); m.Line != nil {
					got = append(got, m.Line.Depth)
				}
			}
			if fmt.Sprint(got) != fmt.Sprint(tc.depths) {
				t.Fatalf("depths %v, want %v", got, tc.depths)
			}
		})
	}
}

// Several open pages cost one health read per event, not one each.
func TestHealthReadOncePerEvent(t *testing.T) {
	r := newRig(t, nil)
	start := r.snapshot().Cursor.String()
	var conns []*websocket.Conn
	for range 3 {
		c, _, err := r.dial(start, nil)
		if err != nil {
			t.Fatal(err)
		}
		defer c.Close()
		conns = append(conns, c)
	}
	tk, err := ops.CreateTask(t.Context(), r.sess, ops.TaskInput{Description: "watched", Runtime: config.RuntimeNone})
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range conns {
		for {
			m, ev := next(t, c)
			if ev.Kind == string(bus.EvTaskCreated) && ev.TaskID == tk.ID {
				if m.Health == nil {
					t.Fatal("task.created without health")
				}
				break
			}
		}
	}
	r.srv.health.mu.Lock()
	reads := r.srv.health.reads
	r.srv.health.mu.Unlock()
	if created := 1; reads > created+1 { // task.created, and agent.created of its owner
		t.Fatalf("%d health reads for 3 pages", reads)
	}
}

package dashboard

import (
	"bytes"
	"encoding/json"
	"io"
	"net/http"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/gorilla/websocket"

	"github.com/plasmodium/pm/internal/agent"
	"github.com/plasmodium/pm/internal/cost"
	"github.com/plasmodium/pm/internal/driver/drivertest"
	"github.com/plasmodium/pm/internal/msglog"
	"github.com/plasmodium/pm/internal/ops"
	"github.com/plasmodium/pm/internal/state"
	"github.com/plasmodium/pm/internal/state/fsstate"
	"github.com/plasmodium/pm/internal/store"
	"github.com/plasmodium/pm/internal/store/storetest"
	"github.com/plasmodium/pm/internal/task"
)

const testToken = "tok-123"

// rig is a real store with a fake agent driver and a dashboard over it.
type rig struct {
	t    *testing.T
	s    *store.Store
	sess *ops.Session
	srv  *Server
}

func newRig(t *testing.T, tune func(*Config)) *rig {
	t.Helper()
	s := storetest.New(t)
	l := &agent.Launcher{Store: s, State: fsstate.New(s), Exe: "pm", Driver: drivertest.New()}
	r := &rig{t: t, s: s, sess: &ops.Session{Store: s, State: fsstate.New(s), Actor: store.Human, Launcher: l, Getenv: func(string) string { return "" }}}
	r.open(tune)
	return r
}

// open starts a dashboard over the rig's store (again, after a restart).
func (r *rig) open(tune func(*Config)) {
	r.t.Helper()
	cfg := Config{Addr: "127.0.0.1:0", Token: testToken, Session: r.sess}
	if tune != nil {
		tune(&cfg)
	}
	srv, err := Open(cfg)
	if err != nil {
		r.t.Fatal(err)
	}
	r.srv = srv
	r.t.Cleanup(func() { _ = srv.Close() })
}

func (r *rig) url(path string) string { return "http://" + r.srv.Addr() + path }

// do sends a request with the given headers (nil: the bearer token).
func (r *rig) do(method, path, body string, hdr map[string]string) (*http.Response, []byte) {
	r.t.Helper()
	req, err := http.NewRequest(method, r.url(path), strings.NewReader(body))
	if err != nil {
		r.t.Fatal(err)
	}
	if hdr == nil {
		hdr = map[string]string{"Authorization": "Bearer " + testToken, "Content-Type": "application/json"}
	}
	for k, v := range hdr {
		req.Header.Set(k, v)
	}
	c := &http.Client{CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
	resp, err := c.Do(req)
	if err != nil {
		r.t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return resp, b
}

func (r *rig) snapshot() Snapshot {
	r.t.Helper()
	resp, b := r.do("GET", "/api/state", "", nil)
	if resp.StatusCode != 200 {
		r.t.Fatalf("GET /api/state = %d %s", resp.StatusCode, b)
	}
	var snap Snapshot
	if err := json.Unmarshal(b, &snap); err != nil {
		r.t.Fatal(err)
	}
	return snap
}

// dial opens the event stream after cursor.
func (r *rig) dial(cursor string, hdr http.Header) (*websocket.Conn, *http.Response, error) {
	if hdr == nil {
		hdr = http.Header{"Authorization": {"Bearer " + testToken}}
	}
	u := "ws://" + r.srv.Addr() + "/api/events?cursor=" + url.QueryEscape(cursor)
	return websocket.DefaultDialer.Dial(u, hdr)
}

// message is one websocket message as the server sends it.
type message struct {
	Type   string          `json:"type"`
	Cursor string          `json:"cursor"`
	Event  json.RawMessage `json:"event"`
	Health *task.Health    `json:"health"`
	Line   *msglog.Line    `json:"line"`
}

type eventBody struct {
	Kind   string `json:"kind"`
	Actor  string `json:"actor"`
	Text   string `json:"text"`
	TaskID string `json:"task_id"`
}

// next reads one message, failing the test after a generous bound (a
// hang is a failure, not a timing assertion).
func next(t *testing.T, c *websocket.Conn) (message, eventBody) {
	t.Helper()
	_ = c.SetReadDeadline(deadline())
	_, b, err := c.ReadMessage()
	if err != nil {
		t.Fatalf("read: %v", err)
	}
	var m message
	var ev eventBody
	if err := json.Unmarshal(b, &m); err != nil {
		t.Fatalf("bad message %s: %v", b, err)
	}
	if m.Event != nil {
		_ = json.Unmarshal(m.Event, &ev)
	}
	return m, ev
}

// nextText reads events until one carries text (skipping others).
func nextText(t *testing.T, c *websocket.Conn) (message, eventBody) {
	t.Helper()
	for {
		m, ev := next(t, c)
		if m.Type != "event" || ev.Text != "" {
			return m, ev
		}
	}
}

// deadline bounds one websocket read: a hang fails, it is no timing assertion.
func deadline() time.Time { return time.Now().Add(30 * time.Second) }

func jsonBody(v any) string {
	var b bytes.Buffer
	_ = json.NewEncoder(&b).Encode(v)
	return b.String()
}

// recordCost puts e in the rig's cost ledger, priced as a host prices it.
func (r *rig) recordCost(e cost.Entry) (cost.Entry, error) {
	return state.RecordCost(r.sess.State, e, r.s.Now(), r.s.Config().Prices)
}

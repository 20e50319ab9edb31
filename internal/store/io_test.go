package store_test

import (
	"bytes"
	"errors"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/plasmodium/pm/internal/errs"
	"github.com/plasmodium/pm/internal/ids"
	"github.com/plasmodium/pm/internal/store"
)

// idBytes makes the store draw ids from b: three bytes per request id.
func idBytes(s *store.Store, b ...byte) { s.IDs = ids.Source{Rand: bytes.NewReader(b)} }

func TestCreateRequestPicksAFreeID(t *testing.T) {
	s, _ := newStore(t)
	idBytes(s, 0, 0, 1, 0, 0, 1, 0, 0, 2)
	first := &store.Request{From: "a", Question: "q1", Status: store.RequestPending}
	if err := s.CreateRequest(first); err != nil || first.ID != "rq-000001" {
		t.Fatalf("first = %q, %v", first.ID, err)
	}
	second := &store.Request{From: "b", Question: "q2", Status: store.RequestPending}
	if err := s.CreateRequest(second); err != nil || second.ID != "rq-000002" {
		t.Fatalf("second = %q, %v; want the taken id skipped", second.ID, err)
	}
	if r, err := s.Request("rq-000001"); err != nil || r.Question != "q1" {
		t.Fatalf("the taken request was overwritten: %+v, %v", r, err)
	}
	idBytes(s, bytes.Repeat([]byte{0, 0, 1}, 16)...)
	if err := s.CreateRequest(&store.Request{}); !errs.Is(err, errs.Failure) {
		t.Fatalf("16 taken ids = %v, want a failure", err)
	}
}

func TestRequestLookupCodes(t *testing.T) {
	s, _ := newStore(t)
	tests := []struct {
		id   string
		code errs.Code
	}{
		{"rq-abcdef", errs.NotFound},
		{"rq-../x", errs.Usage},
		{"tk-abcdef", errs.Usage},
	}
	for _, tt := range tests {
		if _, err := s.Request(tt.id); errs.CodeOf(err) != tt.code {
			t.Errorf("Request(%q) = %v, want exit %d", tt.id, err, tt.code)
		}
		if _, err := s.UpdateRequest(tt.id, func(*store.Request) error { return nil }); errs.CodeOf(err) != tt.code {
			t.Errorf("UpdateRequest(%q) = %v, want exit %d", tt.id, err, tt.code)
		}
	}
	if _, err := os.Stat(s.RequestPath("rq-abcdef")); !os.IsNotExist(err) {
		t.Errorf("UpdateRequest of a missing request created it")
	}
}

func TestUpdateRequestWritesOnlyOnSuccess(t *testing.T) {
	s, _ := newStore(t)
	r := &store.Request{From: "a", Question: "q", Status: store.RequestPending}
	if err := s.CreateRequest(r); err != nil {
		t.Fatal(err)
	}
	refuse := errors.New("no")
	if _, err := s.UpdateRequest(r.ID, func(r *store.Request) error { r.Answer = "lost"; return refuse }); err != refuse {
		t.Fatalf("err = %v", err)
	}
	got, err := s.UpdateRequest(r.ID, func(r *store.Request) error { r.Status, r.Answer = store.RequestAnswered, "yes"; return nil })
	if err != nil || got.Answer != "yes" {
		t.Fatalf("update = %+v, %v", got, err)
	}
	if again, _ := s.Request(r.ID); again.Status != store.RequestAnswered || again.Answer != "yes" {
		t.Fatalf("stored %+v", again)
	}
}

func TestRequestsOldestFirstSkippingBadFiles(t *testing.T) {
	s, warn := newStore(t)
	if rs, err := s.Requests(); err != nil || rs == nil || len(rs) != 0 {
		t.Fatalf("no requests = %#v, %v; want an empty list", rs, err)
	}
	base := time.Date(2024, 1, 1, 0, 0, 0, 0, time.UTC)
	idBytes(s, 0, 0, 2, 0, 0, 1)
	for i, q := range []string{"newer", "older"} {
		if err := s.CreateRequest(&store.Request{Question: q, CreatedAt: base.Add(-time.Duration(i) * time.Hour)}); err != nil {
			t.Fatal(err)
		}
	}
	if err := os.WriteFile(s.RequestPath("rq-00000f"), []byte("{broken"), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(s.RequestsDir()+"/notes.json", []byte("{}"), 0o644); err != nil {
		t.Fatal(err)
	}
	rs, err := s.Requests()
	if err != nil || len(rs) != 2 || rs[0].Question != "older" || rs[1].Question != "newer" {
		t.Fatalf("Requests = %+v, %v", rs, err)
	}
	if w := warn.String(); strings.Count(w, "\n") != 1 || !strings.Contains(w, "skipped request rq-00000f") {
		t.Fatalf("warnings %q", w)
	}
}

func TestCreateAgentOnlyOnce(t *testing.T) {
	s, _ := newStore(t)
	for i, want := range []bool{true, false} {
		created, err := s.CreateAgent(&store.Agent{Name: "greeter", Prompt: "p" + string(rune('0'+i)), Status: store.AgentPending})
		if err != nil || created != want {
			t.Fatalf("create %d = %v, %v; want %v", i, created, err, want)
		}
	}
	if a, err := s.Agent("greeter"); err != nil || a.Prompt != "p0" {
		t.Fatalf("record %+v, %v: the second create must not overwrite", a, err)
	}
}

func TestUpdateAgentUnchangedWritesNothing(t *testing.T) {
	s, _ := newStore(t)
	if err := s.WriteAgent(&store.Agent{Name: "oak_0001", Status: store.AgentPending}); err != nil {
		t.Fatal(err)
	}
	before, _ := os.ReadFile(s.AgentPath("oak_0001"))
	a, err := s.UpdateAgent("oak_0001", func(r *store.Agent) error { r.Reason = "not kept"; return store.ErrUnchanged })
	if err != nil || a == nil {
		t.Fatalf("unchanged update = %v, %v", a, err)
	}
	if after, _ := os.ReadFile(s.AgentPath("oak_0001")); !bytes.Equal(before, after) {
		t.Fatalf("ErrUnchanged rewrote the record:\n%s", after)
	}
}

func TestInboxCursorAndReaders(t *testing.T) {
	s, _ := newStore(t)
	if off := s.InboxCursor("reader"); off != 0 {
		t.Fatalf("no cursor = %d", off)
	}
	if err := s.AppendInbox("reader", map[string]string{"text": "one"}); err != nil {
		t.Fatal(err)
	}
	tail := s.InboxTail("reader") // from here on: "one" is not read
	if err := s.AppendInbox("reader", map[string]string{"text": "two"}); err != nil {
		t.Fatal(err)
	}
	if got := lines(t, tail); got != `{"text":"two"}` {
		t.Fatalf("tail read %q", got)
	}
	all := s.InboxFrom("reader", 0)
	if got := lines(t, all); got != `{"text":"one"} {"text":"two"}` {
		t.Fatalf("from 0 read %q", got)
	}
	if err := s.SetInboxCursor("reader", all.Offset); err != nil {
		t.Fatal(err)
	}
	if got := lines(t, s.InboxFrom("reader", s.InboxCursor("reader"))); got != "" {
		t.Fatalf("from the saved cursor read %q", got)
	}
}

func lines(t *testing.T, r *store.LineReader) string {
	t.Helper()
	var out []string
	if err := r.Next(func(raw []byte) error { out = append(out, string(raw)); return nil }); err != nil {
		t.Fatal(err)
	}
	return strings.Join(out, " ")
}

func TestCreatePromptRefusesAnExistingName(t *testing.T) {
	s, _ := newStore(t)
	if err := s.CreatePrompt("helper", []byte("first\n")); err != nil {
		t.Fatal(err)
	}
	if err := s.CreatePrompt("helper", []byte("second\n")); !errors.Is(err, os.ErrExist) {
		t.Fatalf("second create = %v, want os.ErrExist", err)
	}
	if data, _ := os.ReadFile(s.PromptPath("helper")); string(data) != "first\n" {
		t.Fatalf("file = %q", data)
	}
	if err := s.RemovePrompt("helper"); err != nil {
		t.Fatal(err)
	}
	if err := s.CreatePrompt("helper", []byte("again\n")); err != nil {
		t.Fatalf("create after remove = %v", err)
	}
}

func TestSupervisorLockIsExclusive(t *testing.T) {
	s, _ := newStore(t)
	unlock, ok, err := s.TryLockSupervisor()
	if err != nil || !ok {
		t.Fatalf("first = %v, %v", ok, err)
	}
	if _, ok, err := s.TryLockSupervisor(); err != nil || ok {
		t.Fatalf("second while held = %v, %v; want refused", ok, err)
	}
	if err := unlock(); err != nil {
		t.Fatal(err)
	}
	again, ok, err := s.TryLockSupervisor()
	if err != nil || !ok {
		t.Fatalf("after unlock = %v, %v", ok, err)
	}
	_ = again()
}

func TestOpenLogAppends(t *testing.T) {
	s, _ := newStore(t)
	if err := os.RemoveAll(s.LogsDir()); err != nil {
		t.Fatal(err)
	}
	for _, text := range []string{"a\n", "b\n"} {
		f, err := s.OpenLog("oak_0001")
		if err != nil {
			t.Fatal(err)
		}
		if _, err := f.WriteString(text); err != nil {
			t.Fatal(err)
		}
		f.Close()
	}
	if data, _ := os.ReadFile(s.LogPath("oak_0001")); string(data) != "a\nb\n" {
		t.Fatalf("log = %q", data)
	}
}

package cmdutil

import (
	"bytes"
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/plasmodium/pm/internal/errs"
	"github.com/plasmodium/pm/internal/store"
	"github.com/plasmodium/pm/internal/store/storetest"
)

func newStore(t *testing.T) *store.Store {
	t.Helper()
	s := storetest.New(t)
	return s
}

func testFactory(env map[string]string, wd string) (*Factory, *bytes.Buffer, *bytes.Buffer) {
	out, errOut := &bytes.Buffer{}, &bytes.Buffer{}
	f := New(context.Background(), strings.NewReader(""), out, errOut)
	f.Getenv = func(k string) string { return env[k] }
	f.Environ = func() []string { return nil }
	f.Getwd = func() (string, error) { return wd, nil }
	return f, out, errOut
}

func TestFactoryStore(t *testing.T) {
	project := t.TempDir()
	root, _, err := store.Init(project, time.Now)
	if err != nil {
		t.Fatal(err)
	}
	deep := filepath.Join(project, "src", "pkg")
	if err := os.MkdirAll(deep, 0o755); err != nil {
		t.Fatal(err)
	}
	elsewhere := t.TempDir()
	fixed := time.Date(2030, 1, 1, 0, 0, 0, 0, time.UTC)

	f, _, errOut := testFactory(nil, deep)
	f.Now = func() time.Time { return fixed }
	s, err := f.Store()
	if err != nil || s.Root != root {
		t.Fatalf("Store from a subdirectory = %v, %v; want %s", s, err, root)
	}
	if !s.Now().Equal(fixed) {
		t.Error("the store does not use the factory's clock")
	}
	s.Warnf("hello")
	if !strings.Contains(errOut.String(), "hello") {
		t.Error("the store's warnings do not go to the factory's stderr")
	}

	f, _, _ = testFactory(map[string]string{"PM_HOME": root}, elsewhere)
	if s, err := f.Store(); err != nil || s.Root != root {
		t.Fatalf("Store with PM_HOME = %v, %v", s, err)
	}
	f, _, _ = testFactory(nil, elsewhere)
	if _, err := f.Store(); !errs.Is(err, errs.NotFound) {
		t.Fatalf("Store with no state dir = %v, want exit 4", err)
	}
	f, _, _ = testFactory(map[string]string{"PM_HOME": filepath.Join(elsewhere, ".plasmodium")}, deep)
	if _, err := f.Store(); !errs.Is(err, errs.NotFound) {
		t.Fatalf("Store with PM_HOME naming nothing = %v, want exit 4", err)
	}
	f, _, _ = testFactory(nil, deep)
	f.Getwd = func() (string, error) { return "", errors.New("no cwd") }
	if _, err := f.Store(); err == nil {
		t.Fatal("Store without a working directory succeeded")
	}
}

func TestFactoryActor(t *testing.T) {
	s := newStore(t)
	if err := s.WriteAgent(&store.Agent{Name: "oak_0001", TaskID: "tk-000001", Role: "qa", Status: store.AgentRunning}); err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		agent string
		want  string
		human bool
		code  errs.Code
	}{
		{agent: "", want: "human", human: true},
		{agent: "human", want: "human", human: true},
		{agent: "oak_0001", want: "oak_0001"},
		{agent: "elm_0009", code: errs.NotFound},
		{agent: "../x", code: errs.Usage},
	}
	for _, tt := range tests {
		f, _, _ := testFactory(map[string]string{"PM_AGENT": tt.agent}, t.TempDir())
		st, err := f.State(s)
		if err != nil {
			t.Fatal(err)
		}
		a, err := f.Actor(st)
		if tt.code != 0 {
			if errs.CodeOf(err) != tt.code || !strings.Contains(err.Error(), "PM_AGENT") {
				t.Errorf("Actor(%q) = %+v, %v; want exit %d naming PM_AGENT", tt.agent, a, err, tt.code)
			}
			continue
		}
		if err != nil || a.Name != tt.want || a.IsHuman() != tt.human {
			t.Errorf("Actor(%q) = %+v, %v", tt.agent, a, err)
		}
		if !tt.human && (a.Agent == nil || a.Role() != "qa") {
			t.Errorf("Actor(%q) lost its record: %+v", tt.agent, a.Agent)
		}
	}
}

func TestPrintJSON(t *testing.T) {
	var b bytes.Buffer
	if err := PrintJSON(&b, map[string]int{"a": 1}); err != nil || b.String() != "{\n  \"a\": 1\n}\n" {
		t.Fatalf("PrintJSON = %q, %v", b.String(), err)
	}
	b.Reset()
	if err := PrintJSONLine(&b, map[string]string{"a": "x\ny"}); err != nil || b.String() != "{\"a\":\"x\\ny\"}\n" {
		t.Fatalf("PrintJSONLine = %q, %v", b.String(), err)
	}
}

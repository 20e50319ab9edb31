package cli_test

import (
	"bytes"
	"context"
	"io"
	"strings"
	"testing"
	"time"

	"github.com/plasmodium/pm/internal/cli"
	"github.com/plasmodium/pm/internal/cmdutil"
	"github.com/plasmodium/pm/internal/ids"
)

// counter is a deterministic byte source: ids come out as tk-000102,
// then ph-030405, and so on.
type counter struct{ n byte }

func (c *counter) Read(p []byte) (int, error) {
	for i := range p {
		p[i] = c.n
		c.n++
	}
	return len(p), nil
}

// harness runs pm in-process with injected streams, clock, ids and
// environment: the way every command is meant to be testable.
type harness struct {
	dir   string
	env   map[string]string
	ids   *counter
	now   time.Time
	stdin string
}

func (h *harness) run(args ...string) (code int, stdout, stderr string) {
	var out, errb bytes.Buffer
	f := &cmdutil.Factory{
		IO:         cmdutil.IOStreams{In: strings.NewReader(h.stdin), Out: &out, ErrOut: &errb},
		Context:    context.Background(),
		Getenv:     func(k string) string { return h.env[k] },
		Environ:    func() []string { return nil },
		Getwd:      func() (string, error) { return h.dir, nil },
		Now:        func() time.Time { return h.now },
		IDs:        ids.Source{Rand: h.ids},
		Executable: func() (string, error) { return "/nonexistent/pm", nil },
	}
	code = cli.Run(f, args)
	return code, out.String(), errb.String()
}

func TestRunInProcess(t *testing.T) {
	h := &harness{dir: t.TempDir(), env: map[string]string{"PM_NO_SUPERVISOR": "1"}, ids: &counter{}, now: time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)}
	steps := []struct {
		args     []string
		code     int
		out, err string // substrings
	}{
		{[]string{"status"}, 4, "", "no .plasmodium found"},
		{[]string{"init"}, 0, "Initialised", ""},
		{[]string{"task", "Write the docs", "--runtime", "none"}, 0, "tk-000102 active owner @", ""},
		{[]string{"status", "--json"}, 0, `"created_at": "2026-01-02T03:04:05Z"`, ""},
		{[]string{"say", "hello"}, 5, "", "no active phase"},
		{[]string{"phase", "Design", "--limit", "2", "--task", "tk-000102"}, 0, `"Design" open: limit 2`, ""},
		{[]string{"say", "first"}, 0, "msg-", ""},
		{[]string{"say", "second"}, 0, "now closed", ""},
		{[]string{"say", "third"}, 5, "", "no active phase"},
		{[]string{"say", "third", "--phase", "ph-060708"}, 5, "", "is closed (limit)"},
		{[]string{"chat", "--phase", "ph-000000"}, 4, "", "no phase ph-000000"},
		{[]string{"kill", "tk-zz"}, 2, "", "Try: "},
		{[]string{"frobnicate"}, 2, "", "unknown command"},
	}
	for _, st := range steps {
		code, out, errOut := h.run(st.args...)
		if code != st.code || !strings.Contains(out, st.out) || !strings.Contains(errOut, st.err) {
			t.Fatalf("pm %v: exit %d (want %d)\nstdout: %s\nstderr: %s", st.args, code, st.code, out, errOut)
		}
	}
}

// pm reset asks a person at a terminal before it deletes everything (not
// only when tasks are live); no is no change, --yes and scripts are not asked.
func TestResetAsksOnATerminal(t *testing.T) {
	h := &harness{dir: t.TempDir(), env: map[string]string{"PM_NO_SUPERVISOR": "1"}, ids: &counter{}, now: time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)}
	if code, _, errOut := h.run("init"); code != 0 {
		t.Fatal(errOut)
	}
	if code, _, errOut := h.run("task", "Keep me", "--runtime", "none"); code != 0 {
		t.Fatal(errOut)
	}
	h.run("kill", "tk-000102") // nothing live: only the confirmation stands in the way
	terminal := cmdutil.InteractiveTerminal
	t.Cleanup(func() { cmdutil.InteractiveTerminal = terminal })
	cmdutil.InteractiveTerminal = func(io.Reader) bool { return true }
	steps := []struct {
		stdin    string
		args     []string
		out, err string
	}{
		{"n\n", []string{"reset"}, "", "reset: nothing changed"},
		{"\n", []string{"reset"}, "", "reset: nothing changed"},
		{"", []string{"status", "--all"}, "Keep me", ""},
		{"y\n", []string{"reset"}, "reset: 1 task removed", "Go on? [y/N]"},
		{"", []string{"reset", "--yes"}, "reset: 0 tasks removed", ""},
	}
	for _, st := range steps {
		h.stdin = st.stdin
		code, out, errOut := h.run(st.args...)
		if code != 0 || !strings.Contains(out, st.out) || !strings.Contains(errOut, st.err) {
			t.Fatalf("pm %v <<< %q: exit %d\nstdout: %s\nstderr: %s", st.args, st.stdin, code, out, errOut)
		}
	}
	if _, _, errOut := h.run("reset", "--yes"); strings.Contains(errOut, "[y/N]") {
		t.Error("--yes asked")
	}
}

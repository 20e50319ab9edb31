package cli

import (
	"bytes"
	"context"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/plasmodium/pm/internal/cmdutil"
)

func TestClientFiles(t *testing.T) {
	dir := t.TempDir()
	ctx := filepath.Join(dir, "ctx.md")
	if err := os.WriteFile(ctx, []byte("the context"), 0o644); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		name  string
		args  []string
		want  []string
		input string // what the command reads on stdin; "" = the caller's
		err   string
	}{
		{"no file", []string{"say", "hi"}, []string{"say", "hi"}, "", ""},
		{"flag and value", []string{"subtask", "x", "--context-file", ctx, "--json"}, []string{"subtask", "x", "--json", "--context-file", "-"}, "the context", ""},
		{"flag=value", []string{"subtask", "--context-file=" + ctx, "x"}, []string{"subtask", "x", "--context-file", "-"}, "the context", ""},
		{"standard input stays", []string{"subtask", "x", "--context-file", "-"}, []string{"subtask", "x", "--context-file", "-"}, "", ""},
		{"after -- it is text", []string{"say", "--", "--context-file", ctx}, []string{"say", "--", "--context-file", ctx}, "", ""},
		{"a device is refused on the client", []string{"subtask", "x", "--context-file", "/dev/zero"}, nil, "", "not a regular file"},
		{"twice is refused (the host must never open the second)", []string{"subtask", "x", "--context-file", ctx, "--context-file", "/etc/shadow"}, nil, "", "more than once"},
		{"twice with = is refused", []string{"subtask", "--context-file=" + ctx, "--context-file=/etc/shadow", "x"}, nil, "", "more than once"},
		{"a missing file", []string{"subtask", "x", "--context-file", filepath.Join(dir, "nope")}, nil, "", "no such file"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			caller := strings.NewReader("")
			args, in, err := clientFiles(tc.args, caller)
			if tc.err != "" {
				if err == nil || !strings.Contains(err.Error(), tc.err) {
					t.Fatalf("err %v, want %q", err, tc.err)
				}
				return
			}
			if err != nil || !slices.Equal(args, tc.want) {
				t.Fatalf("args %q err %v, want %q", args, err, tc.want)
			}
			if tc.input == "" {
				if in != io.Reader(caller) {
					t.Fatal("the caller's input was replaced")
				}
				return
			}
			data, _ := io.ReadAll(in)
			if string(data) != tc.input {
				t.Fatalf("input %q, want %q", data, tc.input)
			}
		})
	}
}

func TestRunAgentRefuses(t *testing.T) {
	for _, args := range [][]string{{"init"}, {"dashboard"}, {"top"}, {"talk", "greeter"}, {"demo"}, {"supervise"},
		{"agent-run", "oak"}, {"mcp", "--http", "127.0.0.1:0"}, {"mcp", "--http=127.0.0.1:0"}} {
		var errOut bytes.Buffer
		f := &cmdutil.Factory{IO: cmdutil.IOStreams{In: strings.NewReader(""), Out: io.Discard, ErrOut: &errOut}, Context: context.Background(),
			Getenv: func(string) string { return "" }}
		code := RunAgent(f, args)
		if code != 5 || !strings.Contains(errOut.String(), "not available to agents") || !strings.Contains(errOut.String(), "Try:") {
			t.Errorf("pm %v: exit %d, %q", args, code, errOut.String())
		}
	}
}

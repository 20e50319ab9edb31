package capability_test

import (
	"context"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/plasmodium/pm/internal/capability"
	"github.com/plasmodium/pm/internal/state/fsstate"
	"github.com/plasmodium/pm/internal/store"
)

// workspace makes a project with a store, a few files, and a directory
// outside it that symlinks point to.
func workspace(t testing.TB) (*capability.Env, string, string) {
	t.Helper()
	s := newStore(t)
	ws := s.ProjectDir()
	outside := t.TempDir()
	write := func(p, content string) {
		t.Helper()
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	write(filepath.Join(ws, "README.md"), "# hello\n")
	write(filepath.Join(ws, "src", "main.go"), "package main\n")
	write(filepath.Join(ws, "big.txt"), strings.Repeat("x", capability.MaxRead+100))
	write(filepath.Join(ws, "bin.dat"), "ab\x00cd")
	write(filepath.Join(outside, "secret.txt"), "top secret\n")
	must(t, os.Symlink(filepath.Join(outside, "secret.txt"), filepath.Join(ws, "leak.txt")))
	must(t, os.Symlink(outside, filepath.Join(ws, "outdir")))
	must(t, os.Symlink(filepath.Join(outside, "nothing-yet"), filepath.Join(ws, "dangling")))
	must(t, os.Symlink("src", filepath.Join(ws, "srclink")))
	return &capability.Env{Store: s, State: fsstate.New(s), Actor: store.Human, Workspace: ws}, ws, outside
}

func must(t testing.TB, err error) {
	t.Helper()
	if err != nil {
		t.Fatal(err)
	}
}

func TestReadFile(t *testing.T) {
	env, ws, _ := workspace(t)
	read := tool(t, env, obj("read_file"), "read_file")
	cases := []struct {
		name string
		args any
		want []string
	}{
		{"relative", m{"path": "README.md"}, []string{"# hello"}},
		{"nested", m{"path": "src/main.go"}, []string{"package main"}},
		{"absolute inside", m{"path": filepath.Join(ws, "README.md")}, []string{"# hello"}},
		{"symlink inside", m{"path": "srclink/main.go"}, []string{"package main"}},
		{"interior dotdot stays inside", m{"path": "src/../README.md"}, []string{"# hello"}},
		{"capped", m{"path": "big.txt"}, []string{"[cut: showed bytes 0-65536 of 65636; read on with offset 65536]"}},
		{"offset", m{"path": "big.txt", "offset": capability.MaxRead}, []string{strings.Repeat("x", 100)}},
		{"binary", m{"path": "bin.dat"}, []string{"binary file of 5 bytes"}},
		{"missing", m{"path": "nope.txt"}, []string{"not found: no file nope.txt"}},
		{"directory", m{"path": "src"}, []string{"bad arguments: src is a directory"}},
		{"no path", m{}, []string{"bad arguments"}},
		{"bad json", `{"path":`, []string{"bad arguments: cannot read the arguments"}},
		// Escapes.
		{"dotdot", m{"path": "../x"}, []string{"bad arguments", "outside the workspace"}},
		{"deep dotdot", m{"path": "src/../../x"}, []string{"outside the workspace"}},
		{"absolute outside", m{"path": "/etc/passwd"}, []string{"outside the workspace"}},
		{"symlink out", m{"path": "leak.txt"}, []string{"outside the workspace (through a symlink)"}},
		{"through symlinked dir", m{"path": "outdir/secret.txt"}, []string{"through a symlink"}},
		{"dangling symlink", m{"path": "dangling"}, []string{"dangling"}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			got := call(t, read, c.args)
			mustContain(t, got, c.want...)
			if strings.Contains(got, "top secret") {
				t.Fatalf("read outside the workspace: %s", got)
			}
		})
	}
	if got := call(t, read, m{"path": "big.txt"}); len(got) > capability.MaxRead+200 {
		t.Fatalf("read_file returned %d bytes", len(got))
	}
}

func TestListFiles(t *testing.T) {
	env, _, _ := workspace(t)
	list := tool(t, env, obj("list_files"), "list_files")
	got := call(t, list, m{})
	mustContain(t, got, "README.md", "src/", "leak.txt@", ".plasmodium/")
	if strings.Contains(got, "src/main.go") {
		t.Fatalf("non-recursive listing went into src:\n%s", got)
	}
	got = call(t, list, m{"recursive": true})
	mustContain(t, got, "src/main.go", ".plasmodium/", "outdir@")
	if strings.Contains(got, "config.json") || strings.Contains(got, "secret.txt") {
		t.Fatalf("recursive listing went into .plasmodium or through a symlink:\n%s", got)
	}
	mustContain(t, call(t, list, m{"path": "src"}), "src/main.go")
	mustContain(t, call(t, list, m{"path": "../"}), "outside the workspace")
	mustContain(t, call(t, list, m{"path": "outdir"}), "through a symlink")
	mustContain(t, call(t, list, m{"path": "README.md"}), "is a file")

	// The entry cap.
	many := filepath.Join(env.Workspace, "many")
	must(t, os.Mkdir(many, 0o755))
	for i := range capability.MaxEntries + 5 {
		must(t, os.WriteFile(filepath.Join(many, "f"+strconv.Itoa(i)), nil, 0o644))
	}
	got = call(t, list, m{"path": "many"})
	mustContain(t, got, "[cut: more than 500 entries")
	if n := strings.Count(got, "\n"); n != capability.MaxEntries {
		t.Fatalf("%d lines listed", n)
	}
}

func TestWriteFile(t *testing.T) {
	env, ws, outside := workspace(t)
	write := tool(t, env, obj("write_file"), "write_file")
	cases := []struct {
		name string
		args any
		want string
		file string // relative to ws; checked to hold content when set
		body string
	}{
		{"new file", m{"path": "notes.md", "content": "hi"}, "wrote 2 bytes to notes.md", "notes.md", "hi"},
		{"parents created", m{"path": "a/b/c.txt", "content": "deep"}, "wrote 4 bytes to a/b/c.txt", "a/b/c.txt", "deep"},
		{"replace", m{"path": "README.md", "content": "new"}, "wrote", "README.md", "new"},
		{"append", m{"path": "README.md", "content": "+more", "append": true}, "appended 5 bytes", "README.md", "new+more"},
		{"empty content", m{"path": "empty.txt", "content": ""}, "wrote 0 bytes", "empty.txt", ""},
		{"through symlink inside", m{"path": "srclink/x.go", "content": "package x"}, "wrote 9 bytes to src/x.go", "src/x.go", "package x"},
		{"no content", m{"path": "x"}, "bad arguments", "", ""},
		{"too big", m{"path": "x", "content": strings.Repeat("x", capability.MaxWrite+1)}, "over the 1024 KiB limit", "", ""},
		{"directory", m{"path": "src", "content": "x"}, "is a directory", "", ""},
		// Escapes and the state directory.
		{"dotdot", m{"path": "../escape.txt", "content": "x"}, "outside the workspace", "", ""},
		{"absolute outside", m{"path": filepath.Join(outside, "abs.txt"), "content": "x"}, "outside the workspace", "", ""},
		{"symlink out", m{"path": "leak.txt", "content": "pwned"}, "through a symlink", "", ""},
		{"into symlinked dir", m{"path": "outdir/new.txt", "content": "x"}, "through a symlink", "", ""},
		{"dangling symlink", m{"path": "dangling", "content": "x"}, "dangling", "", ""},
		{"state dir", m{"path": ".plasmodium/config.json", "content": "{}"}, "pm's state directory", "", ""},
		{"state dir new file", m{"path": ".plasmodium/prompts/evil.md", "content": "x"}, "pm's state directory", "", ""},
		{"state dir itself", m{"path": "src/../.plasmodium", "content": "x"}, "pm's state directory", "", ""},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			mustContain(t, call(t, write, c.args), c.want)
			if c.file != "" {
				data, err := os.ReadFile(filepath.Join(ws, c.file))
				must(t, err)
				if string(data) != c.body {
					t.Fatalf("%s holds %q, want %q", c.file, data, c.body)
				}
			}
		})
	}
	if data, _ := os.ReadFile(filepath.Join(outside, "secret.txt")); string(data) != "top secret\n" {
		t.Fatalf("a file outside was changed: %q", data)
	}
	for _, p := range []string{filepath.Join(outside, "abs.txt"), filepath.Join(outside, "new.txt"), filepath.Join(outside, "nothing-yet"),
		filepath.Join(filepath.Dir(ws), "escape.txt"), filepath.Join(ws, ".plasmodium", "prompts", "evil.md")} {
		if _, err := os.Stat(p); err == nil {
			t.Fatalf("%s was written", p)
		}
	}
	if data, _ := os.ReadFile(filepath.Join(ws, ".plasmodium", "config.json")); string(data) == "{}" {
		t.Fatal("config.json was overwritten")
	}
}

func TestRunCommand(t *testing.T) {
	env, ws, _ := workspace(t)
	t.Setenv("PM_TEST_API_KEY", "sk-should-not-leak")
	run := tool(t, env, obj("run_command"), "run_command")
	cases := []struct {
		name string
		args any
		want []string
		not  string
	}{
		{"ok", m{"command": "echo hi; echo err >&2"}, []string{"exit code 0", "hi", "err"}, ""},
		{"cwd is the workspace", m{"command": "pwd"}, []string{"exit code 0", ws}, ""},
		{"exit code", m{"command": "exit 3"}, []string{"exit code 3", "(no output)"}, ""},
		{"secrets stripped", m{"command": "env"}, []string{"exit code 0"}, "sk-should-not-leak"},
		{"output capped", m{"command": "yes 0123456789 | head -c 200000"}, []string{"[cut: ", "bytes of output not shown]"}, ""},
		{"no command", m{}, []string{"bad arguments"}, ""},
		{"timeout too long", m{"command": "true", "timeout_seconds": 601}, []string{"bad arguments: bad timeout_seconds 601"}, ""},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			got := call(t, run, c.args)
			mustContain(t, got, c.want...)
			if c.not != "" && strings.Contains(got, c.not) {
				t.Fatalf("result contains %q", c.not)
			}
			if len(got) > capability.MaxOutput+200 {
				t.Fatalf("result of %d bytes", len(got))
			}
		})
	}
}

func TestRunCommandTimeoutKillsGroup(t *testing.T) {
	env, _, _ := workspace(t)
	run := tool(t, env, obj("run_command"), "run_command")
	// A background grandchild that would outlive its shell, and a foreground
	// wait that never ends on its own. The grandchild runs in the command's
	// PID namespace where there is one (its pids are not this side's): it is
	// found by its command line, sleep 300.7, which no process may hold
	// once the call returned.
	// The timeout leaves room for three starts of a race-built binary (the
	// namespace's init, the sandbox helper) on a busy machine.
	got := call(t, run, m{"command": "sh -c 'echo up > bg.tmp; mv bg.tmp bg.pid; exec sleep 300.7' & while [ ! -e bg.pid ]; do sleep 0.01; done; echo started; sleep 300", "timeout_seconds": 5})
	mustContain(t, got, "timed out after 5s", "killed", "started")
	// Bounded only as a hang guard: it may take a moment to be reaped.
	deadline := time.Now().Add(30 * time.Second)
	for pid := sleeper("300.7"); pid != 0; pid = sleeper("300.7") {
		if time.Now().After(deadline) {
			syscall.Kill(pid, syscall.SIGKILL)
			t.Fatalf("background process %d survived the timeout", pid)
		}
		time.Sleep(10 * time.Millisecond)
	}
}

// sleeper is a live `sleep arg` process (0: none).
func sleeper(arg string) int {
	ents, _ := os.ReadDir("/proc")
	for _, e := range ents {
		pid, err := strconv.Atoi(e.Name())
		if err != nil {
			continue
		}
		cmdline, err := os.ReadFile("/proc/" + e.Name() + "/cmdline")
		if err == nil && string(cmdline) == "sleep\x00"+arg+"\x00" && alive(pid) {
			return pid
		}
	}
	return 0
}

func alive(pid int) bool {
	data, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/stat")
	if err != nil {
		return syscall.Kill(pid, 0) == nil
	}
	s := string(data)
	rest := s[strings.LastIndexByte(s, ')')+1:]
	return !strings.HasPrefix(strings.TrimSpace(rest), "Z")
}

func TestRunCommandContextEnds(t *testing.T) {
	env, _, _ := workspace(t)
	run := tool(t, env, obj("run_command"), "run_command")
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if _, err := run.Call(ctx, []byte(`{"command":"sleep 300"}`)); err == nil {
		t.Fatal("a cancelled call returned no error")
	}
}

func TestHTTPGet(t *testing.T) {
	env, _, _ := workspace(t)
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		switch r.URL.Path {
		case "/big":
			w.Write([]byte(strings.Repeat("y", capability.MaxBody+10)))
		case "/missing":
			http.NotFound(w, r)
		case "/redirect-file":
			http.Redirect(w, r, "file:///etc/passwd", http.StatusFound)
		default:
			if r.Method != http.MethodGet {
				t.Errorf("method %s", r.Method)
			}
			w.Header().Set("Content-Type", "text/plain")
			w.Write([]byte("hello web"))
		}
	}))
	defer srv.Close()
	// The test server is on loopback, which agents may not reach unless the
	// config allows it (TestHTTPGetInternal).
	env.Store.Config().Sandbox.HTTPAllow = []string{strings.TrimPrefix(srv.URL, "http://")}
	get := tool(t, env, obj("http_get"), "http_get")
	cases := []struct {
		name string
		url  string
		want []string
	}{
		{"ok", srv.URL + "/", []string{"HTTP 200 OK", "Content-Type: text/plain", "hello web"}},
		{"404", srv.URL + "/missing", []string{"HTTP 404 Not Found"}},
		{"capped", srv.URL + "/big", []string{"[cut: showed the first 256 KiB of the body]"}},
		{"file scheme", "file:///etc/passwd", []string{"bad arguments", "not an http or https URL"}},
		{"no host", "http://", []string{"not an http or https URL"}},
		{"redirect to file", srv.URL + "/redirect-file", []string{"error:", "http and https only"}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			got := call(t, get, m{"url": c.url})
			mustContain(t, got, c.want...)
			if len(got) > capability.MaxBody+300 {
				t.Fatalf("result of %d bytes", len(got))
			}
		})
	}
}

// TestHTTPGetInternal: an agent's http_get cannot reach this machine, its
// private networks or cloud metadata, by any spelling or through a redirect,
// unless sandbox.http_allow names the address.
func TestHTTPGetInternal(t *testing.T) {
	env, _, _ := workspace(t)
	inner := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Write([]byte("internal secret"))
	}))
	defer inner.Close()
	outer := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		http.Redirect(w, r, inner.URL+"/", http.StatusFound)
	}))
	defer outer.Close()
	port := strings.TrimPrefix(inner.URL, "http://127.0.0.1:")
	get := tool(t, env, obj("http_get"), "http_get")
	cases := []struct {
		name  string
		allow []string
		url   string
		want  string
	}{
		{"loopback", nil, inner.URL + "/", "loopback address"},
		{"localhost name", nil, "http://localhost:" + port + "/", "may not reach"},
		{"decimal spelling", nil, "http://2130706433:" + port + "/", "error:"},
		{"mapped v6", nil, "http://[::ffff:127.0.0.1]:" + port + "/", "loopback address"},
		{"metadata", nil, "http://169.254.169.254/latest/meta-data/", "link-local"},
		{"unspecified", nil, "http://0.0.0.0:" + port + "/", "unspecified"},
		{"redirect to internal", []string{strings.TrimPrefix(outer.URL, "http://")}, outer.URL + "/", "loopback address"},
		{"allowed by port", []string{"127.0.0.1:" + port}, inner.URL + "/", "internal secret"},
		{"allowed by prefix", []string{"127.0.0.0/8"}, inner.URL + "/", "internal secret"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			env.Store.Config().Sandbox.HTTPAllow = c.allow
			got := call(t, get, m{"url": c.url})
			mustContain(t, got, c.want)
			if c.allow == nil || strings.Contains(c.name, "redirect") {
				if strings.Contains(got, "internal secret") {
					t.Fatalf("reached the internal server: %s", got)
				}
			}
		})
	}
	t.Run("network off", func(t *testing.T) {
		off := false
		env.Store.Config().Sandbox.HTTPAllow = []string{"127.0.0.0/8"}
		env.Store.Config().Sandbox.Network = &off
		defer func() { env.Store.Config().Sandbox.Network = nil }()
		mustContain(t, call(t, get, m{"url": inner.URL + "/"}), "network access is off")
	})
}

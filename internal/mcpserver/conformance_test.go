package mcpserver

import (
	"bufio"
	"context"
	"net"
	"net/http"
	"net/http/httputil"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"
)

// TestOfficialConformance runs the official MCP conformance suite
// (@modelcontextprotocol/conformance, testdata/mcpconformance, on the node 22
// it needs, installed from npm beside it) against the real `pm mcp --http`.
// Scenarios that call the suite's own fixture tools, prompts and resources
// (test_simple_text, test_prompt_with_arguments, ...) cannot apply to pm and
// are listed in conformance-baseline.yml; the suite fails on any other
// failure and on a baseline entry that passes. The suite sends no bearer
// token, so a reverse proxy in this test adds pm's.
func TestOfficialConformance(t *testing.T) {
	suite, err := filepath.Abs("../../testdata/mcpconformance")
	if err != nil {
		t.Fatal(err)
	}
	node := filepath.Join(suite, "node_modules", ".bin", "node")
	cli := filepath.Join(suite, "node_modules", "@modelcontextprotocol", "conformance", "dist", "index.js")
	for _, p := range []string{node, cli} {
		if _, err := os.Stat(p); err != nil {
			t.Skip("the MCP conformance suite is not installed: `npm ci --prefix testdata/mcpconformance` (.ci/run does)")
		}
	}
	if testing.Short() {
		t.Skip("end to end: not in -short")
	}
	dir := t.TempDir()
	bin := filepath.Join(dir, "pm")
	for out, pkg := range map[string]string{bin: "../../cmd/pm", filepath.Join(dir, "pm-full"): "../../cmd/pm-full"} {
		if out, err := exec.Command("go", "build", "-o", out, pkg).CombinedOutput(); err != nil {
			t.Fatalf("go build %s: %v\n%s", pkg, err, out)
		}
	}
	ctx, cancel := context.WithTimeout(t.Context(), 5*time.Minute) // hang guard only
	defer cancel()
	const token = "conformance-token-0123456789"
	env := append(cleanEnv(), "PM_NO_SUPERVISOR=1", "PM_HOME="+filepath.Join(dir, ".plasmodium"), "PM_MCP_TOKEN="+token)
	initCmd := exec.Command(bin, "init")
	initCmd.Dir, initCmd.Env = dir, env
	if out, err := initCmd.CombinedOutput(); err != nil {
		t.Fatalf("pm init: %v\n%s", err, out)
	}
	srv := exec.CommandContext(ctx, bin, "mcp", "--http", "127.0.0.1:0")
	srv.Dir, srv.Env = dir, env
	stderr, err := srv.StderrPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := srv.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = srv.Process.Kill(); _ = srv.Wait() })
	listening := regexp.MustCompile(`listening on (http://\S+)`)
	var mcpURL string
	sc := bufio.NewScanner(stderr)
	for mcpURL == "" && sc.Scan() {
		if m := listening.FindStringSubmatch(sc.Text()); m != nil {
			mcpURL = m[1]
		}
	}
	if mcpURL == "" {
		t.Fatalf("pm mcp --http never said where it listens (%v)", sc.Err())
	}
	go func() { // keep draining: a full pipe would block the server
		for sc.Scan() {
		}
	}()

	target, err := url.Parse(mcpURL)
	if err != nil {
		t.Fatal(err)
	}
	proxy := &httputil.ReverseProxy{
		Rewrite: func(r *httputil.ProxyRequest) {
			r.SetURL(&url.URL{Scheme: target.Scheme, Host: target.Host})
			r.Out.Host = r.In.Host // pm checks Host (DNS rebinding): the suite's, unchanged
			r.Out.Header.Set("Authorization", "Bearer "+token)
		},
		FlushInterval: -1, // server-sent events pass at once
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	front := &http.Server{Handler: proxy}
	go func() { _ = front.Serve(ln) }()
	t.Cleanup(func() { _ = front.Close() })

	run := exec.CommandContext(ctx, node, cli, "server", "--url", "http://"+ln.Addr().String()+target.Path,
		"--expected-failures", filepath.Join(suite, "conformance-baseline.yml"), "-o", filepath.Join(dir, "results"))
	run.Dir = suite
	run.WaitDelay = 5 * time.Second
	out, err := run.CombinedOutput()
	if err != nil {
		t.Fatalf("the MCP conformance suite: %v\n%s", err, out)
	}
	if !strings.Contains(string(out), "Baseline check passed") {
		t.Fatalf("the MCP conformance suite did not say its baseline check passed:\n%s", out)
	}
	t.Logf("%s", out)
}

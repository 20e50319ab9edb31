package mcpserver

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/plasmodium/pm/internal/agent"
	"github.com/plasmodium/pm/internal/openaitest"
	"github.com/plasmodium/pm/internal/ops"
	"github.com/plasmodium/pm/internal/replay"
	"github.com/plasmodium/pm/internal/state/fsstate"
	"github.com/plasmodium/pm/internal/store"
)

// e2eScript is the greeter's model: a reply, an ask_human then a reply
// (answered while the send waits), and an ask_human the client cancels.
const e2eScript = `{
  "title": "pm mcp end to end",
  "steps": {"greeter": [
    {"content": "Hello from the garden, friend!"},
    {"tool": "ask_human", "args": {"question": "Shall I go on?"}},
    {"content": "Thanks for answering."},
    {"tool": "ask_human", "args": {"question": "This will take long. Go on?"}},
    {"content": "Fine."}
  ]},
  "otherwise": {"greeter": "Still here."}
}`

const e2eKey = "sk-pm-mcp-e2e-0123456789"

// TestE2E drives the real pm binary's `pm mcp` from the official TypeScript
// MCP SDK (testdata/mcpclient/client.mjs), over stdio and Streamable HTTP,
// with the greeter's model played by the OpenAI-protocol test server.
func TestE2E(t *testing.T) {
	client, err := filepath.Abs("../../testdata/mcpclient")
	if err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(filepath.Join(client, "node_modules", "@modelcontextprotocol", "sdk")); err != nil {
		t.Skip("testdata/mcpclient/node_modules is absent: `npm ci --prefix testdata/mcpclient` (.ci/run does) to run the end-to-end MCP test")
	}
	if _, err := exec.LookPath("node"); err != nil {
		t.Skip("node is not installed: the end-to-end MCP test needs node 18 or later")
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
	for _, mode := range []string{"stdio", "http"} {
		t.Run(mode, func(t *testing.T) { runE2E(t, bin, client, mode) })
	}
}

func runE2E(t *testing.T, bin, client, mode string) {
	script, err := replay.Load(strings.NewReader(e2eScript))
	if err != nil {
		t.Fatal(err)
	}
	model := openaitest.New(openaitest.WithAPIKey(e2eKey), openaitest.WithModel("replay"))
	model.Handle(replay.NewPlayer(script).Reply)
	defer model.Close()

	dir := t.TempDir()
	env := append(cleanEnv(), "OPENAI_BASE_URL="+model.BaseURL(), "OPENAI_API_KEY="+e2eKey, "PM_MODEL=replay",
		"PM_NO_SUPERVISOR=1", "PM_HOME="+filepath.Join(dir, store.DirName), "PM_BIN="+bin)
	initCmd := exec.Command(bin, "init")
	initCmd.Dir, initCmd.Env = dir, env
	if out, err := initCmd.CombinedOutput(); err != nil {
		t.Fatalf("pm init: %v\n%s", err, out)
	}
	s, err := store.Open(filepath.Join(dir, store.DirName))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { killAgents(s) })
	s.Config().Runtime.Default = "none" // the task and its role agents need no process
	sess := &ops.Session{Store: s, State: fsstate.New(s), Actor: store.Human, Launcher: &agent.Launcher{Store: s, State: fsstate.New(s), Exe: "/nonexistent/pm"}}
	ctx := context.Background()
	tk, err := ops.CreateTask(ctx, sess, ops.TaskInput{Description: "e2e"})
	if err != nil {
		t.Fatal(err)
	}
	ph, err := ops.OpenPhase(ctx, sess, ops.PhaseInput{Task: tk.ID, Name: "Design", Limit: 10, Roles: []string{"designer"}})
	if err != nil {
		t.Fatal(err)
	}

	ctx, cancel := context.WithTimeout(ctx, 2*time.Minute) // hang guard only
	defer cancel()
	node := exec.CommandContext(ctx, "node", "client.mjs", mode)
	node.Dir = client
	node.Env = append(env, "PM_TEST_TASK="+tk.ID, "PM_TEST_PHASE="+ph.Phase.ID)
	node.WaitDelay = 5 * time.Second
	out, err := node.CombinedOutput()
	if err != nil || !strings.Contains(string(out), "\nOK ") && !strings.HasPrefix(string(out), "OK ") {
		t.Fatalf("client.mjs %s: %v\n%s", mode, err, out)
	}
	t.Logf("%s", out)
}

// cleanEnv is this process's environment without what would make pm act
// elsewhere or as someone else.
func cleanEnv() []string {
	var env []string
	for _, kv := range os.Environ() {
		k, _, _ := strings.Cut(kv, "=")
		switch k {
		case "PM_HOME", "PM_AGENT", "PM_MCP_TOKEN", "OPENAI_BASE_URL", "OPENAI_API_KEY", "PM_MODEL":
			continue
		}
		env = append(env, kv)
	}
	return env
}

// killAgents ends the process group of every agent the test started (the
// resident greeter serves until killed).
func killAgents(s *store.Store) {
	agents, _ := s.Agents()
	for _, a := range agents {
		if a.Handle.Pid > 0 {
			_ = syscall.Kill(-a.Handle.Pid, syscall.SIGKILL)
		}
	}
}

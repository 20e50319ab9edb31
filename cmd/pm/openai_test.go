package main_test

import (
	"encoding/json"
	"os"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/rogpeppe/go-internal/testscript"

	"github.com/plasmodium/pm/internal/openaitest"
	"github.com/plasmodium/pm/internal/replay"
)

// openaiKey is the bearer key the fake provider requires, so scripts also
// check that OPENAI_API_KEY reaches every agent process.
const openaiKey = "sk-pm-script-0123456789"

// fakes are the OpenAI-protocol servers of running scripts, one per script.
var fakes sync.Map // *testscript.TestScript -> *openaitest.Server

// cmdOpenAI drives an OpenAI-protocol server inside the test process that
// the script's pm commands, and every agent they spawn, reach through the
// real go-openai client:
//
//	openai start script.json   serve a replay script (internal/replay format:
//	                           steps per role or prompt object); sets
//	                           OPENAI_BASE_URL, OPENAI_API_KEY and PM_MODEL
//	openai wait N              block until N chat requests have arrived
//	openai dump [-system] file write the requests so far, one JSON line each:
//	                           {"n", "agent", "role", "tools", "messages"};
//	                           the system message is left out unless -system
//
// The server is closed when the script ends.
func cmdOpenAI(ts *testscript.TestScript, neg bool, args []string) {
	if neg || len(args) == 0 {
		ts.Fatalf("usage: openai start script.json | wait N | dump [-system] file")
	}
	if args[0] == "start" {
		if len(args) != 2 {
			ts.Fatalf("usage: openai start script.json")
		}
		f, err := os.Open(ts.MkAbs(args[1]))
		ts.Check(err)
		script, err := replay.Load(f)
		f.Close()
		ts.Check(err)
		srv := openaitest.New(openaitest.WithAPIKey(openaiKey), openaitest.WithModel("replay"))
		srv.Handle(replay.NewPlayer(script).Reply)
		if _, loaded := fakes.LoadOrStore(ts, srv); loaded {
			srv.Close()
			ts.Fatalf("openai: already started")
		}
		ts.Defer(func() {
			fakes.Delete(ts)
			srv.Close()
		})
		ts.Setenv("OPENAI_BASE_URL", srv.BaseURL())
		ts.Setenv("OPENAI_API_KEY", openaiKey)
		ts.Setenv("PM_MODEL", "replay")
		return
	}
	v, ok := fakes.Load(ts)
	if !ok {
		ts.Fatalf("openai: not started (openai start script.json)")
	}
	srv := v.(*openaitest.Server)
	switch {
	case args[0] == "wait" && len(args) == 2:
		n, err := strconv.Atoi(args[1])
		ts.Check(err)
		deadline := time.Now().Add(60 * time.Second) // hang guard only
		for len(srv.Requests()) < n {
			if time.Now().After(deadline) {
				ts.Fatalf("openai wait %d: only %d requests after 60s", n, len(srv.Requests()))
			}
			time.Sleep(20 * time.Millisecond)
		}
	case args[0] == "dump" && (len(args) == 2 || len(args) == 3 && args[1] == "-system"):
		system := len(args) == 3
		var b strings.Builder
		for i, req := range srv.Requests() {
			name, role := replay.Identify(req)
			tools := make([]string, len(req.Tools))
			for j, t := range req.Tools {
				tools[j] = t.Function.Name
			}
			msgs := req.Messages
			if !system && len(msgs) > 0 && msgs[0].Role == "system" {
				msgs = msgs[1:] // long and already identified; keep lines readable
			}
			line, err := json.Marshal(struct {
				N        int                  `json:"n"`
				Agent    string               `json:"agent"`
				Role     string               `json:"role"`
				Tools    []string             `json:"tools"`
				Messages []openaitest.Message `json:"messages"`
			}{i + 1, name, role, tools, msgs})
			ts.Check(err)
			b.Write(line)
			b.WriteByte('\n')
		}
		ts.Check(os.WriteFile(ts.MkAbs(args[len(args)-1]), []byte(b.String()), 0o644))
	default:
		ts.Fatalf("usage: openai start script.json | wait N | dump [-system] file")
	}
}

// killStray SIGKILLs every process whose working directory is inside work
// (supervisors first, so none respawns what follows): agents and
// supervisors a failed script, or a resident prompt object that serves
// forever, leave behind.
func killStray(work string) {
	for range 5 {
		var supervisors, others []int
		ents, _ := os.ReadDir("/proc")
		for _, e := range ents {
			pid, err := strconv.Atoi(e.Name())
			if err != nil || pid == os.Getpid() {
				continue
			}
			cwd, err := os.Readlink("/proc/" + e.Name() + "/cwd")
			if err != nil || (cwd != work && !strings.HasPrefix(cwd, work+"/")) {
				continue
			}
			cmdline, _ := os.ReadFile("/proc/" + e.Name() + "/cmdline")
			if strings.Contains(string(cmdline), "\x00supervise") {
				supervisors = append(supervisors, pid)
			} else {
				others = append(others, pid)
			}
		}
		if len(supervisors)+len(others) == 0 {
			return
		}
		for _, pid := range append(supervisors, others...) {
			_ = syscall.Kill(pid, syscall.SIGKILL)
		}
	}
}

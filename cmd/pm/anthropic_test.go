package main_test

import (
	"fmt"
	"os"
	"sort"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/rogpeppe/go-internal/testscript"

	"github.com/plasmodium/pm/internal/anthropictest"
)

// anthropicKey is the key the fake Anthropic server requires, so scripts
// also check that ANTHROPIC_API_KEY reaches every agent CLI.
const anthropicKey = "sk-ant-pm-script-0123456789"

// anthropicFakes are the Anthropic-protocol servers of running scripts.
var anthropicFakes sync.Map // *testscript.TestScript -> *anthropictest.Server

// cmdAnthropic drives an Anthropic Messages server inside the test process,
// which a real agent CLI (Claude Code) reaches through ANTHROPIC_BASE_URL:
//
//	anthropic start scripts.json  serve the conversations of an
//	                              anthropictest.ScriptFile; sets
//	                              ANTHROPIC_BASE_URL and ANTHROPIC_API_KEY
//	anthropic turns               print, per script that answered, the
//	                              highest turn it reached: "MATCH N"
//	anthropic gone                wait until no claude process runs in the
//	                              script's directory (60 s hang guard)
//
// The server is closed when the script ends.
func cmdAnthropic(ts *testscript.TestScript, neg bool, args []string) {
	if neg || len(args) == 0 {
		ts.Fatalf("usage: anthropic start scripts.json | turns | gone")
	}
	if args[0] == "start" {
		if len(args) != 2 {
			ts.Fatalf("usage: anthropic start scripts.json")
		}
		srv := anthropictest.New(anthropictest.WithAPIKey(anthropicKey))
		f, err := os.Open(ts.MkAbs(args[1]))
		ts.Check(err)
		err = srv.LoadScripts(f)
		f.Close()
		if err != nil {
			srv.Close()
			ts.Fatalf("%v", err)
		}
		if _, loaded := anthropicFakes.LoadOrStore(ts, srv); loaded {
			srv.Close()
			ts.Fatalf("anthropic: already started")
		}
		ts.Defer(func() {
			anthropicFakes.Delete(ts)
			srv.Close()
		})
		ts.Setenv("ANTHROPIC_BASE_URL", srv.URL)
		ts.Setenv("ANTHROPIC_API_KEY", anthropicKey)
		return
	}
	v, ok := anthropicFakes.Load(ts)
	if !ok {
		ts.Fatalf("anthropic: not started (anthropic start scripts.json)")
	}
	srv := v.(*anthropictest.Server)
	if args[0] == "gone" && len(args) == 1 {
		waitNoClaude(ts, ts.Getenv("WORK"))
		return
	}
	if args[0] != "turns" || len(args) != 1 {
		ts.Fatalf("usage: anthropic start scripts.json | turns | gone")
	}
	top := map[string]int{}
	for _, r := range srv.Requests() {
		if r.Script != "" && r.Turn >= top[r.Script] {
			top[r.Script] = r.Turn
		}
	}
	var lines []string
	for m, n := range top {
		lines = append(lines, fmt.Sprintf("%s %d", strings.TrimSpace(m), n))
	}
	sort.Strings(lines)
	fmt.Fprintln(ts.Stdout(), strings.Join(lines, "\n"))
}

// waitNoClaude waits until no process named claude has its working
// directory in work: every agent CLI of the script has ended.
func waitNoClaude(ts *testscript.TestScript, work string) {
	deadline := time.Now().Add(60 * time.Second)
	for {
		left := claudesIn(work)
		if len(left) == 0 {
			return
		}
		if time.Now().After(deadline) {
			ts.Fatalf("claude still running after 60s: pids %v", left)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

func claudesIn(work string) []int {
	var out []int
	ents, _ := os.ReadDir("/proc")
	for _, e := range ents {
		pid, err := strconv.Atoi(e.Name())
		if err != nil {
			continue
		}
		comm, _ := os.ReadFile("/proc/" + e.Name() + "/comm")
		if strings.TrimSpace(string(comm)) != "claude" {
			continue
		}
		if cwd, err := os.Readlink("/proc/" + e.Name() + "/cwd"); err == nil && (cwd == work || strings.HasPrefix(cwd, work+"/")) {
			out = append(out, pid)
		}
	}
	return out
}

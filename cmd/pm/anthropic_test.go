package main_test

import (
	"fmt"
	"os"
	"sort"
	"strings"
	"sync"

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
//
// The server is closed when the script ends.
func cmdAnthropic(ts *testscript.TestScript, neg bool, args []string) {
	if neg || len(args) == 0 {
		ts.Fatalf("usage: anthropic start scripts.json | turns")
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
	if args[0] != "turns" || len(args) != 1 {
		ts.Fatalf("usage: anthropic start scripts.json | turns")
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

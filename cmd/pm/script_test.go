package main_test

import (
	"bytes"
	"encoding/json"
	"fmt"
	"github.com/plasmodium/pm/internal/testproc"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/rogpeppe/go-internal/testscript"
)

// pmBin is the real pm binary, built once for all scripts.
var pmBin string

// repoRoot is the module root, $REPO in scripts (for examples/agents).
var repoRoot, _ = filepath.Abs(filepath.Join("..", ".."))

func TestMain(m *testing.M) {
	dir, err := os.MkdirTemp("", "pm-bin-")
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	// pm (the short commands) and pm-full (the rest, which pm execs) side by
	// side, as make install puts them: every script runs through both.
	pmBin = filepath.Join(dir, "pm")
	// pm-hub (pm hub's NATS server, which pm-full execs) beside them too.
	builds := []struct{ out, pkg string }{{pmBin, "."}, {filepath.Join(dir, "pm-full"), "../pm-full"}, {filepath.Join(dir, "pm-hub"), "../pm-hub"}}
	if pre := os.Getenv("PM_TEST_PREBUILT"); pre != "" {
		// scripts/test-as-user.sh: binaries built by root for a run as an
		// unprivileged user, who may not reach root's module cache.
		pmBin, builds = filepath.Join(pre, "pm"), nil
	}
	for _, b := range builds {
		args := []string{"build", "-o", b.out}
		if raceEnabled {
			args = append(args, "-race")
		}
		build := exec.Command("go", append(args, b.pkg)...)
		build.Stdout, build.Stderr = os.Stderr, os.Stderr
		if err := build.Run(); err != nil {
			fmt.Fprintln(os.Stderr, "building pm:", err)
			os.Exit(1)
		}
	}
	goEnv, err = realGoEnv()
	if err != nil {
		fmt.Fprintln(os.Stderr, "go env:", err)
		os.Exit(1)
	}
	code := m.Run()
	os.RemoveAll(dir)
	os.Exit(code)
}

// goEnv is the real environment's Go caches and GOPATH: with HOME at the
// script's directory, a `go` a script runs (pm design --eval's go test)
// would otherwise build from a cold cache.
var goEnv map[string]string

func realGoEnv() (map[string]string, error) {
	names := []string{"GOCACHE", "GOMODCACHE", "GOPATH"}
	out, err := exec.Command("go", append([]string{"env"}, names...)...).Output()
	if err != nil {
		return nil, err
	}
	vals := strings.Split(strings.TrimRight(string(out), "\n"), "\n")
	if len(vals) != len(names) {
		return nil, fmt.Errorf("go env printed %q", out)
	}
	env := map[string]string{}
	for i, n := range names {
		env[n] = vals[i]
	}
	// pm's own build cache for models' code (ops.confinedGoCache) lives in
	// the user cache directory: shared by the scripts, built once.
	if d, err := os.UserCacheDir(); err == nil {
		env["XDG_CACHE_HOME"] = d
	}
	return env, nil
}

// TestScripts runs testdata/script/*.txtar against the real binary: every
// `pm` in a script, and every agent it spawns, is its own OS process.
func TestScripts(t *testing.T) {
	testscript.Run(t, testscript.Params{
		Dir: filepath.Join("..", "..", "testdata", "script"),
		Setup: func(env *testscript.Env) error {
			env.Setenv("PATH", filepath.Dir(pmBin)+string(os.PathListSeparator)+env.Getenv("PATH"))
			env.Setenv("HOME", env.WorkDir)
			env.Setenv("REPO", repoRoot)
			for k, v := range goEnv {
				env.Setenv(k, v)
			}
			// A race-built pm otherwise sleeps a second at every exit.
			env.Setenv("GORACE", "atexit_sleep_ms=0")
			env.Setenv("GIT_AUTHOR_NAME", "pm test")
			env.Setenv("GIT_AUTHOR_EMAIL", "test@localhost")
			env.Setenv("GIT_COMMITTER_NAME", "pm test")
			env.Setenv("GIT_COMMITTER_EMAIL", "test@localhost")
			env.Defer(func() {
				killLeftovers(env.WorkDir)
				killStray(env.WorkDir)
			})
			return nil
		},
		Cmds: map[string]func(ts *testscript.TestScript, neg bool, args []string){
			"waitfor":    cmdWaitFor,
			"parallel":   cmdParallel,
			"alive":      cmdAlive,
			"lines":      cmdLines,
			"jsonlines":  cmdJSONLines,
			"jsonget":    cmdJSONGet,
			"jsoneq":     cmdJSONEq,
			"readvar":    cmdReadVar,
			"readpids":   cmdReadPids,
			"waitgone":   cmdWaitGone,
			"waitnoproc": cmdWaitNoProc,
			"exits":      cmdExits,
			"openai":     cmdOpenAI,
			"anthropic":  cmdAnthropic,
			"screen":     cmdScreen,
			"leasefree":  cmdLeaseFree,
		},
		Condition:           scriptCondition,
		RequireExplicitExec: false,
	})
}

// killLeftovers ends agent process groups a failed script may have left.
func killLeftovers(work string) {
	out, err := exec.Command("sh", "-c", "cat "+work+"/.plasmodium/agents/*/agent.json 2>/dev/null | grep '\"pid\"' | tr -dc '0-9\\n'").Output()
	if err != nil {
		return
	}
	for _, l := range strings.Fields(string(out)) {
		if pid, err := strconv.Atoi(l); err == nil && pid > 0 {
			_ = syscall.Kill(-pid, syscall.SIGKILL)
		}
	}
}

// waitfor [-t secs] file pattern: block until file exists and (if given)
// contains a line matching pattern. A generous default timeout only guards
// against a hung script; it is not a speed assertion.
func cmdWaitFor(ts *testscript.TestScript, neg bool, args []string) {
	timeout := 60 * time.Second
	if len(args) > 1 && args[0] == "-t" {
		secs, err := strconv.Atoi(args[1])
		ts.Check(err)
		timeout, args = time.Duration(secs)*time.Second, args[2:]
	}
	var re *regexp.Regexp
	if len(args) > 1 && args[0] == "-re" {
		re, args = regexp.MustCompile(args[len(args)-1]), args[1:]
	}
	if len(args) < 1 || len(args) > 2 {
		ts.Fatalf("usage: waitfor [-t secs] [-re] file [substring or, with -re, regexp]")
	}
	path := ts.MkAbs(args[0])
	deadline := time.Now().Add(timeout)
	for {
		data, err := os.ReadFile(path)
		ok := err == nil && (len(args) == 1 || (re == nil && strings.Contains(string(data), args[1])) || (re != nil && re.Match(data)))
		if ok != neg {
			return
		}
		if time.Now().After(deadline) {
			ts.Fatalf("waitfor %v: timed out after %s; file now:\n%s", args, timeout, data)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// parallel N cmd args...: run N copies of a command at once; each copy's exit
// code is appended to $WORK/parallel.codes, one per line. {i} in an argument
// is replaced by the copy's index.
func cmdParallel(ts *testscript.TestScript, neg bool, args []string) {
	if len(args) < 2 {
		ts.Fatalf("usage: parallel N cmd args...")
	}
	n, err := strconv.Atoi(args[0])
	ts.Check(err)
	path := lookPath(ts, args[1])
	codes := make([]int, n)
	startErrs := make([]error, n)
	done := make(chan struct{})
	for i := range n {
		go func() {
			defer func() { done <- struct{}{} }()
			a := make([]string, len(args)-2)
			for j, s := range args[2:] {
				a[j] = strings.ReplaceAll(s, "{i}", strconv.Itoa(i))
			}
			cmd := exec.Command(path, a...)
			cmd.Dir = ts.Getenv("WORK")
			cmd.Env = environ(ts)
			err := cmd.Run()
			if ee, ok := err.(*exec.ExitError); ok {
				codes[i] = ee.ExitCode()
			} else if err != nil {
				codes[i], startErrs[i] = -1, err
			}
		}()
	}
	for range n {
		<-done
	}
	var b strings.Builder
	for _, c := range codes {
		fmt.Fprintln(&b, c)
	}
	ts.Check(os.WriteFile(ts.MkAbs("parallel.codes"), []byte(b.String()), 0o644))
	for _, err := range startErrs {
		ts.Check(err)
	}
}

// lookPath finds a command in the script's $PATH (not the test process's).
func lookPath(ts *testscript.TestScript, name string) string {
	if strings.Contains(name, "/") {
		return name
	}
	for _, dir := range filepath.SplitList(ts.Getenv("PATH")) {
		p := filepath.Join(dir, name)
		if st, err := os.Stat(p); err == nil && st.Mode().IsRegular() && st.Mode()&0o111 != 0 {
			return p
		}
	}
	ts.Fatalf("parallel: %s not found in $PATH", name)
	return ""
}

func environ(ts *testscript.TestScript) []string {
	var env []string
	for _, k := range []string{"PATH", "HOME", "GORACE", "PM_HOME", "PM_AGENT", "TMPDIR", "GIT_AUTHOR_NAME", "GIT_AUTHOR_EMAIL", "GIT_COMMITTER_NAME", "GIT_COMMITTER_EMAIL"} {
		if v := ts.Getenv(k); v != "" {
			env = append(env, k+"="+v)
		}
	}
	return env
}

// alive pid...: succeed if every pid is a live (non-zombie) process; with !,
// succeed only if none is. An argument may hold several space-separated pids.
func cmdAlive(ts *testscript.TestScript, neg bool, args []string) {
	for _, a := range strings.Fields(strings.Join(args, " ")) {
		pid, err := strconv.Atoi(a)
		ts.Check(err)
		live := pidAlive(pid)
		if live == neg {
			ts.Fatalf("pid %d alive=%v", pid, live)
		}
	}
}

// pidAlive reports whether pid is a running, non-zombie process.
func pidAlive(pid int) bool {
	data, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/stat")
	if err != nil {
		return false
	}
	rest := string(data[strings.LastIndexByte(string(data), ')')+1:])
	return len(rest) < 3 || (rest[1] != 'Z' && rest[1] != 'X')
}

// lines file N: the file has exactly N lines.
func cmdLines(ts *testscript.TestScript, neg bool, args []string) {
	if len(args) != 2 {
		ts.Fatalf("usage: lines file N")
	}
	want, err := strconv.Atoi(args[1])
	ts.Check(err)
	data := ts.ReadFile(args[0])
	got := strings.Count(data, "\n")
	if (got == want) == neg {
		ts.Fatalf("%s has %d lines, want %d", args[0], got, want)
	}
}

// jsonlines file N: the file has exactly N lines and every one is valid JSON.
func cmdJSONLines(ts *testscript.TestScript, neg bool, args []string) {
	if len(args) != 2 || neg {
		ts.Fatalf("usage: jsonlines file N")
	}
	want, err := strconv.Atoi(args[1])
	ts.Check(err)
	data := ts.ReadFile(args[0])
	if data != "" && !strings.HasSuffix(data, "\n") {
		ts.Fatalf("%s ends in a torn line: %q", args[0], data[strings.LastIndexByte(data, '\n')+1:])
	}
	lines := strings.Split(strings.TrimSuffix(data, "\n"), "\n")
	if data == "" {
		lines = nil
	}
	for i, l := range lines {
		if !json.Valid([]byte(l)) {
			ts.Fatalf("%s line %d is not JSON: %q", args[0], i+1, l)
		}
	}
	if len(lines) != want {
		ts.Fatalf("%s has %d lines, want %d", args[0], len(lines), want)
	}
}

// jsonget file path VAR: set $VAR to the value at a dotted path (object keys,
// array indexes) of the JSON in file (or stdout/stderr).
func cmdJSONGet(ts *testscript.TestScript, neg bool, args []string) {
	if len(args) != 3 || neg {
		ts.Fatalf("usage: jsonget file path VAR")
	}
	ts.Setenv(args[2], jsonAt(ts, args[0], args[1]))
}

// jsoneq file path want: the value at path is want (with !, is not).
func cmdJSONEq(ts *testscript.TestScript, neg bool, args []string) {
	if len(args) != 3 {
		ts.Fatalf("usage: jsoneq file path want")
	}
	if got := jsonAt(ts, args[0], args[1]); (got == args[2]) == neg {
		ts.Fatalf("%s: %s is %q, want %s%q", args[0], args[1], got, map[bool]string{true: "not "}[neg], args[2])
	}
}

// jsonAt returns the value at a dotted path of the JSON in file: strings as
// they are, anything else as compact JSON.
func jsonAt(ts *testscript.TestScript, file, path string) string {
	var v any
	if err := json.Unmarshal([]byte(ts.ReadFile(file)), &v); err != nil {
		ts.Fatalf("%s: %v", file, err)
	}
	for _, k := range strings.Split(path, ".") {
		switch x := v.(type) {
		case map[string]any:
			v = x[k]
		case []any:
			i, err := strconv.Atoi(k)
			if err != nil || i < 0 || i >= len(x) {
				ts.Fatalf("%s: no index %q in %s", file, k, path)
			}
			v = x[i]
		default:
			ts.Fatalf("%s: %s: %q is not inside an object or array", file, path, k)
		}
	}
	if v == nil {
		ts.Fatalf("%s: no value at %s", file, path)
	}
	if s, ok := v.(string); ok {
		return s
	}
	b, _ := json.Marshal(v)
	return string(b)
}

// readvar VAR file: set $VAR to the file's content, trimmed (e.g. a pid file).
func cmdReadVar(ts *testscript.TestScript, neg bool, args []string) {
	if len(args) != 2 || neg {
		ts.Fatalf("usage: readvar VAR file")
	}
	ts.Setenv(args[0], strings.TrimSpace(ts.ReadFile(args[1])))
}

// readpids VAR file: VAR is the pids the file's lines name, as this side
// sees them. Each line is a process's PID namespace and pids in it
// (testproc.SelfPID): a sandboxed agent runs in a PID namespace of its own,
// where $$ and $PPID are not this side's pids.
func cmdReadPids(ts *testscript.TestScript, neg bool, args []string) {
	if len(args) != 2 || neg {
		ts.Fatalf("usage: readpids VAR file")
	}
	pids, err := testproc.OuterPIDs(ts.ReadFile(args[1]))
	ts.Check(err)
	out := make([]string, len(pids))
	for i, p := range pids {
		out[i] = strconv.Itoa(p)
	}
	ts.Setenv(args[0], strings.Join(out, " "))
}

// waitnoproc [-t secs] regexp: block until no live process's command line
// (its arguments joined by spaces) matches regexp: for a process whose pid
// this side cannot learn (it ran in a PID namespace of its own). The
// timeout only guards against a hang.
func cmdWaitNoProc(ts *testscript.TestScript, neg bool, args []string) {
	timeout := 60 * time.Second
	if len(args) > 1 && args[0] == "-t" {
		secs, err := strconv.Atoi(args[1])
		ts.Check(err)
		timeout, args = time.Duration(secs)*time.Second, args[2:]
	}
	if len(args) != 1 || neg {
		ts.Fatalf("usage: waitnoproc [-t secs] regexp")
	}
	re, err := regexp.Compile(args[0])
	ts.Check(err)
	deadline := time.Now().Add(timeout)
	for {
		pid := matchingProc(re)
		if pid == 0 {
			return
		}
		if time.Now().After(deadline) {
			ts.Fatalf("process %d still matches %q after %s", pid, args[0], timeout)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// matchingProc is a live process whose command line matches re (0: none).
func matchingProc(re *regexp.Regexp) int {
	ents, _ := os.ReadDir("/proc")
	for _, e := range ents {
		pid, err := strconv.Atoi(e.Name())
		if err != nil || pid == os.Getpid() {
			continue
		}
		cmdline, err := os.ReadFile("/proc/" + e.Name() + "/cmdline")
		if err != nil || !pidAlive(pid) {
			continue
		}
		if re.Match(bytes.ReplaceAll(bytes.TrimRight(cmdline, "\x00"), []byte{0}, []byte{' '})) {
			return pid
		}
	}
	return 0
}

// waitgone [-t secs] pid...: block until none of the pids is a live process
// (arguments split like alive's). The timeout only guards against a hang.
func cmdWaitGone(ts *testscript.TestScript, neg bool, args []string) {
	timeout := 60 * time.Second
	if len(args) > 1 && args[0] == "-t" {
		secs, err := strconv.Atoi(args[1])
		ts.Check(err)
		timeout, args = time.Duration(secs)*time.Second, args[2:]
	}
	if len(args) == 0 || neg {
		ts.Fatalf("usage: waitgone [-t secs] pid...")
	}
	deadline := time.Now().Add(timeout)
	for _, a := range strings.Fields(strings.Join(args, " ")) {
		pid, err := strconv.Atoi(a)
		ts.Check(err)
		for pidAlive(pid) {
			if time.Now().After(deadline) {
				ts.Fatalf("pid %d still alive after %s", pid, timeout)
			}
			time.Sleep(20 * time.Millisecond)
		}
	}
}

// exits N cmd args...: run cmd like exec (stdout and stderr are kept for the
// next stdout/stderr commands) and require exit code N. A failing pm must
// also print a Try: line, as every pm error does.
func cmdExits(ts *testscript.TestScript, neg bool, args []string) {
	if len(args) < 2 || neg {
		ts.Fatalf("usage: exits N cmd args...")
	}
	want, err := strconv.Atoi(args[0])
	ts.Check(err)
	err = ts.Exec(args[1], args[2:]...)
	got := 0
	if ee, ok := err.(*exec.ExitError); ok {
		got = ee.ExitCode()
	} else if err != nil {
		ts.Fatalf("%s: %v", args[1], err)
	}
	if got != want {
		ts.Fatalf("%s exited %d, want %d", args[1], got, want)
	}
	if args[1] == "pm" && want != 0 && !regexp.MustCompile(`(?m)^Try: \S`).MatchString(ts.ReadFile("stderr")) {
		ts.Fatalf("pm exited %d without a Try: line on stderr", got)
	}
}

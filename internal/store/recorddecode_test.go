package store

import (
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"reflect"
	"runtime"
	"strings"
	"testing"
	"time"

	"github.com/plasmodium/pm/internal/config"
	"github.com/plasmodium/pm/internal/designmode"
	"github.com/plasmodium/pm/internal/driver"
	"github.com/plasmodium/pm/internal/lockedfile"
)

// checkDecodeFast asserts DecodeFast's contract on raw for a record type:
// when it decodes, raw is valid JSON and the record is exactly
// json.Unmarshal's into a zero value; when it does not, the record is
// still zero. It reports whether it decoded.
func checkDecodeFast[T any, P interface {
	*T
	lockedfile.FastDecoder
}](t *testing.T, raw []byte) bool {
	t.Helper()
	var got, zero T
	if !P(&got).DecodeFast(raw) {
		if !reflect.DeepEqual(got, zero) {
			t.Fatalf("DecodeFast(%q) declined but changed the record to %+v", raw, got)
		}
		return false
	}
	var want T
	if err := json.Unmarshal(raw, &want); err != nil {
		t.Fatalf("DecodeFast(%q) decoded what json.Unmarshal refuses: %v", raw, err)
	}
	if !reflect.DeepEqual(got, want) {
		t.Fatalf("DecodeFast(%q)\n got %#v\nwant %#v", raw, got, want)
	}
	return true
}

// sampleAgents are agent records as pm writes them, in many combinations
// of their optional fields.
func sampleAgents() []Agent {
	at := time.Date(2026, 1, 2, 3, 4, 5, 123456789, time.UTC)
	later, code, zero := at.Add(90*time.Second), 137, 0
	return []Agent{
		{},
		{Name: "cedar_a1b2", Prompt: "owner", TaskID: "tk-a1b2c3", Runtime: config.RuntimeNone, Status: AgentPending, CreatedAt: at},
		{Name: "oak_1a2b", Prompt: "designer", Role: "designer", TaskID: "tk-a1b2c3", PhaseID: "ph-d4e5f6",
			Handle: driver.Handle{Pid: 4242, PidStart: 1234567890123, Run: "run-x1y2", Cgroup: "/sys/fs/cgroup/pm-agents/run-x1y2", Containment: "cgroup, pids.max 1024"}, Runtime: config.RuntimeLLM,
			Model: "gpt-5", Status: AgentRunning, Restarts: 2, Usage: Usage{Turns: 3, ToolCalls: 14, Tokens: 1 << 40, USD: 0.1 + 0.2, Unpriced: 2},
			Sandbox: "landlock (no mount namespace)", CodeDesigner: &designmode.Mode{Enabled: true, Source: designmode.SourceCLI, Since: &at},
			Activity: "working", ActiveAt: &later, CreatedAt: at, StartedAt: &at},
		{Name: "elm_9z8y", Prompt: "reviewer", Runtime: config.RuntimeExec, Status: AgentFailed, ExitCode: &code,
			Reason: "crashed 5 times in 60s: \"exit status 137\" <&> é ✓ \u2028\t\n", CodeDesigner: &designmode.Mode{Source: designmode.SourceEnv},
			CreatedAt: at, StartedAt: &at, EndedAt: &later},
		{Name: "ash_0000", Prompt: "p", Status: AgentExited, ExitCode: &zero, CodeDesigner: &designmode.Mode{},
			Handle: driver.Handle{Pid: -1}, CreatedAt: at.In(time.FixedZone("", 2*3600)), EndedAt: &at},
	}
}

func samplePhases() []Phase {
	at := time.Date(2026, 11, 25, 13, 0, 0, 0, time.UTC)
	closed := at.Add(time.Hour + 5)
	return []Phase{
		{},
		{ID: "ph-a1b2c3", TaskID: "tk-d4e5f6", Name: "Design", MessageLimit: 50, Roles: []string{"designer", "critic"},
			Agents: []string{"oak_1a2b", "elm_9z8y"}, Status: PhaseActive, CreatedAt: at},
		{ID: "ph-a1b2c3", TaskID: "tk-d4e5f6", Name: "Bench", MessageLimit: 100000, Roles: []string{},
			Rules: "be brief\n\"quote\" <tag> & é", Status: PhaseClosed, CreatedAt: at, ClosedAt: &closed, CloseReason: CloseLimit},
		{ID: "ph-000000", Name: "x", Roles: []string{"a"}, Status: PhaseClosed, CreatedAt: at, ClosedAt: &closed, CloseReason: CloseOwnerFailed},
	}
}

// writeSamples writes each record with lockedfile.WriteJSON, as pm does,
// and returns the files' bytes.
func writeSamples[T any](tb testing.TB, records []T) [][]byte {
	tb.Helper()
	dir := tb.TempDir()
	var out [][]byte
	for i := range records {
		p := filepath.Join(dir, "r.json")
		if err := lockedfile.WriteJSON(p, &records[i]); err != nil {
			tb.Fatal(err)
		}
		raw, err := os.ReadFile(p)
		if err != nil {
			tb.Fatal(err)
		}
		out = append(out, raw)
	}
	return out
}

func TestDecodeFastWrittenRecords(t *testing.T) {
	for _, raw := range writeSamples(t, sampleAgents()) {
		if !checkDecodeFast[Agent](t, raw) {
			t.Errorf("Agent.DecodeFast declined a file pm writes:\n%s", raw)
		}
	}
	for _, raw := range writeSamples(t, samplePhases()) {
		if !checkDecodeFast[Phase](t, raw) {
			t.Errorf("Phase.DecodeFast declined a file pm writes:\n%s", raw)
		}
	}
}

func TestDecodeFastAgent(t *testing.T) {
	const at = `"2026-01-02T03:04:05.5Z"`
	cases := []struct {
		name string
		json string
		fast bool // the fast path must handle it (else it must decline it)
	}{
		{"empty object", `{}`, true},
		{"compact", `{"name":"a","pid":1,"pid_start":2,"usage":{"turns":1,"tool_calls":2,"tokens":3},"created_at":` + at + `}`, true},
		{"nulls leave fields zero", `{"name":null,"pid":null,"exit_code":null,"usage":null,"code_designer":null,"created_at":null,"ended_at":null}`, true},
		{"empty nested objects", `{"usage":{},"code_designer":{}}`, true},
		{"mode with a null since", `{"code_designer":{"enabled":false,"source":null,"since":null}}`, true},
		{"unknown keys with scalars", `{"x":1.5e3,"y":"\ud800","z":true,"w":null,"usage":{"q":-1},"code_designer":{"q":"s"}}`, true},
		{"escapes", `{"reason":"a\"b\\c\/d\b\f\n\r\t\u00e9\u2028"}`, true},
		{"time with an offset", `{"created_at":"2026-01-02T03:04:05+02:00","started_at":"2026-01-02T03:04:05.1-07:30"}`, true},
		{"negative zero into an int", `{"pid":-0,"restarts":0}`, true},
		{"largest ints", `{"pid":9223372036854775807,"pid_start":18446744073709551615,"usage":{"tokens":-9223372036854775808}}`, true},

		{"not an object", `[]`, false},
		{"trailing garbage", `{} x`, false},
		{"two documents", `{}{}`, false},
		{"truncated", `{"name":"a"`, false},
		{"repeated key", `{"name":"a","name":"b"}`, false},
		{"repeated nested object", `{"usage":{"turns":1},"usage":{"tokens":2}}`, false},
		{"key in another case", `{"Name":"a"}`, false},
		{"promoted key in another case", `{"PID":1}`, false},
		{"nested key in another case", `{"usage":{"Turns":1}}`, false},
		{"escaped key", `{"n\u0061me":"a"}`, false},
		{"non-ASCII key (Kelvin sign folds to k)", `{"tas\u212a_id":"a"}`, false},
		{"non-ASCII raw key", "{\"\u017fandbox\":\"a\"}", false},
		{"unknown key with an object", `{"x":{}}`, false},
		{"unknown key with an array", `{"x":[]}`, false},
		{"invalid UTF-8", "{\"name\":\"a\xffb\"}", false},
		{"surrogate pair", `{"name":"\ud834\udd1e"}`, false},
		{"number into a string", `{"name":1}`, false},
		{"string into an int", `{"pid":"1"}`, false},
		{"fraction into an int", `{"pid":1.0}`, false},
		{"exponent into an int", `{"restarts":1e2}`, false},
		{"int overflow", `{"pid":9223372036854775808}`, false},
		{"negative into uint64", `{"pid_start":-1}`, false},
		{"negative zero into uint64", `{"pid_start":-0}`, false},
		{"uint64 overflow", `{"pid_start":18446744073709551616}`, false},
		{"string into a bool", `{"code_designer":{"enabled":"true"}}`, false},
		{"number into a time", `{"created_at":1}`, false},
		{"time json refuses", `{"created_at":"yesterday"}`, false},
		{"time with an escape json refuses", `{"created_at":"2026-01-02T03:04:05\u005a"}`, false},
		{"array into usage", `{"usage":[]}`, false},
		{"string into mode", `{"code_designer":"on"}`, false},
		{"invalid number", `{"pid":01}`, false},
		{"invalid literal", `{"x":nul}`, false},
		{"missing colon", `{"name" "a"}`, false},
		{"trailing comma", `{"name":"a",}`, false},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			if got := checkDecodeFast[Agent](t, []byte(c.json)); got != c.fast {
				t.Errorf("DecodeFast(%s) = %v, want %v", c.json, got, c.fast)
			}
		})
	}
}

func TestDecodeFastPhase(t *testing.T) {
	cases := []struct {
		name string
		json string
		fast bool
	}{
		{"empty arrays stay non-nil", `{"roles":[],"agents":[ ]}`, true},
		{"null arrays stay nil", `{"roles":null,"agents":null}`, true},
		{"arrays with spaces", "{\"roles\" : [ \"a\" ,\n\"b\\n\" ] }", true},
		{"a limit", `{"message_limit":100000,"closed_at":"2026-01-02T03:04:05Z"}`, true},

		{"null in an array", `{"roles":["a",null]}`, false},
		{"number in an array", `{"roles":[1]}`, false},
		{"nested array", `{"roles":[[]]}`, false},
		{"unterminated array", `{"roles":["a"}`, false},
		{"trailing comma in an array", `{"roles":["a",]}`, false},
		{"repeated array", `{"roles":["a"],"roles":["b"]}`, false},
		{"key in another case", `{"Roles":["a"]}`, false},
		{"string into the limit", `{"message_limit":"50"}`, false},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			if got := checkDecodeFast[Phase](t, []byte(c.json)); got != c.fast {
				t.Errorf("DecodeFast(%s) = %v, want %v", c.json, got, c.fast)
			}
		})
	}
}

// TestDecodeFastOnlyIntoZero: encoding/json merges a file into the fields
// a value already has; DecodeFast declines a value that is not zero.
func TestDecodeFastOnlyIntoZero(t *testing.T) {
	a := Agent{Model: "kept"}
	if a.DecodeFast([]byte(`{"name":"a"}`)) || a != (Agent{Model: "kept"}) {
		t.Errorf("Agent.DecodeFast decoded into a non-zero agent: %+v", a)
	}
	p := Phase{Roles: []string{}}
	if p.DecodeFast([]byte(`{"name":"a"}`)) || p.Name != "" {
		t.Errorf("Phase.DecodeFast decoded into a non-zero phase: %+v", p)
	}
}

// fuzzSeedRecords adds every sample file, and each file cut short and
// with a byte changed in a few places, as seeds.
func fuzzSeedRecords(f *testing.F, files [][]byte) {
	for _, raw := range files {
		f.Add(raw)
		f.Add(raw[:len(raw)/2])
		f.Add([]byte(strings.Replace(string(raw), `"`, `\"`, 1)))
		f.Add([]byte(strings.ReplaceAll(string(raw), `": "`, `": 1`)))
	}
	f.Add([]byte(`{"pid":-0,"pid_start":-0,"usage":{"turns":1e1},"roles":[],"agents":null}`))
	f.Add([]byte(`{"ID":"a","N\u0061me":"b","ſtatus":"c"}`))
}

func FuzzDecodeAgent(f *testing.F) {
	fuzzSeedRecords(f, writeSamples(f, sampleAgents()))
	f.Fuzz(func(t *testing.T, raw []byte) { checkDecodeFast[Agent](t, raw) })
}

func FuzzDecodePhase(f *testing.F) {
	fuzzSeedRecords(f, writeSamples(f, samplePhases()))
	f.Fuzz(func(t *testing.T, raw []byte) { checkDecodeFast[Phase](t, raw) })
}

// BenchmarkDecodeRecords decodes an agent.json and a phase.json as pm
// writes them, fast path and encoding/json (steady state: encoding/json's
// caches warm; TestDecodeFastFreshProcess measures a first use).
func BenchmarkDecodeRecords(b *testing.B) {
	benchDecode[Agent](b, "agent", writeSamples(b, sampleAgents())[2])
	benchDecode[Phase](b, "phase", writeSamples(b, samplePhases())[1])
}

func benchDecode[T any, P interface {
	*T
	lockedfile.FastDecoder
}](b *testing.B, name string, raw []byte) {
	b.Run(name+"/fast", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			var v T
			if !P(&v).DecodeFast(raw) {
				b.Fatal("declined")
			}
		}
	})
	b.Run(name+"/json", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			var v T
			if err := json.Unmarshal(raw, &v); err != nil {
				b.Fatal(err)
			}
		}
	})
}

// TestDecodeFastFreshProcess measures what a short command pays: one
// agent.json and two phase.json decoded in a fresh process (this test
// binary run again as a helper), through lockedfile.ReadJSON (the fast
// path) and through json.Unmarshal, and checks the fast path allocates
// less. go test -v shows the figures.
func TestDecodeFastFreshProcess(t *testing.T) {
	if dir := os.Getenv("PM_TEST_DECODE_HELPER"); dir != "" {
		decodeHelper(dir, os.Getenv("PM_TEST_DECODE_MODE"))
		return
	}
	if testing.Short() {
		t.Skip("runs subprocesses")
	}
	dir := t.TempDir()
	a, p := sampleAgents()[2], samplePhases()[1]
	if err := lockedfile.WriteJSON(filepath.Join(dir, "agent.json"), &a); err != nil {
		t.Fatal(err)
	}
	if err := lockedfile.WriteJSON(filepath.Join(dir, "phase.json"), &p); err != nil {
		t.Fatal(err)
	}
	type figures struct{ mallocs, bytes, ns uint64 }
	best := map[string]figures{}
	for range 7 {
		for _, mode := range []string{"fast", "json"} {
			cmd := exec.Command(os.Args[0], "-test.run=^TestDecodeFastFreshProcess$")
			cmd.Env = append(os.Environ(), "PM_TEST_DECODE_HELPER="+dir, "PM_TEST_DECODE_MODE="+mode)
			out, err := cmd.Output()
			if err != nil {
				t.Fatalf("helper %s: %v\n%s", mode, err, out)
			}
			var f figures
			if _, err := fmt.Sscanf(string(out), "%d %d %d", &f.mallocs, &f.bytes, &f.ns); err != nil {
				t.Fatalf("helper %s: %q: %v", mode, out, err)
			}
			if b, ok := best[mode]; !ok || f.ns < b.ns {
				best[mode] = f
			}
		}
	}
	fast, slow := best["fast"], best["json"]
	t.Logf("first agent.json + 2 phase.json in a fresh process (best of 7): fast path %d allocs, %d B, %.1f µs; encoding/json %d allocs, %d B, %.1f µs",
		fast.mallocs, fast.bytes, float64(fast.ns)/1e3, slow.mallocs, slow.bytes, float64(slow.ns)/1e3)
	if fast.mallocs >= slow.mallocs {
		t.Errorf("the fast path allocates %d times, encoding/json %d", fast.mallocs, slow.mallocs)
	}
}

// decodeHelper decodes dir's agent.json once and phase.json twice and
// prints the allocations and the time it took.
func decodeHelper(dir, mode string) {
	agentPath, phasePath := filepath.Join(dir, "agent.json"), filepath.Join(dir, "phase.json")
	read := func(path string, v any) {
		var err error
		if mode == "fast" {
			err = lockedfile.ReadJSON(path, v)
		} else { // the same read, then encoding/json
			var raw []byte
			keep := func(b []byte) bool { raw = append(raw, b...); return false }
			if err = lockedfile.ReadJSONIf(path, v, keep); errors.Is(err, lockedfile.ErrSkipped) {
				err = json.Unmarshal(raw, v)
			}
		}
		if err != nil {
			panic(err)
		}
	}
	var before, after runtime.MemStats
	runtime.ReadMemStats(&before)
	start := time.Now()
	var a Agent
	var p1, p2 Phase
	read(agentPath, &a)
	read(phasePath, &p1)
	read(phasePath, &p2)
	elapsed := time.Since(start)
	runtime.ReadMemStats(&after)
	fmt.Printf("%d %d %d\n", after.Mallocs-before.Mallocs, after.TotalAlloc-before.TotalAlloc, elapsed.Nanoseconds())
	os.Exit(0)
}

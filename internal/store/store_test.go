package store_test

import (
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/plasmodium/pm/internal/bus"
	"github.com/plasmodium/pm/internal/config"
	"github.com/plasmodium/pm/internal/driver"
	"github.com/plasmodium/pm/internal/errs"
	"github.com/plasmodium/pm/internal/jsonl"
	"github.com/plasmodium/pm/internal/secret"
	"github.com/plasmodium/pm/internal/store"
)

func TestLoadConfig(t *testing.T) {
	def := config.DefaultConfig()
	tests := []struct {
		name    string
		data    *string // nil: no file
		want    func(c *config.Config)
		errSubs []string
	}{
		{name: "missing file means defaults", want: func(*config.Config) {}},
		{name: "empty object means defaults", data: ptr("{}"), want: func(*config.Config) {}},
		{
			name: "partial limits keep the other defaults",
			data: ptr(`{"limits": {"active_tasks": 2}}`),
			want: func(c *config.Config) { c.Limits.ActiveTasks = 2 },
		},
		{
			name: "partial runtime keeps exec command",
			data: ptr(`{"runtime": {"default": "none"}}`),
			want: func(c *config.Config) { c.Runtime.Default = "none" },
		},
		{
			name: "model and exec",
			data: ptr(`{"model": {"name": "m", "base_url": "http://x"}, "runtime": {"exec": {"command": ["sh", "-c", "x"]}}}`),
			want: func(c *config.Config) {
				c.Model.Name, c.Model.BaseURL = "m", "http://x"
				c.Runtime.Exec.Command = []string{"sh", "-c", "x"}
			},
		},
		{
			name: "zero limit is allowed",
			data: ptr(`{"limits": {"phases_per_task": 0}}`),
			want: func(c *config.Config) { c.Limits.PhasesPerTask = 0 },
		},
		{
			name: "stop grace",
			data: ptr(`{"runtime": {"stop_grace_seconds": 7}}`),
			want: func(c *config.Config) { c.Runtime.StopGraceSeconds = 7 },
		},
		{name: "negative stop grace rejected", data: ptr(`{"runtime": {"stop_grace_seconds": -1}}`), errSubs: []string{"config.json", "runtime.stop_grace_seconds", "-1"}},
		{name: "malformed names file and line", data: ptr("{\n  \"limits\": {\n    \"active_tasks\": ,\n  }\n}\n"), errSubs: []string{"config.json:3:", "malformed"}},
		{name: "wrong type names file and line", data: ptr("{\n  \"limits\": {\n    \"active_tasks\": \"ten\"\n  }\n}\n"), errSubs: []string{"config.json:3:"}},
		{name: "negative limit rejected", data: ptr(`{"limits": {"subtask_depth": -1}}`), errSubs: []string{"config.json", "limits.subtask_depth", "-1"}},
		{name: "bad runtime", data: ptr(`{"runtime": {"default": "docker"}}`), errSubs: []string{"config.json", "runtime.default", "docker"}},
		{name: "empty runtime", data: ptr(`{"runtime": {"default": ""}}`), errSubs: []string{"runtime.default"}},
		{
			name: "http allow",
			data: ptr(`{"sandbox": {"http_allow": ["127.0.0.1:8080", "10.0.0.0/8"]}}`),
			want: func(c *config.Config) { c.Sandbox.HTTPAllow = []string{"127.0.0.1:8080", "10.0.0.0/8"} },
		},
		{name: "http allow names a host", data: ptr(`{"sandbox": {"http_allow": ["localhost"]}}`), errSubs: []string{"config.json", "sandbox.http_allow", "localhost"}},
		{
			name: "code designer models",
			data: ptr(`{"code_designer": {"supervisor_model": "big", "worker_model": "small", "max_passes": 4}}`),
			want: func(c *config.Config) {
				c.CodeDesigner = config.CodeDesigner{SupervisorModel: "big", WorkerModel: "small", MaxPasses: 4}
			},
		},
		{name: "negative max passes rejected", data: ptr(`{"code_designer": {"max_passes": -2}}`), errSubs: []string{"config.json", "code_designer.max_passes", "-2"}},
		{name: "code designer typo", data: ptr(`{"code_designer": {"worker_modle": "x"}}`), errSubs: []string{"code_designer.worker_modle", "code_designer.worker_model"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			path := filepath.Join(t.TempDir(), "config.json")
			if tt.data != nil {
				if err := os.WriteFile(path, []byte(*tt.data), 0o644); err != nil {
					t.Fatal(err)
				}
			}
			got, err := config.LoadConfig(path)
			if tt.errSubs != nil {
				if err == nil {
					t.Fatalf("LoadConfig succeeded with %+v", got)
				}
				for _, s := range tt.errSubs {
					if !strings.Contains(err.Error(), s) {
						t.Errorf("error %q does not contain %q", err, s)
					}
				}
				if !strings.Contains(err.Error(), path) {
					t.Errorf("error %q does not name the file", err)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			want := def
			want.Runtime.Exec.Command = append([]string(nil), def.Runtime.Exec.Command...)
			tt.want(&want)
			if !reflect.DeepEqual(got, want) {
				t.Errorf("config =\n %+v\nwant\n %+v", got, want)
			}
		})
	}
}

func ptr(s string) *string { return &s }

// The driver's handle is embedded in agent.json as the two fields it always
// had, in the same place: records written before the driver still load.
func TestAgentHandleOnDisk(t *testing.T) {
	a := store.Agent{Name: "oak_0001", PhaseID: "ph-000001", Handle: driver.Handle{Pid: 12, PidStart: 34}, Runtime: "exec"}
	data, err := json.Marshal(a)
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(data), `"phase_id":"ph-000001","pid":12,"pid_start":34,"runtime":"exec"`) {
		t.Fatalf("agent.json = %s", data)
	}
	var back store.Agent
	if err := json.Unmarshal([]byte(`{"name":"x","pid":56,"pid_start":78}`), &back); err != nil {
		t.Fatal(err)
	}
	if back.Handle != (driver.Handle{Pid: 56, PidStart: 78}) {
		t.Fatalf("loaded handle %+v", back.Handle)
	}
}

// The one stop grace defaults to the 3 s pm kill always gave an agent.
func TestStopGrace(t *testing.T) {
	if got := config.DefaultConfig().Runtime.StopGrace(); got != 3*time.Second {
		t.Fatalf("default stop grace %v, want 3s", got)
	}
	if got := (config.Runtime{StopGraceSeconds: 0}).StopGrace(); got != 0 {
		t.Fatalf("zero stop grace %v", got)
	}
}

func TestDefaultConfigMatchesSpec(t *testing.T) {
	l := config.DefaultConfig().Limits
	want := config.Limits{AgentsPerPhase: 3, SubtaskDepth: 4, ActiveTasks: 10, MessagesPerPhase: 50, PhasesPerTask: 20}
	if l != want {
		t.Fatalf("default limits %+v, want the SPEC's %+v", l, want)
	}
}

func TestFind(t *testing.T) {
	base := t.TempDir()
	project := filepath.Join(base, "project")
	deep := filepath.Join(project, "a", "b", "c")
	if err := os.MkdirAll(deep, 0o755); err != nil {
		t.Fatal(err)
	}
	root, created, err := store.Init(project, time.Now)
	if err != nil || !created {
		t.Fatalf("Init: %v, created %v", err, created)
	}
	// A file named .plasmodium is not a state directory.
	other := filepath.Join(base, "other", "x")
	if err := os.MkdirAll(other, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(base, "other", store.DirName), nil, 0o644); err != nil {
		t.Fatal(err)
	}

	tests := []struct {
		name   string
		pmHome string
		dir    string
		want   string
		code   errs.Code
	}{
		{name: "in the project", dir: project, want: root},
		{name: "walks up", dir: deep, want: root},
		{name: "PM_HOME wins", pmHome: "/some/where/.plasmodium", dir: deep, want: "/some/where/.plasmodium"},
		{name: "relative PM_HOME is made absolute", pmHome: "rel/.plasmodium", dir: deep, want: mustAbs(t, "rel/.plasmodium")},
		{name: "not found", dir: other, code: errs.NotFound},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := store.Find(tt.pmHome, tt.dir)
			if tt.code != 0 {
				if errs.CodeOf(err) != tt.code {
					t.Fatalf("Find = %q, %v; want exit %d", got, err, tt.code)
				}
				if errs.TryOf(err) == "" {
					t.Errorf("not-found error has no Try hint")
				}
				return
			}
			if err != nil || got != tt.want {
				t.Fatalf("Find = %q, %v; want %q", got, err, tt.want)
			}
		})
	}
}

func mustAbs(t *testing.T, p string) string {
	a, err := filepath.Abs(p)
	if err != nil {
		t.Fatal(err)
	}
	return a
}

func TestInitIdempotent(t *testing.T) {
	dir := t.TempDir()
	root, created, err := store.Init(dir, time.Now)
	if err != nil || !created || root != filepath.Join(dir, store.DirName) {
		t.Fatalf("Init = %q, %v, %v", root, created, err)
	}
	for _, sub := range []string{"tasks", "agents", "requests", "logs", "prompts"} {
		if st, err := os.Stat(filepath.Join(root, sub)); err != nil || !st.IsDir() {
			t.Errorf("%s: %v", sub, err)
		}
	}
	if gi, _ := os.ReadFile(filepath.Join(root, ".gitignore")); string(gi) != "*\n" {
		t.Errorf(".gitignore = %q", gi)
	}
	cfg, err := config.LoadConfig(filepath.Join(root, "config.json"))
	if err != nil || !reflect.DeepEqual(cfg, config.DefaultConfig()) {
		t.Fatalf("config after init: %+v, %v", cfg, err)
	}

	// Change config and state; a second init keeps both.
	custom := []byte(`{"limits": {"active_tasks": 3}}`)
	if err := os.WriteFile(filepath.Join(root, "config.json"), custom, 0o644); err != nil {
		t.Fatal(err)
	}
	marker := filepath.Join(root, "tasks", "tk-000001")
	if err := os.MkdirAll(marker, 0o755); err != nil {
		t.Fatal(err)
	}
	root2, created, err := store.Init(dir, time.Now)
	if err != nil || created || root2 != root {
		t.Fatalf("second Init = %q, created %v, %v", root2, created, err)
	}
	if got, _ := os.ReadFile(filepath.Join(root, "config.json")); !bytes.Equal(got, custom) {
		t.Errorf("second Init rewrote config.json: %q", got)
	}
	if _, err := os.Stat(marker); err != nil {
		t.Errorf("second Init lost state: %v", err)
	}
}

func TestOpen(t *testing.T) {
	_, err := store.Open(filepath.Join(t.TempDir(), "none"))
	if errs.CodeOf(err) != errs.NotFound {
		t.Fatalf("Open(missing) = %v, want exit 4", err)
	}
	root, _, err := store.Init(t.TempDir(), time.Now)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(root, "config.json"), []byte("{\n\n oops"), 0o644); err != nil {
		t.Fatal(err)
	}
	_, err = store.Open(root)
	if err == nil || errs.CodeOf(err) != errs.Failure || !strings.Contains(err.Error(), "config.json:3:") {
		t.Fatalf("Open(bad config) = %v, want exit 1 naming config.json:3", err)
	}
	if !strings.Contains(errs.TryOf(err), "config.json") {
		t.Errorf("Try %q does not say which file to fix", errs.TryOf(err))
	}
}

func newStore(t *testing.T) (*store.Store, *bytes.Buffer) {
	t.Helper()
	root, _, err := store.Init(t.TempDir(), time.Now)
	if err != nil {
		t.Fatal(err)
	}
	s, err := store.Open(root)
	if err != nil {
		t.Fatal(err)
	}
	warn := &bytes.Buffer{}
	s.Warn = warn
	return s, warn
}

func TestTasksSkipsMalformed(t *testing.T) {
	s, warn := newStore(t)
	base := time.Date(2024, 1, 1, 0, 0, 0, 0, time.UTC)
	// Written newest first: Tasks must sort by creation time.
	for i, id := range []string{"tk-00000c", "tk-00000b", "tk-00000a"} {
		if err := s.WriteTask(&store.Task{ID: id, Description: id, Status: store.TaskActive, CreatedAt: base.Add(-time.Duration(i) * time.Hour)}); err != nil {
			t.Fatal(err)
		}
	}
	if err := os.WriteFile(s.TaskPath("tk-00000b"), []byte("{\n\"id\": \"tk-00000b\",\n broken"), 0o644); err != nil {
		t.Fatal(err)
	}
	// Not task directories: ignored without a warning.
	for _, junk := range []string{"notes", "tk-zzzzzz", "tk-00000d"} {
		if err := os.MkdirAll(filepath.Join(s.TasksDir(), junk), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	tasks, err := s.Tasks()
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, tk := range tasks {
		got = append(got, tk.ID)
	}
	if strings.Join(got, ",") != "tk-00000a,tk-00000c" {
		t.Fatalf("Tasks = %v, want the two good ones oldest first", got)
	}
	w := warn.String()
	if !strings.Contains(w, "skipped task tk-00000b") || !strings.Contains(w, "task.json:3:") {
		t.Fatalf("warning %q does not name the bad task and its line", w)
	}
	if strings.Count(w, "\n") != 1 {
		t.Fatalf("want exactly one warning, got %q", w)
	}
}

func TestTaskLookupCodes(t *testing.T) {
	s, _ := newStore(t)
	tests := []struct {
		id   string
		code errs.Code
	}{
		{"tk-abcdef", errs.NotFound},
		{"tk-../../etc", errs.Usage},
		{"ph-abcdef", errs.Usage},
		{"", errs.Usage},
	}
	for _, tt := range tests {
		if _, err := s.Task(tt.id); errs.CodeOf(err) != tt.code {
			t.Errorf("Task(%q) = %v, want exit %d", tt.id, err, tt.code)
		}
	}
	if _, err := s.UpdateTask("tk-abcdef", func(*store.Task) error { return nil }); !errs.Is(err, errs.NotFound) {
		t.Errorf("UpdateTask(missing) = %v", err)
	}
	if _, err := os.Stat(s.TaskPath("tk-abcdef")); !os.IsNotExist(err) {
		t.Errorf("UpdateTask of a missing task created it")
	}
	if _, err := s.Agent("../x"); !errs.Is(err, errs.Usage) {
		t.Errorf("Agent(../x) = %v, want exit 2", err)
	}
	if _, err := s.Agent("cedar_0000"); !errs.Is(err, errs.NotFound) {
		t.Errorf("Agent(missing) = %v, want exit 4", err)
	}
	if _, err := s.Phase("tk-abcdef", "ph-abcdef"); !errs.Is(err, errs.NotFound) {
		t.Errorf("Phase(missing) = %v, want exit 4", err)
	}
	if _, err := s.FindPhase("ph-abcdef"); !errs.Is(err, errs.NotFound) {
		t.Errorf("FindPhase(missing) = %v, want exit 4", err)
	}
	if _, err := s.FindPhase("ph-x"); !errs.Is(err, errs.Usage) {
		t.Errorf("FindPhase(bad id) = %v, want exit 2", err)
	}
}

func TestAgentsSkipsMalformed(t *testing.T) {
	s, warn := newStore(t)
	now := time.Now()
	for i, name := range []string{"oak_0002", "oak_0001", "bad_0000"} {
		if err := s.WriteAgent(&store.Agent{Name: name, Status: store.AgentPending, CreatedAt: now.Add(-time.Duration(i) * time.Minute)}); err != nil {
			t.Fatal(err)
		}
	}
	if err := os.WriteFile(s.AgentPath("bad_0000"), []byte("{"), 0o644); err != nil {
		t.Fatal(err)
	}
	as, err := s.Agents()
	if err != nil {
		t.Fatal(err)
	}
	if len(as) != 2 || as[0].Name != "oak_0001" || as[1].Name != "oak_0002" {
		t.Fatalf("Agents = %+v", as)
	}
	if !strings.Contains(warn.String(), "skipped agent bad_0000") {
		t.Fatalf("warnings %q", warn.String())
	}
}

func TestBusPublish(t *testing.T) {
	s, _ := newStore(t)
	fixed := time.Date(2024, 5, 6, 7, 8, 9, 0, time.FixedZone("X", 3600))
	s.Now = func() time.Time { return fixed }
	if err := s.Bus().Publish(bus.Event{Kind: bus.EvInit}); err != nil {
		t.Fatal(err)
	}
	if err := s.Bus().Publish(bus.Event{Kind: bus.EvTaskCreated, Actor: "oak_0001", Time: fixed.Add(time.Hour)}); err != nil {
		t.Fatal(err)
	}
	evs, err := jsonl.ReadAll[bus.Event](s.EventsPath(), nil)
	if err != nil || len(evs) != 2 {
		t.Fatalf("events: %v, %v", evs, err)
	}
	if evs[0].Actor != "human" || !evs[0].Time.Equal(fixed) || evs[0].Time.Location() != time.UTC {
		t.Errorf("first event %+v: want actor human and the clock's time in UTC", evs[0])
	}
	if evs[1].Actor != "oak_0001" || !evs[1].Time.Equal(fixed.Add(time.Hour)) {
		t.Errorf("second event %+v: explicit fields must be kept", evs[1])
	}
}

// Publishing masks the store's secrets in an event's text and data, and
// leaves the caller's data alone; a value too short to mask ("tiny") stays.
func TestPublishMasksSecrets(t *testing.T) {
	const key = "sk-emit-0123456789"
	s, _ := newStore(t)
	s.Secrets = secret.New(key, "tiny")
	data := map[string]any{"rules": "no " + key, "files": []string{key + ".txt"}, "n": 3}
	s.Notify(bus.Event{Kind: bus.EvMessage, Text: "key " + key + " and tiny", Data: data})
	b, err := os.ReadFile(s.EventsPath())
	if err != nil {
		t.Fatal(err)
	}
	line := string(b)
	for _, want := range []string{`"text":"key [masked] and tiny"`, `"files":["[masked].txt"]`, `"n":3`, `"rules":"no [masked]"`} {
		if !strings.Contains(line, want) {
			t.Errorf("event %s: want %s", line, want)
		}
	}
	if strings.Contains(line, key) || data["rules"] != "no "+key {
		t.Errorf("event holds the key, or the caller's data changed: %s %v", line, data)
	}
}

// Notify never fails the operation it announces: a failed publish is a
// warning on the store's warning stream; a working one warns nothing.
func TestNotifyWarnsOnFailure(t *testing.T) {
	cases := []struct {
		name     string
		breakBus bool
		warn     string
	}{
		{"published", false, ""},
		{"bus unwritable", true, "pm: warning: event task.done not recorded on the bus: "},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			s, warn := newStore(t)
			if c.breakBus {
				// A directory where the file should be: every append fails.
				if err := os.Mkdir(s.EventsPath(), 0o755); err != nil {
					t.Fatal(err)
				}
			}
			s.Notify(bus.Event{Kind: bus.EvTaskDone, TaskID: "tk-000001"})
			if got := warn.String(); (c.warn == "" && got != "") || !strings.Contains(got, c.warn) {
				t.Fatalf("warnings %q, want %q", got, c.warn)
			}
		})
	}
}

// EventBus replaces the file bus: tests can run on a bus in memory.
func TestEventBusOverride(t *testing.T) {
	s, _ := newStore(t)
	mem := &bus.Mem{}
	s.EventBus = mem
	s.Notify(bus.Event{Kind: bus.EvInit})
	if evs, _, _ := mem.Tail(5); len(evs) != 1 || evs[0].Event.Kind != bus.EvInit {
		t.Fatalf("memory bus holds %+v", evs)
	}
	if _, err := os.Stat(s.EventsPath()); !os.IsNotExist(err) {
		t.Fatalf("events.jsonl written with an EventBus set: %v", err)
	}
}

func TestMessagesSkipsBadLines(t *testing.T) {
	s, warn := newStore(t)
	path := s.MessagesPath("tk-000001", "ph-000001")
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		t.Fatal(err)
	}
	data := `{"id":"msg-000001","content":"a"}` + "\n" + `{"id":"msg-00` + "\n" + `{"id":"msg-000002","content":"b"}` + "\n"
	if err := os.WriteFile(path, []byte(data), 0o644); err != nil {
		t.Fatal(err)
	}
	ms, err := s.Messages("tk-000001", "ph-000001")
	if err != nil || len(ms) != 2 || ms[1].Content != "b" {
		t.Fatalf("Messages = %+v, %v", ms, err)
	}
	if !strings.Contains(warn.String(), "messages.jsonl:2: skipped") {
		t.Fatalf("warning %q does not name line 2", warn.String())
	}
}

func TestActor(t *testing.T) {
	if !store.Human.IsHuman() || store.Human.Role() != "" || store.Human.Name != "human" {
		t.Fatal("Human actor")
	}
	a := store.Actor{Name: "oak_0001", Agent: &store.Agent{Name: "oak_0001", Role: "qa"}}
	if a.IsHuman() || a.Role() != "qa" {
		t.Fatal("agent actor")
	}
	if !(&store.Agent{}).IsOwner() || (&store.Agent{Role: "qa"}).IsOwner() {
		t.Fatal("IsOwner")
	}
	for status, live := range map[store.TaskStatus]bool{store.TaskActive: true, store.TaskBlocked: true, store.TaskDone: false, store.TaskKilled: false} {
		if (&store.Task{Status: status}).Live() != live {
			t.Errorf("Live(%s) != %v", status, live)
		}
	}
}

// A JSON value that is not a message (written by hand) does not use up the room.
func TestMessageCountIgnoresNonMessages(t *testing.T) {
	s, _ := newStore(t)
	path := s.MessagesPath("tk-000001", "ph-000001")
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		t.Fatal(err)
	}
	data := `{"id":"msg-000001","author":"a","content":"x"}` + "\n" + `[1,2]` + "\n" + `{}` + "\n" + `"hello"` + "\n" + `{"id":"msg-000002","author":"b","content":"y"}` + "\n"
	if err := os.WriteFile(path, []byte(data), 0o644); err != nil {
		t.Fatal(err)
	}
	n, err := s.MessageCount("tk-000001", "ph-000001")
	if err != nil || n != 2 {
		t.Fatalf("MessageCount = %d, %v; want 2", n, err)
	}
	ms, _ := s.Messages("tk-000001", "ph-000001")
	if len(ms) != 2 {
		t.Fatalf("Messages = %+v; want the 2 messages", ms)
	}
}

package fsstate_test

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/plasmodium/pm/internal/cost"
	"github.com/plasmodium/pm/internal/state/fsstate"
	"github.com/plasmodium/pm/internal/store"
)

// The agent logs stay where a .plasmodium/ made before the seam keeps
// them, one JSON line each: agents/NAME/transcript.jsonl,
// agents/NAME/stream.jsonl and costs.jsonl. Lines written by hand as an
// older pm wrote them read back, and what the state appends lands there.
func TestAgentLogsKeepTheirFiles(t *testing.T) {
	root, _, err := store.Init(t.TempDir(), nil)
	if err != nil {
		t.Fatal(err)
	}
	s, err := store.Open(root)
	if err != nil {
		t.Fatal(err)
	}
	f := fsstate.New(s)
	const name = "oak_0001"
	old := map[string]string{
		filepath.Join(root, "agents", name, "transcript.jsonl"): `{"role":"user","content":"before"}` + "\n",
		filepath.Join(root, "agents", name, "stream.jsonl"):     `{"corr":"rq-000001","text":"Hel"}` + "\n",
		filepath.Join(root, "costs.jsonl"):                      `{"at":"2026-01-02T03:04:05Z","agent":"oak_0001","runtime":"llm","turns":1}` + "\n",
	}
	for path, line := range old {
		if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(path, []byte(line), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	read := func(fn func(string, int64, func(json.RawMessage, int64) error) (int64, error)) []string {
		var out []string
		if _, err := fn(name, 0, func(raw json.RawMessage, _ int64) error { out = append(out, string(raw)); return nil }); err != nil {
			t.Fatal(err)
		}
		return out
	}
	if got := read(f.ReadTranscript); len(got) != 1 || !strings.Contains(got[0], "before") {
		t.Errorf("the old transcript reads %q", got)
	}
	if got := read(f.ReadReplies); len(got) != 1 || !strings.Contains(got[0], "Hel") {
		t.Errorf("the old reply stream reads %q", got)
	}
	var entries []cost.Entry
	if err := f.Costs(time.Time{}, func(e cost.Entry) error { entries = append(entries, e); return nil }); err != nil || len(entries) != 1 || entries[0].Agent != name {
		t.Errorf("the old ledger reads %+v, %v", entries, err)
	}
	if err := f.AppendTranscript(name, map[string]string{"role": "assistant", "content": "after"}); err != nil {
		t.Fatal(err)
	}
	if err := f.AppendReply(name, map[string]string{"corr": "rq-000001", "text": "lo"}); err != nil {
		t.Fatal(err)
	}
	if err := f.AppendCost(cost.Entry{Agent: "elm_0002", Turns: 1}); err != nil {
		t.Fatal(err)
	}
	for path, line := range old {
		data, err := os.ReadFile(path)
		if err != nil {
			t.Fatal(err)
		}
		got := strings.Split(strings.TrimSuffix(string(data), "\n"), "\n")
		if len(got) != 2 || got[0]+"\n" != line || !json.Valid([]byte(got[1])) {
			t.Errorf("%s holds %q: want the old line and one new JSON line", path, data)
		}
	}
}

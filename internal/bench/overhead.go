package bench

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"time"

	"github.com/plasmodium/pm/internal/agent"
	"github.com/plasmodium/pm/internal/cost"
	"github.com/plasmodium/pm/internal/jsonl"
	"github.com/plasmodium/pm/internal/llmagent"
	"github.com/plasmodium/pm/internal/state/stateopen"
	"github.com/plasmodium/pm/internal/store"
	"github.com/plasmodium/pm/internal/task"
)

// ReferenceModel prices the landing flow's tokens: the flow is replayed,
// so its own model ("replay") has no price.
const ReferenceModel = "gpt-4o-mini"

// Overheads is what pm adds to every llm call of each role of the landing
// flow (llmagent.Overheads), in a fresh project under dir: the landing
// page task, a "Brainstorm" room of 10 messages.
func Overheads(dir string) ([]llmagent.Overhead, error) {
	root, _, err := store.Init(dir, time.Now)
	if err != nil {
		return nil, err
	}
	s, err := store.Open(root)
	if err != nil {
		return nil, err
	}
	st, err := stateopen.Open(context.Background(), s)
	if err != nil {
		return nil, err
	}
	defer st.Close()
	t, err := task.Create(s, &agent.Launcher{Store: s, State: st, Exe: "/nonexistent/pm"}, store.Human,
		task.Spec{Description: "Build a landing page for our product", Runtime: "none"})
	if err != nil {
		return nil, err
	}
	return llmagent.Overheads(s, st, t, "Brainstorm", 10)
}

// Flow is the replayed landing flow's bill: its model calls and tokens
// from the cost ledger, and their dollars at ReferenceModel's price.
type Flow struct {
	Calls int64
	Usage cost.Usage
	USD   float64
	// ByAgent is each agent's calls, by its prompt (owner, designer, ...).
	ByAgent map[string]int64
}

var pmHome = regexp.MustCompile(`PM_HOME=(\S+)`)

// LandingFlow runs `pm demo` (offline: the recorded landing flow, real
// processes and commit) with its temporary project under dir, and sums the
// cost ledger it leaves.
func LandingFlow(ctx context.Context, bin, dir string) (Flow, error) {
	cmd := exec.CommandContext(ctx, bin, "demo")
	cmd.Dir = dir
	var env []string
	for _, kv := range os.Environ() {
		if k, _, _ := strings.Cut(kv, "="); k != "OPENAI_API_KEY" && k != "OPENAI_BASE_URL" && k != "PM_MODEL" && k != "PM_HOME" && k != "TMPDIR" {
			env = append(env, kv)
		}
	}
	cmd.Env = append(env, "TMPDIR="+dir)
	var out bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &out
	if err := cmd.Run(); err != nil {
		return Flow{}, fmt.Errorf("pm demo: %v\n%s", err, out.String())
	}
	m := pmHome.FindSubmatch(out.Bytes())
	if m == nil {
		return Flow{}, fmt.Errorf("pm demo did not say where its state is:\n%s", out.String())
	}
	home := string(m[1])
	entries, err := jsonl.ReadAll[cost.Entry](filepath.Join(home, "costs.jsonl"), nil)
	if err != nil {
		return Flow{}, err
	}
	price, ok := cost.Lookup(ReferenceModel, nil)
	if !ok {
		return Flow{}, fmt.Errorf("no price for %s", ReferenceModel)
	}
	f := Flow{ByAgent: map[string]int64{}}
	for _, e := range entries {
		f.Calls += e.Turns
		f.ByAgent[e.Agent] += e.Turns
		if e.Usage == nil {
			return Flow{}, fmt.Errorf("the replay reported no usage for a call of %s", e.Agent)
		}
		f.Usage = f.Usage.Add(*e.Usage)
	}
	f.USD = price.Dollars(f.Usage)
	return f, nil
}

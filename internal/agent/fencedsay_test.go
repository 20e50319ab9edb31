package agent_test

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"log/slog"
	"strings"
	"testing"
	"time"

	"github.com/plasmodium/pm/internal/agent"
	"github.com/plasmodium/pm/internal/broker"
	"github.com/plasmodium/pm/internal/capability"
	"github.com/plasmodium/pm/internal/errs"
	"github.com/plasmodium/pm/internal/hub/hubtest"
	"github.com/plasmodium/pm/internal/natsx"
	"github.com/plasmodium/pm/internal/ops"
	"github.com/plasmodium/pm/internal/prompt"
	"github.com/plasmodium/pm/internal/state"
	"github.com/plasmodium/pm/internal/state/natsstate"
	"github.com/plasmodium/pm/internal/state/statetest"
	"github.com/plasmodium/pm/internal/store"
)

// A fenced host's pm say is refused by the hub itself (issue 24). Through
// the host's real path (its lease held on a hub, the guard that appends
// the call's fence mark, ops.Say, natsstate's room append): the agent's
// first say is stored; for its second, another host takes the lease
// after the guard's fence mark was accepted and before the say's room
// append (the test's hook is the command the guard runs: the mark is
// accepted by then). The room holds nothing of that say and the caller
// gets an error that says the lease is another host's. With the two-step
// write (a mark, then a plain room append) the say was stored.
func TestFencedSayRefusedByTheHub(t *testing.T) {
	for _, set := range hubtest.Sets() {
		t.Run(set.Name, func(t *testing.T) {
			h := set.Start(t)
			ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
			defer cancel()
			root, _, err := store.Init(t.TempDir(), time.Now)
			if err != nil {
				t.Fatal(err)
			}
			s, err := store.Open(root)
			if err != nil {
				t.Fatal(err)
			}
			const project, name = "fencedsay", "oak_a1b2"
			stA, err := natsstate.Open(ctx, h.Connect(0), project) // host A's machine
			if err != nil {
				t.Fatal(err)
			}
			stB, err := natsstate.Open(ctx, h.Connect(h.Len()-1), project) // host B's
			if err != nil {
				t.Fatal(err)
			}
			tk, ph := statetest.OpenRoom(t, stA, name, 10)

			hl, err := agent.HoldLeaseOn(ctx, stA, name, slog.New(slog.NewTextHandler(io.Discard, nil)))
			if err != nil {
				t.Fatal(err)
			}
			defer hl.Release()
			// takeover is another host taking the agent's lease, as after
			// A's lease expired on the hub: the key goes, B takes it and
			// writes its takeover mark.
			takeover := func() {
				names, _ := natsx.ProjectNames(project)
				kv, err := h.Connect(h.Len()-1).JS.KeyValue(ctx, names.Agents)
				if err != nil {
					t.Fatal(err)
				}
				if err := kv.Delete(ctx, "agent."+name); err != nil {
					t.Fatal(err)
				}
				if _, err := stB.HoldAgent(ctx, name, "host-b"); err != nil {
					t.Fatal(err)
				}
			}
			actor := store.Actor{Name: name, Agent: &store.Agent{Name: name, TaskID: tk.ID}}
			hook := func() {}
			run := hl.Guard(func(_ string, _ func(string), fence state.AgentLease) broker.Runner {
				return func(ctx context.Context, args []string, stdio broker.Stdio) int {
					hook() // after the call's fence mark, before its room append
					sess := &ops.Session{Store: s, State: stA, Actor: actor, Fence: fence}
					if _, err := ops.Say(ctx, sess, ops.SayInput{Message: args[1], Phase: ph.ID}); err != nil {
						fmt.Fprintf(stdio.Err, "pm: %v\n", err)
						return int(errs.CodeOf(err))
					}
					return 0
				}
			})("tok", nil, nil)
			say := func(text string) (int, string) {
				var stderr strings.Builder
				code := run(ctx, []string{"say", text}, broker.Stdio{In: strings.NewReader(""), Out: io.Discard, Err: &stderr})
				return code, stderr.String()
			}

			if code, stderr := say("held"); code != 0 {
				t.Fatalf("the holder's say: exit %d: %s", code, stderr)
			}
			hook = takeover
			code, stderr := say("after the takeover")
			hook = func() {}
			msgs, err := stB.Messages(tk.ID, ph.ID)
			if err != nil {
				t.Fatal(err)
			}
			var got []string
			for _, m := range msgs {
				got = append(got, m.Content)
			}
			if len(got) != 1 || got[0] != "held" {
				t.Fatalf("the room holds %q, want only the say made while the lease was held (the fenced say exited %d: %s)", got, code, stderr)
			}
			if code == 0 || !strings.Contains(stderr, "refused by the hub") {
				t.Fatalf("the fenced say: exit %d, stderr %q; want the hub's refusal", code, stderr)
			}
			// The refusal is proof another host holds the lease: the host
			// is fenced by it at once (its agent stopped), not at its next
			// renewal, a third of a TTL later.
			if !hl.IsLost() {
				t.Fatal("the hub refused the host's say, and the host still holds itself the lease's holder: its agent runs on")
			}

			// An llm agent's say (its tool, run in its host's process, no
			// broker) carries the same lease (agent.LLMFunc's fence,
			// capability.Env.Fence): its tool call's own fence mark, as an
			// exec agent's guard's, and its append are refused by the hub.
			// A new host on A takes the lease back, then B takes it over
			// before the tool's say: the say's mark is refused, nothing is
			// stored, and that host too is fenced at once.
			release := func() {
				names, _ := natsx.ProjectNames(project)
				kv, err := h.Connect(0).JS.KeyValue(ctx, names.Agents)
				if err != nil {
					t.Fatal(err)
				}
				if err := kv.Delete(ctx, "agent."+name); err != nil {
					t.Fatal(err)
				}
			}
			release()
			hl2, err := agent.HoldLeaseOn(ctx, stA, name, slog.New(slog.NewTextHandler(io.Discard, nil)))
			if err != nil {
				t.Fatal(err)
			}
			defer hl2.Release()
			takeover()
			env := &capability.Env{Store: s, State: stA, Actor: actor, Fence: hl2.Lease()}
			tools, err := capability.Tools(env, &prompt.Object{Name: "owner", Capabilities: []string{"say"}, Source: "owner.md"})
			if err != nil {
				t.Fatal(err)
			}
			found := false
			for _, tl := range tools {
				if tl.Name != "say" {
					continue
				}
				found = true
				raw, _ := json.Marshal(map[string]string{"message": "an llm's after the takeover", "phase": ph.ID})
				out, err := tl.Call(ctx, raw)
				if n, cerr := stB.MessageCount(tk.ID, ph.ID); cerr != nil || n != 1 {
					t.Fatalf("the room holds %d messages (%v) after the llm tool's say (%q, %v), want 1", n, cerr, out, err)
				}
				if !strings.Contains(out+fmt.Sprint(err), "another host holds") {
					t.Fatalf("the llm tool's say: %q, %v; want the hub's refusal", out, err)
				}
				if !hl2.IsLost() {
					t.Fatal("the hub refused the llm host's say, and the host still holds itself the lease's holder: its model loop runs on")
				}
			}
			if !found {
				t.Fatal("no say tool")
			}
		})
	}
}

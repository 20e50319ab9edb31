package render

import (
	"bytes"
	"strings"
	"testing"
	"time"

	"github.com/plasmodium/pm/internal/bus"
)

func TestEventPrinter(t *testing.T) {
	t0 := time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)
	evs := []bus.Event{
		{Time: t0, Kind: bus.EvAgentStarted, Actor: "pm", Agent: "oak_0001", TaskID: "tk-000001"},
		{Time: t0.Add(4200 * time.Millisecond), Kind: bus.EvAgentExited, Actor: "oak_0001", Agent: "oak_0001", TaskID: "tk-000001", Data: bus.AgentExited{ExitCode: 3}},
		{Time: t0, Kind: bus.EvMessage, Actor: "oak_0001", TaskID: "tk-000001", PhaseID: "ph-000001", Text: "hi\x1b[2J", Data: bus.MessagePosted{N: 3, Limit: 10}},
		{Time: t0, Kind: bus.EvPhaseClosed, Actor: "oak_0001", PhaseID: "ph-000009", Text: "limit"},
		{Time: t0, Kind: bus.EvAgentTurn, Actor: "oak_0001", Agent: "oak_0001", TaskID: "tk-000001",
			Data: bus.AgentTurn{Turns: 3, ToolCalls: 1, Tokens: 1200}},
		{Time: t0, Kind: bus.EvAgentOutput, Actor: "oak_0001", Agent: "oak_0001", TaskID: "tk-000001", Data: bus.AgentOutput{Retry: true}},
	}
	want := []string{
		"agent.started       pm              tk-000001            @oak_0001\n",
		"agent.exited        oak_0001        tk-000001            (exit 3, after 4.2s)\n",
		"message.posted      oak_0001        tk-000001 ph-000001  hi\\x1b[2J  (3/10)\n",
		"phase.closed        oak_0001        ph-000009            limit\n",
		"agent.turn          oak_0001        tk-000001            (turn 3 · 1 tool call · 1200 tokens)\n",
		"agent.output        oak_0001        tk-000001            (model call retried: the text streamed so far is dropped)\n",
	}
	var b bytes.Buffer
	p := &EventPrinter{W: &b}
	for i, ev := range evs {
		b.Reset()
		if err := p.Print(ev); err != nil {
			t.Fatal(err)
		}
		if got := b.String()[len("15:04:05.000  "):]; got != want[i] {
			t.Errorf("event %d:\n got %q\nwant %q", i, got, want[i])
		}
	}
	b.Reset()
	p = &EventPrinter{W: &b, Color: true}
	_ = p.Print(bus.Event{Time: t0, Kind: bus.EvAgentFailed, Actor: "supervisor", Agent: "x"})
	if !strings.Contains(b.String(), "\x1b[31magent.failed") {
		t.Errorf("no colour on a failure: %q", b.String())
	}
}

func TestUseColor(t *testing.T) {
	env := func(kv ...string) func(string) string {
		return func(k string) string {
			for i := 0; i+1 < len(kv); i += 2 {
				if kv[i] == k {
					return kv[i+1]
				}
			}
			return ""
		}
	}
	if UseColor(&bytes.Buffer{}, env()) {
		t.Error("colour on a buffer")
	}
	if UseColor(nil, env("NO_COLOR", "1")) {
		t.Error("colour despite NO_COLOR")
	}
}

func TestDuration(t *testing.T) {
	for d, want := range map[time.Duration]string{
		850 * time.Millisecond:            "850ms",
		4210 * time.Millisecond:           "4.2s",
		190 * time.Second:                 "3m10s",
		2*time.Hour + 5*time.Minute + 7e9: "2h5m",
	} {
		if got := Duration(d); got != want {
			t.Errorf("Duration(%v) = %q, want %q", d, got, want)
		}
	}
}

package render

import (
	"fmt"
	"io"
	"os"
	"strconv"
	"strings"
	"time"

	"github.com/plasmodium/pm/internal/bus"
)

// EventPrinter writes bus events as pm log shows them: aligned columns
// (time, kind, actor, ids, text), then what the event's data says (exit
// code, count/limit) and how long since the event that opened it (an
// agent's run, a phase, a task), when that event was printed before.
type EventPrinter struct {
	W     io.Writer
	Color bool
	// Width, when set (a terminal's), cuts each line's text to fit it.
	Width int
	// opened remembers when an agent started, a phase opened or a task was
	// created, so the event that ends it can show the duration.
	opened map[string]time.Time
}

// Column widths: the longest kinds and agent names pm writes today; a
// longer value pushes its line out rather than being cut.
const (
	kindWidth  = 18
	actorWidth = 14
	idsWidth   = 19
)

// Print writes one event as one line.
func (p *EventPrinter) Print(ev bus.Event) error {
	ids := strings.TrimSpace(ev.TaskID + " " + ev.PhaseID)
	text := ev.Text
	if len(text) > 200 {
		text = strings.ToValidUTF8(text[:200], "") + "…" // cut on a rune boundary
	}
	text = Terminal(strings.ReplaceAll(text, "\n", " ")) // agent-written: escape controls
	if ev.Agent != "" && ev.Agent != ev.Actor {
		text = strings.TrimSpace("@" + Line(ev.Agent) + " " + text)
	}
	if extra := p.extra(ev); extra != "" {
		text = strings.TrimSpace(text + "  (" + extra + ")")
	}
	kind := fmt.Sprintf("%-*s", kindWidth, Line(ev.Kind))
	rest := fmt.Sprintf("%-*s  %-*s  ", actorWidth, Line(ev.Actor), idsWidth, Line(ids))
	stamp := ev.Time.Local().Format("15:04:05.000")
	text = FitTail(stamp+"  "+kind+"  "+rest, text, p.Width)
	_, err := fmt.Fprintf(p.W, "%s  %s  %s%s\n", p.paint(dim, stamp), p.paint(kindColor(ev.Kind), kind), rest, text)
	return err
}

// turnUsage is an agent.turn's usage so far: "turn 3 · 5 tool calls · 1200 tokens".
func turnUsage(d bus.AgentTurn) string {
	return "turn " + strconv.FormatInt(d.Turns, 10) + " · " + Plural(int(d.ToolCalls), "tool call") + " · " + Plural(int(d.Tokens), "token")
}

// extra is what the event's data and the events before it add: "exit 1",
// "3/10", "ran 4.2s".
func (p *EventPrinter) extra(ev bus.Event) string {
	var parts []string
	switch d := ev.Data.(type) {
	case bus.AgentExited:
		parts = append(parts, "exit "+strconv.Itoa(d.ExitCode))
	case bus.AgentFailed:
		parts = append(parts, "exit "+strconv.Itoa(d.ExitCode))
	case bus.MessagePosted:
		parts = append(parts, strconv.Itoa(d.N)+"/"+strconv.Itoa(d.Limit))
	case bus.PhaseClosed:
		parts = append(parts, strconv.Itoa(d.Messages)+"/"+strconv.Itoa(d.Limit))
	case bus.AgentRespawned:
		parts = append(parts, "restart "+strconv.Itoa(d.Restarts))
	case bus.AgentTurn:
		parts = append(parts, turnUsage(d)) // the event has no text: its data is what it says
	case bus.AgentOutput:
		if d.Retry {
			parts = append(parts, "model call retried: the text streamed so far is dropped")
		}
	}
	if d, ok := p.duration(ev); ok {
		parts = append(parts, "after "+Duration(d))
	}
	return strings.Join(parts, ", ")
}

// duration remembers opening events and measures the closing ones.
func (p *EventPrinter) duration(ev bus.Event) (time.Duration, bool) {
	if p.opened == nil {
		p.opened = map[string]time.Time{}
	}
	var open, close string
	switch ev.Kind {
	case bus.EvAgentStarted, bus.EvAgentRespawned:
		open = "agent " + ev.Agent
	case bus.EvAgentExited, bus.EvAgentKilled, bus.EvAgentFailed, bus.EvAgentBudget:
		close = "agent " + ev.Agent
	case bus.EvPhaseOpened:
		open = "phase " + ev.PhaseID
	case bus.EvPhaseClosed:
		close = "phase " + ev.PhaseID
	case bus.EvTaskCreated:
		open = "task " + ev.TaskID
	case bus.EvTaskDone, bus.EvTaskKilled:
		close = "task " + ev.TaskID
	case bus.EvReset:
		clear(p.opened)
	}
	if open != "" {
		p.opened[open] = ev.Time
		return 0, false
	}
	t, ok := p.opened[close]
	if close == "" || !ok {
		return 0, false
	}
	delete(p.opened, close)
	return ev.Time.Sub(t), true
}

// Duration is d rounded for a person: 850ms, 4.2s, 3m10s, 2h5m.
func Duration(d time.Duration) string {
	switch {
	case d < time.Second:
		return d.Round(time.Millisecond).String()
	case d < time.Minute:
		return d.Round(100 * time.Millisecond).String()
	case d < time.Hour:
		return d.Round(time.Second).String()
	}
	return strings.TrimSuffix(d.Round(time.Minute).String(), "0s")
}

// ANSI colours for pm log on a terminal.
const (
	dim    = "2"
	red    = "31"
	green  = "32"
	yellow = "33"
	cyan   = "36"
)

func kindColor(k bus.Kind) string {
	switch k {
	case bus.EvAgentFailed, bus.EvAgentBudget, bus.EvAgentKilled, bus.EvTaskKilled:
		return red
	case bus.EvTaskDone, bus.EvCommit, bus.EvChildDone:
		return green
	case bus.EvRequestAsked, bus.EvAgentExited:
		return yellow
	}
	if strings.HasPrefix(string(k), "phase.") {
		return cyan
	}
	return ""
}

func (p *EventPrinter) paint(color, s string) string {
	if !p.Color || color == "" {
		return s
	}
	return "\x1b[" + color + "m" + s + "\x1b[0m"
}

// UseColor reports whether w is a terminal and the user has not asked for
// no colour (NO_COLOR, https://no-color.org).
func UseColor(w io.Writer, getenv func(string) string) bool {
	if getenv("NO_COLOR") != "" || getenv("TERM") == "dumb" {
		return false
	}
	f, ok := w.(*os.File)
	if !ok {
		return false
	}
	st, err := f.Stat()
	return err == nil && st.Mode()&os.ModeCharDevice != 0
}

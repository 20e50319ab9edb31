package tui

import (
	"context"
	"fmt"
	"strings"
	"time"

	"github.com/charmbracelet/bubbles/textinput"
	tea "github.com/charmbracelet/bubbletea"

	"github.com/plasmodium/pm/internal/bus"
	"github.com/plasmodium/pm/internal/ops"
	"github.com/plasmodium/pm/internal/render"
)

// tailLen bounds the bus tail pm top keeps.
const tailLen = 200

// Top is the model of `pm top`: the whole system, refreshed after each event
// that can change what it shows (ops.ChangesView), one snapshot at a time.
type Top struct {
	be   TopBackend
	feed *feed
	loc  *time.Location

	data    TopData
	tail    []string
	sel     int     // selected task
	confirm string  // the question of an action waiting for y/n
	act     tea.Cmd // the action confirm guards
	asking  bool    // the input answers the oldest request
	input   textinput.Model
	status  string
	width   int
	height  int
	// detail is Enter's view of the task detailID, scrolled to detailTop;
	// nil: the panels.
	detail    []string
	detailID  string
	detailTop int
	// reading: a snapshot is in flight; stale: an event that needs one came
	// meanwhile, so another follows it (never two at once, never one per
	// event of a burst).
	reading bool
	stale   bool
}

// NewTop builds the model; ctx ends the background work it starts.
func NewTop(ctx context.Context, be TopBackend, loc *time.Location) *Top {
	if loc == nil {
		loc = time.Local
	}
	in := textinput.New()
	in.Prompt = "answer: "
	return &Top{be: be, feed: newFeed(ctx), loc: loc, input: in, width: 80, height: 24}
}

// detailMsg carries Enter's view of one task.
type detailMsg struct {
	id    string
	lines []string
}

type snapshotMsg struct {
	d   TopData
	err error
}

// doneMsg ends an action: a status line, then a fresh snapshot.
type doneMsg struct{ text string }

// Init follows the bus and reads the first snapshot.
func (m *Top) Init() tea.Cmd {
	m.feed.follow(m.be.Bus, tailLen)
	return tea.Batch(m.feed.next, m.refresh())
}

// refresh reads a snapshot unless one is in flight, in which case it marks
// the screen stale so that one more follows when it lands.
func (m *Top) refresh() tea.Cmd {
	if m.be.Snapshot == nil {
		return nil
	}
	if m.reading {
		m.stale = true
		return nil
	}
	m.reading = true
	return m.snapshot
}

func (m *Top) snapshot() tea.Msg {
	d, err := m.be.Snapshot(m.feed.ctx)
	return snapshotMsg{d, err}
}

// Update applies one message.
func (m *Top) Update(msg tea.Msg) (tea.Model, tea.Cmd) {
	switch msg := msg.(type) {
	case feedMsg:
		_, cmd := m.Update(msg.msg)
		return m, tea.Batch(m.feed.next, cmd)
	case tea.WindowSizeMsg:
		m.width, m.height = msg.Width, msg.Height
	case tea.KeyMsg:
		return m, m.key(msg)
	case snapshotMsg:
		m.reading = false
		if msg.err != nil {
			m.status = "error: " + msg.err.Error()
		} else {
			m.data = msg.d
			m.sel = min(m.sel, max(len(m.data.Tasks)-1, 0))
		}
		if m.stale {
			m.stale = false
			return m, m.refresh()
		}
	case pastMsg:
		for _, ev := range msg.evs {
			m.addTail(ev)
		}
	case busMsg:
		m.addTail(msg.ev)
		if ops.ChangesView(msg.ev.Kind) {
			return m, m.refresh()
		}
	case doneMsg:
		m.status = msg.text
		return m, m.refresh()
	case detailMsg:
		m.detail, m.detailID, m.detailTop = msg.lines, msg.id, 0
	case errMsg:
		m.status = "error: " + msg.err.Error()
	}
	return m, nil
}

func (m *Top) addTail(ev bus.Event) {
	m.tail = append(m.tail, eventLine(ev, m.loc))
	if len(m.tail) > tailLen {
		m.tail = m.tail[len(m.tail)-tailLen:]
	}
}

// eventLine is one bus event in the tail.
func eventLine(ev bus.Event, loc *time.Location) string {
	return fmt.Sprintf("%s  %-16s %s %s", ev.Time.In(loc).Format("15:04:05"), ev.Kind, render.Line(ev.Actor), render.Line(ev.Text))
}

// key: q leaves, ↑↓ select a task, e/k/r end its phase, kill or restart it
// after a y, a answers the oldest request.
func (m *Top) key(k tea.KeyMsg) tea.Cmd {
	if k.Type == tea.KeyCtrlC {
		return tea.Quit
	}
	if m.asking {
		return m.answerKey(k)
	}
	if m.detail != nil {
		return m.detailKey(k)
	}
	if m.confirm != "" {
		act := m.act
		m.confirm, m.act = "", nil
		if k.String() == "y" {
			return act
		}
		m.status = "cancelled"
		return nil
	}
	t := m.selected()
	switch k.String() {
	case "q", "esc":
		return tea.Quit
	case "up":
		m.sel = max(m.sel-1, 0)
	case "down":
		m.sel = min(m.sel+1, max(len(m.data.Tasks)-1, 0))
	case "e", "k", "r":
		if t == "" {
			return nil
		}
		verb := map[string]string{"e": "end the active phase of", "k": "kill", "r": "restart"}[k.String()]
		m.confirm = fmt.Sprintf("%s %s? [y/N]", verb, t)
		m.act = m.action(k.String(), t, verb)
	case "a":
		if len(m.data.Requests) > 0 {
			m.asking = true
			m.input.Focus()
		}
	case "enter":
		if t != "" && m.be.Detail != nil {
			ctx, detail := m.feed.ctx, m.be.Detail
			return func() tea.Msg {
				lines, err := detail(ctx, t)
				if err != nil {
					return errMsg{err}
				}
				return detailMsg{t, lines}
			}
		}
	}
	return nil
}

// detailKey scrolls the task view; esc (or backspace, or enter) goes back
// to the panels, q leaves.
func (m *Top) detailKey(k tea.KeyMsg) tea.Cmd {
	switch k.String() {
	case "q":
		return tea.Quit
	case "esc", "backspace", "enter", "left":
		m.detail, m.detailID = nil, ""
	case "up":
		m.detailTop = max(m.detailTop-1, 0)
	case "down":
		m.detailTop++
	case "pgdown", " ":
		m.detailTop += max(m.height-3, 1)
	case "pgup":
		m.detailTop = max(m.detailTop-max(m.height-3, 1), 0)
	}
	return nil
}

func (m *Top) selected() string {
	if m.sel < len(m.data.Tasks) {
		return m.data.Tasks[m.sel].ID
	}
	return ""
}

// action is the ops call behind a key, run once confirmed.
func (m *Top) action(key, task, verb string) tea.Cmd {
	ctx, be := m.feed.ctx, m.be
	return func() tea.Msg {
		var err error
		switch key {
		case "e":
			err = be.EndPhase(ctx, task)
		case "k", "r":
			err = be.Kill(ctx, task, key == "r")
		}
		if err != nil {
			return errMsg{err}
		}
		return doneMsg{fmt.Sprintf("%s %s: done", verb, task)}
	}
}

// answerKey edits the answer; Enter sends it, Esc gives up.
func (m *Top) answerKey(k tea.KeyMsg) tea.Cmd {
	switch k.Type {
	case tea.KeyEsc:
		m.asking = false
		return nil
	case tea.KeyEnter:
		text := strings.TrimSpace(m.input.Value())
		if text == "" || len(m.data.Requests) == 0 {
			return nil
		}
		m.asking = false
		m.input.SetValue("")
		id, ctx, ans := m.data.Requests[0].ID, m.feed.ctx, m.be.Answer
		return func() tea.Msg {
			if err := ans(ctx, id, text); err != nil {
				return errMsg{err}
			}
			return doneMsg{"answered " + id}
		}
	}
	var cmd tea.Cmd
	m.input, cmd = m.input.Update(k)
	return cmd
}

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
	"github.com/plasmodium/pm/internal/request"
	"github.com/plasmodium/pm/internal/store"
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
	asking  bool    // the input answers answering
	input   textinput.Model
	// answering is the request the input answers: the selected one in
	// NEEDS YOU, else the oldest.
	answering *request.Request
	// needsFocus: ↑↓ and the keys act on NEEDS YOU's selected item (nsel)
	// instead of the selected task (tab switches); dismissed are failed
	// agents' items the person dismissed, by agent and run (dismissKey).
	needsFocus bool
	nsel       int
	dismissed  map[string]bool
	status     string
	width      int
	height     int
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
	return &Top{be: be, feed: newFeed(ctx), loc: loc, input: in, width: 80, height: 24, dismissed: map[string]bool{}}
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
			m.nsel = min(m.nsel, max(len(m.needs())-1, 0))
			m.needsFocus = m.needsFocus && len(m.needs()) > 0
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
// after a y, a answers the oldest request; tab moves to NEEDS YOU, whose
// selected item takes the keys (needsKey).
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
	if k.String() == "tab" {
		m.needsFocus = !m.needsFocus && len(m.needs()) > 0
		return nil
	}
	if m.needsFocus {
		return m.needsKey(k)
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
			m.ask(m.data.Requests[0])
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

// ask opens the input on request r.
func (m *Top) ask(r *request.Request) {
	m.asking, m.answering = true, r
	m.input.Focus()
}

// need is one item of NEEDS YOU: a pending request, or a failed (or dead)
// agent of a live task that no request names, as the dashboard's "Needs
// you" shows them.
type need struct {
	req   *request.Request
	agent *store.Agent
}

// needs are NEEDS YOU's items: the requests, then the failed agents the
// person has not dismissed.
func (m *Top) needs() []need {
	var out []need
	about := map[string]bool{}
	for _, r := range m.data.Requests {
		out = append(out, need{req: r})
		about[r.Agent] = true
	}
	live := map[string]bool{}
	for _, t := range m.data.Tasks {
		live[t.ID] = t.Live()
	}
	for _, a := range m.data.Agents {
		failed := a.Status == store.AgentFailed || a.Status == store.AgentDead
		if failed && (a.TaskID == "" || live[a.TaskID]) && !about[a.Name] && !m.dismissed[dismissKey(a)] {
			out = append(out, need{agent: a})
		}
	}
	return out
}

// dismissKey names an agent's run: a later failure of the same agent
// shows again.
func dismissKey(a *store.Agent) string {
	if a.EndedAt == nil {
		return a.Name
	}
	return a.Name + "@" + a.EndedAt.String()
}

// gaveUp reports a request pm filed about an owner it gave up on, whose
// task is still live: it offers try again, restart and kill.
func (m *Top) gaveUp(r *request.Request) bool {
	if r == nil || r.Agent == "" || r.TaskID == "" {
		return false
	}
	for _, t := range m.data.Tasks {
		if t.ID == r.TaskID {
			return t.Live()
		}
	}
	return false
}

// needsKey: ↑↓ select an item; a (or enter) answers a request, t answers
// "try again", k/r kill or restart the task of a request about a given-up
// owner (after a y), d dismisses a failed agent's item.
func (m *Top) needsKey(k tea.KeyMsg) tea.Cmd {
	items := m.needs()
	if len(items) == 0 {
		m.needsFocus = false
		return nil
	}
	m.nsel = min(m.nsel, len(items)-1)
	it := items[m.nsel]
	switch k.String() {
	case "q", "esc":
		return tea.Quit
	case "up":
		m.nsel = max(m.nsel-1, 0)
	case "down":
		m.nsel = min(m.nsel+1, len(items)-1)
	case "a", "enter":
		if it.req != nil {
			m.ask(it.req)
		}
	case "t":
		if m.gaveUp(it.req) {
			return m.answer(it.req.ID, "try again")
		}
	case "k", "r":
		if m.gaveUp(it.req) {
			verb := map[string]string{"k": "kill", "r": "restart"}[k.String()]
			m.confirm = fmt.Sprintf("%s %s? [y/N]", verb, it.req.TaskID)
			m.act = m.action(k.String(), it.req.TaskID, verb)
		}
	case "d":
		if it.agent != nil {
			m.dismissed[dismissKey(it.agent)] = true
			m.nsel = min(m.nsel, max(len(m.needs())-1, 0))
			m.needsFocus = len(m.needs()) > 0
		}
	}
	return nil
}

// answer sends text as the answer to request id.
func (m *Top) answer(id, text string) tea.Cmd {
	ctx, ans := m.feed.ctx, m.be.Answer
	return func() tea.Msg {
		if err := ans(ctx, id, text); err != nil {
			return errMsg{err}
		}
		return doneMsg{"answered " + id}
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
		if text == "" || m.answering == nil {
			return nil
		}
		m.asking = false
		m.input.SetValue("")
		return m.answer(m.answering.ID, text)
	}
	var cmd tea.Cmd
	m.input, cmd = m.input.Update(k)
	return cmd
}

package tui

import (
	"context"
	"slices"
	"time"

	"github.com/charmbracelet/bubbles/textinput"
	tea "github.com/charmbracelet/bubbletea"

	"github.com/plasmodium/pm/internal/bus"
	"github.com/plasmodium/pm/internal/ops"
	"github.com/plasmodium/pm/internal/request"
)

// maxLog bounds the message log kept in memory (the screen shows its tail).
const maxLog = 500

// turn is one message of the conversation on screen.
type turn struct {
	Who  string // "You" or the object's name
	Text string
}

// Talk is the model of `pm talk PO`.
type Talk struct {
	be   Backend
	feed *feed
	loc  *time.Location

	root    string            // the object pm talk was started with
	active  string            // the object the conversation is with
	pos     []string          // prompt objects in the bar: root, delegates, created ones
	prims   []string          // primitives in the bar
	fresh   map[string]bool   // objects made by create_capability while we watch
	working map[string]bool   // objects between a request and their reply
	convs   map[string][]turn // conversation per object
	busy    bool              // a message to the active object is in flight
	queued  []string          // typed while busy: sent, in order, as replies end

	log     []LogLine
	cascade *cascade
	pending []*request.Request

	input   textinput.Model
	history []string
	hpos    int // index in history while browsing with ↑/↓; len(history) when not

	status        string
	width, height int
}

// NewTalk builds the model; ctx ends the background work it starts.
func NewTalk(ctx context.Context, be Backend, po string, loc *time.Location) *Talk {
	in := textinput.New()
	in.Prompt = "You: "
	in.Placeholder = "type a message, Enter sends · Tab switches object · Esc q leaves"
	in.CharLimit = ops.MaxSend
	in.Focus()
	if loc == nil {
		loc = time.Local
	}
	return &Talk{be: be, feed: newFeed(ctx), loc: loc, root: po, active: po, pos: []string{po},
		fresh: map[string]bool{}, working: map[string]bool{}, convs: map[string][]turn{},
		cascade: newCascade(), input: in, width: 80, height: 24}
}

// inspectMsg is the root object's capabilities.
type inspectMsg struct{ res ops.InspectResult }

// requestsMsg is the pending requests.
type requestsMsg struct{ reqs []*request.Request }

// deltaMsg is a piece of a reply being streamed.
type deltaMsg struct {
	po, text string
}

// replyMsg ends a send.
type replyMsg struct {
	po, reply string
	err       error
}

// Init starts following the bus and loads the bar and the pending requests.
func (m *Talk) Init() tea.Cmd {
	m.feed.follow(m.be.Bus)
	return tea.Batch(textinput.Blink, m.feed.next, m.inspect, m.requests)
}

func (m *Talk) inspect() tea.Msg {
	if m.be.Inspect == nil {
		return nil
	}
	res, err := m.be.Inspect(m.feed.ctx, m.root)
	if err != nil {
		return errMsg{err}
	}
	return inspectMsg{res}
}

func (m *Talk) requests() tea.Msg {
	if m.be.Requests == nil {
		return nil
	}
	reqs, err := m.be.Requests(m.feed.ctx)
	if err != nil {
		return errMsg{err}
	}
	return requestsMsg{reqs}
}

// Update applies one message.
func (m *Talk) Update(msg tea.Msg) (tea.Model, tea.Cmd) {
	switch msg := msg.(type) {
	case feedMsg:
		_, cmd := m.Update(msg.msg)
		return m, tea.Batch(m.feed.next, cmd)
	case tea.WindowSizeMsg:
		m.width, m.height = msg.Width, msg.Height
		m.input.Width = max(msg.Width-8, 10)
	case tea.KeyMsg:
		return m, m.key(msg)
	case inspectMsg:
		pos := append([]string{m.root}, msg.res.Capabilities.Delegates...)
		for _, p := range m.pos { // objects created before the answer came
			if !slices.Contains(pos, p) {
				pos = append(pos, p)
			}
		}
		m.pos, m.prims = pos, msg.res.Capabilities.Primitives
	case requestsMsg:
		m.pending = msg.reqs
	case busMsg:
		return m, m.event(msg.ev)
	case deltaMsg:
		m.appendReply(msg.po, msg.text)
	case replyMsg:
		m.busy = false
		if msg.err != nil {
			m.status = "error: " + msg.err.Error()
		} else if t := m.convs[msg.po]; len(t) == 0 || t[len(t)-1].Who != msg.po {
			m.appendReply(msg.po, msg.reply) // not streamed: the whole reply at once
		}
		if len(m.queued) > 0 {
			next := m.queued[0]
			m.queued = m.queued[1:]
			m.send(next)
		}
	case errMsg:
		m.status = "error: " + msg.err.Error()
	}
	var cmd tea.Cmd
	m.input, cmd = m.input.Update(msg)
	return m, cmd
}

// event applies one bus event: a log line, object states, new objects,
// requests to refresh.
func (m *Talk) event(ev bus.Event) tea.Cmd {
	if l, ok := m.cascade.Line(ev); ok {
		m.log = append(m.log, l)
		if len(m.log) > maxLog {
			m.log = m.log[len(m.log)-maxLog:]
		}
	}
	switch ev.Kind {
	case bus.POKind("request"):
		m.working[ev.Agent] = true
	case bus.POKind("reply"):
		delete(m.working, ev.Actor)
	case bus.EvCapabilityCreated:
		if !slices.Contains(m.pos, ev.Text) && !slices.Contains(m.prims, ev.Text) {
			m.pos = append(m.pos, ev.Text)
			m.fresh[ev.Text] = true
		}
	case bus.EvRequestAsked, bus.EvRequestAnswered:
		return m.requests
	}
	return nil
}

// appendReply adds text to the object's reply being written, or starts one.
func (m *Talk) appendReply(po, text string) {
	t := m.convs[po]
	if len(t) == 0 || t[len(t)-1].Who != po {
		t = append(t, turn{Who: po})
	}
	t[len(t)-1].Text += text
	m.convs[po] = t
}

package tui

import (
	"context"
	"slices"
	"time"

	"github.com/charmbracelet/bubbles/textinput"
	tea "github.com/charmbracelet/bubbletea"

	"github.com/plasmodium/pm/internal/bus"
	"github.com/plasmodium/pm/internal/inbox"
	"github.com/plasmodium/pm/internal/ops"
	"github.com/plasmodium/pm/internal/request"
)

// maxLog bounds the message log kept in memory (the screen shows its tail).
const maxLog = 500

// historyLimit bounds the transcript messages read when a conversation opens.
const historyLimit = 200

// turn is one message of the conversation on screen.
type turn struct {
	Who   string // "You", the object's name, or "@caller" for another object's request
	Text  string
	Reply bool // the object's own text: rendered as markdown
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
	opened  map[string]bool   // objects whose stored conversation was asked for
	busy    bool              // a message to the active object is in flight
	queued  []string          // typed while busy: sent, in order, as replies end

	log     []LogLine
	cascade *cascade
	pending []*request.Request

	input   textinput.Model
	history []string
	hpos    int // index in history while browsing with ↑/↓; len(history) when not

	demo   *Demo // a scripted demo being played, or nil
	demoAt int   // its next line

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
		fresh: map[string]bool{}, working: map[string]bool{}, convs: map[string][]turn{}, opened: map[string]bool{},
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

// historyMsg is an object's stored conversation.
type historyMsg struct {
	po    string
	turns []turn
}

// Init starts following the bus and loads the bar, the pending requests and
// the conversation so far.
func (m *Talk) Init() tea.Cmd {
	m.feed.follow(m.be.Bus, maxLog)
	return tea.Batch(textinput.Blink, m.feed.next, m.inspect, m.requests, m.loadConversation(m.root))
}

// loadConversation loads po's stored conversation the first time it is shown.
func (m *Talk) loadConversation(po string) tea.Cmd {
	if m.be.History == nil || m.opened[po] {
		return nil
	}
	m.opened[po] = true
	ctx, load := m.feed.ctx, m.be.History
	return func() tea.Msg {
		stored, err := load(ctx, po)
		if err != nil {
			return errMsg{err}
		}
		return historyMsg{po, transcriptTurns(po, stored)}
	}
}

// transcriptTurns is what of a transcript the conversation shows: the
// requests (the human's as "You") and the object's text; tool calls and
// their results are in the message log, not here.
func transcriptTurns(po string, stored []ops.Turn) []turn {
	var out []turn
	for _, t := range stored {
		switch t.Role {
		case "user":
			from, body, ok := inbox.Parse(t.Content)
			switch {
			case !ok:
				continue
			case from == "human":
				out = append(out, turn{Who: "You", Text: body})
			default:
				out = append(out, turn{Who: "@" + from, Text: body})
			}
		case "assistant":
			if t.Content != "" {
				out = append(out, turn{Who: po, Text: t.Content, Reply: true})
			}
		}
	}
	return out
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
	case historyMsg: // before anything said since the screen opened
		m.convs[msg.po] = append(msg.turns, m.convs[msg.po]...)
	case pastMsg: // what happened before: the log only, no state
		for _, ev := range msg.evs {
			m.logEvent(ev)
		}
	case busMsg:
		return m, m.event(msg.ev)
	case deltaMsg:
		m.appendReply(msg.po, msg.text)
	case replyMsg:
		m.busy = false
		if msg.err != nil {
			m.status = "error: " + msg.err.Error()
		} else if t := m.convs[msg.po]; len(t) == 0 || !t[len(t)-1].Reply {
			m.appendReply(msg.po, msg.reply) // not streamed: the whole reply at once
		}
		if len(m.queued) > 0 {
			next := m.queued[0]
			m.queued = m.queued[1:]
			m.send(next)
		}
		if cmd := m.demoReplied(); cmd != nil {
			return m, cmd
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
	m.logEvent(ev)
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

// logEvent adds ev's line to the message log, if it is a message.
func (m *Talk) logEvent(ev bus.Event) {
	if l, ok := m.cascade.Line(ev); ok {
		m.log = append(m.log, l)
		if len(m.log) > maxLog {
			m.log = m.log[len(m.log)-maxLog:]
		}
	}
}

// appendReply adds text to the object's reply being written, or starts one.
func (m *Talk) appendReply(po, text string) {
	t := m.convs[po]
	if len(t) == 0 || !t[len(t)-1].Reply {
		t = append(t, turn{Who: po, Reply: true})
	}
	t[len(t)-1].Text += text
	m.convs[po] = t
}

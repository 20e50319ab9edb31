package tui

import (
	"slices"
	"strings"

	tea "github.com/charmbracelet/bubbletea"
)

// key handles a key press: leave (Ctrl-C, or Esc then q), switch object, browse history, answer a
// request, send a message; anything else edits the input line.
func (m *Talk) key(k tea.KeyMsg) tea.Cmd {
	if !m.input.Focused() && k.Type == tea.KeyRunes && k.String() != "q" {
		m.input.Focus() // any other key types again
	}
	empty := m.input.Value() == ""
	switch {
	case k.Type == tea.KeyCtrlC:
		return tea.Quit
	case k.Type == tea.KeyEsc: // q then leaves; typing a message that starts with q does not
		m.input.Blur()
		return nil
	case !m.input.Focused() && k.String() == "q":
		return tea.Quit
	case k.Type == tea.KeyTab:
		return m.switchActive(1)
	case k.Type == tea.KeyShiftTab:
		return m.switchActive(-1)
	case k.Type == tea.KeyUp:
		m.browse(-1)
		return nil
	case k.Type == tea.KeyDown:
		m.browse(1)
		return nil
	case empty && len(m.pending) > 0 && (k.String() == "y" || k.String() == "n"):
		return m.answer(map[string]string{"y": "yes", "n": "no"}[k.String()])
	case k.Type == tea.KeyEnter:
		return m.submit()
	}
	var cmd tea.Cmd
	m.input, cmd = m.input.Update(k)
	return cmd
}

// switchActive moves the conversation to the next (or previous) object of
// the bar.
func (m *Talk) switchActive(step int) tea.Cmd {
	if m.busy || len(m.pos) == 0 {
		return nil
	}
	i := slices.Index(m.pos, m.active)
	return m.switchTo(m.pos[(i+step+len(m.pos))%len(m.pos)])
}

// switchTo makes po the object the conversation is with, loading what was
// said with it before.
func (m *Talk) switchTo(po string) tea.Cmd {
	m.active = po
	delete(m.fresh, po)
	return m.loadConversation(po)
}

// browse walks the input history.
func (m *Talk) browse(step int) {
	m.hpos = max(0, min(len(m.history), m.hpos+step))
	if m.hpos == len(m.history) {
		m.input.SetValue("")
		return
	}
	m.input.SetValue(m.history[m.hpos])
	m.input.CursorEnd()
}

// submit sends the input line: to the oldest pending request as its answer
// when one is shown, else to the active object.
func (m *Talk) submit() tea.Cmd {
	text := strings.TrimSpace(m.input.Value())
	if text == "" {
		return nil
	}
	m.input.SetValue("")
	m.history = append(m.history, text)
	m.hpos = len(m.history)
	if len(m.pending) > 0 {
		return m.answer(text)
	}
	if m.be.Send == nil {
		m.status = "sending is not available here"
		return nil
	}
	if m.busy {
		// The reply may have streamed in full before its call returned: keep
		// the line and send it as soon as the reply ends, never drop it.
		m.queued = append(m.queued, text)
		m.status = "queued: sent when the reply ends"
		return nil
	}
	m.send(text)
	return nil
}

// send starts one message to the active object; its reply streams in.
func (m *Talk) send(text string) {
	m.busy, m.status = true, ""
	po := m.active
	m.convs[po] = append(m.convs[po], turn{Who: "You", Text: text})
	f, send := m.feed, m.be.Send
	go func() {
		reply, err := send(f.ctx, po, text, func(d string) { f.push(deltaMsg{po, d}) })
		f.push(replyMsg{po, reply, err})
	}()
}

// answer answers the oldest pending request through the backend.
func (m *Talk) answer(text string) tea.Cmd {
	r := m.pending[0]
	m.pending = m.pending[1:]
	ctx, ans := m.feed.ctx, m.be.Answer
	return func() tea.Msg {
		if ans == nil {
			return nil
		}
		if err := ans(ctx, r.ID, text); err != nil {
			return errMsg{err}
		}
		return m.requests()
	}
}

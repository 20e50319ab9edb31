package render

import (
	"fmt"
	"io"
	"strconv"
	"strings"

	"github.com/plasmodium/pm/internal/phase"
	"github.com/plasmodium/pm/internal/store"
)

// PrintMessage writes one chat message as a human reads it, its text made
// terminal-safe (Terminal).
func PrintMessage(w io.Writer, m store.Message) {
	if printPlain(w, &m) {
		return
	}
	who := "@" + Line(m.Author)
	if m.Author == "human" {
		who = "human"
	}
	if m.Role != "" {
		who += " (" + Line(m.Role) + ")"
	}
	body := strings.ReplaceAll(Terminal(m.Content), "\n", "\n    ")
	fmt.Fprintf(w, "[%s] %s: %s\n", m.Timestamp.Local().Format("15:04:05"), who, body)
}

// PhaseLine summarises a phase in one line.
func PhaseLine(p *store.Phase, count int) string {
	// As fmt's "%s %q %s %d/%d", without fmt: pm chat prints it last.
	s := p.ID + " " + strconv.Quote(p.Name) + " " + Line(p.Status) + " " + strconv.Itoa(count) + "/" + strconv.Itoa(p.MessageLimit)
	if p.CloseReason != "" {
		s += " (" + Line(p.CloseReason) + ")"
	}
	if len(p.Roles) > 0 {
		s += " roles " + Line(strings.Join(p.Roles, ","))
	}
	return s
}

// PrintHistory writes pm history: messages grouped under their phase.
func PrintHistory(w io.Writer, entries []phase.Entry) {
	var last string
	for _, e := range entries {
		if e.Phase.ID != last {
			fmt.Fprintf(w, "== %s %q (%s)\n", e.Phase.ID, e.Phase.Name, Line(e.Phase.Status))
			last = e.Phase.ID
		}
		PrintMessage(w, e.Message)
	}
}

// Cap bounds a text result, keeping its start (or its end with
// keepTail), and says what was cut.
func Cap(s string, max int, keepTail bool) string {
	if len(s) <= max {
		return s
	}
	if keepTail {
		cut := len(s) - max
		for cut < len(s) && !utf8Start(s[cut]) {
			cut++
		}
		return fmt.Sprintf("[cut: the first %d of %d bytes are not shown]\n", cut, len(s)) + s[cut:]
	}
	end := max
	for end > 0 && !utf8Start(s[end]) {
		end--
	}
	return s[:end] + fmt.Sprintf("\n[cut: showed %d of %d bytes]", end, len(s))
}

func utf8Start(b byte) bool { return b&0xC0 != 0x80 }

package cmdutil

import (
	"fmt"
	"io"
	"strings"

	"github.com/plasmodium/pm/internal/store"
)

// PrintMessage writes one chat message as a human reads it.
func PrintMessage(w io.Writer, m store.Message) {
	who := "@" + m.Author
	if m.Author == "human" {
		who = "human"
	}
	if m.Role != "" {
		who += " (" + m.Role + ")"
	}
	body := strings.ReplaceAll(m.Content, "\n", "\n    ")
	fmt.Fprintf(w, "[%s] %s: %s\n", m.Timestamp.Local().Format("15:04:05"), who, body)
}

// PhaseLine summarises a phase in one line.
func PhaseLine(p *store.Phase, count int) string {
	s := fmt.Sprintf("%s %q %s %d/%d", p.ID, p.Name, p.Status, count, p.MessageLimit)
	if p.CloseReason != "" {
		s += " (" + p.CloseReason + ")"
	}
	if len(p.Roles) > 0 {
		s += " roles " + strings.Join(p.Roles, ",")
	}
	return s
}

package tui

import (
	"regexp"
	"strings"
	"testing"

	"github.com/charmbracelet/lipgloss"
	"github.com/muesli/termenv"

	"github.com/plasmodium/pm/internal/render"
)

// sgr is the only escape sequence glamour may write: colours and weights.
var sgr = regexp.MustCompile(`\x1b\[[0-9;]*m`)

// In colour, what reaches the terminal from a hostile reply is glamour's
// styling only: the model's clear-screen, title and hyperlink sequences are
// shown as text.
func TestMarkdownKeepsAgentTextEscaped(t *testing.T) {
	lipgloss.SetColorProfile(termenv.TrueColor)
	defer lipgloss.SetColorProfile(termenv.Ascii)
	for _, reply := range []string{
		"# Hi\x1b[2J",
		"**bold** \x1b]0;title\x07 and `code\x1b[31m`",
		"[link](http://x/\x1b]8;;http://evil\x1b\\) \u202eevil",
		"```\n\x1b[2Jcode\n```",
	} {
		out := renderMarkdown(render.Terminal(reply), 40)
		if rest := sgr.ReplaceAllString(out, ""); strings.ContainsAny(rest, "\x1b\x07\u202e") {
			t.Errorf("%q: a control sequence reached the screen: %q", reply, rest)
		}
		if !strings.Contains(sgr.ReplaceAllString(out, ""), `\x1b`) {
			t.Errorf("%q: the escape is not shown as text: %q", reply, out)
		}
	}
}

package tui

import (
	"regexp"
	"strings"
	"testing"

	"github.com/charmbracelet/lipgloss"
	"github.com/muesli/termenv"

	"github.com/plasmodium/pm/internal/render"
)

// sgr is the only escape sequence the renderer may write: colours and weights.
var sgr = regexp.MustCompile(`\x1b\[[0-9;]*m`)

// In colour, what reaches the terminal from a hostile reply is the
// renderer's styling only: the model's clear-screen, title and hyperlink sequences are
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

func TestMarkdownRendering(t *testing.T) {
	cases := []struct {
		name, in string
		color    bool
		want     string // with colour: the text once the styling is stripped
	}{
		{"plain", "just text", false, "just text"},
		{"heading", "## Files", false, "## Files"},
		{"bullets", "- one\n* two\n  + nested", false, "• one\n• two\n  • nested"},
		{"numbered", "1. first\n2) second", false, "1. first\n2) second"},
		{"inline code loses its backticks", "run `go test`", false, "run go test"},
		{"bold kept as written without colour", "**README.md** - docs", false, "**README.md** - docs"},
		{"code block indented, markup untouched", "```go\nx := **y**\n```", false, "  x := **y**"},
		{"quote", "> careful", false, "│ careful"},
		{"link", "[pm](http://x/)", false, "pm (http://x/)"},
		{"bold styled in colour", "a **b** c", true, "a b c"},
		{"italic styled in colour", "an *emphasis*", true, "an emphasis"},
		{"wrapped to the width", "aaaa bbbb cccc dddd", false, "aaaa bbbb\ncccc dddd"},
	}
	defer lipgloss.SetColorProfile(termenv.Ascii)
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			p := termenv.Ascii
			if c.color {
				p = termenv.TrueColor
			}
			lipgloss.SetColorProfile(p)
			width := 40
			if strings.HasPrefix(c.name, "wrapped") {
				width = 10
			}
			out := renderMarkdown(c.in, width)
			if !c.color && strings.Contains(out, "\x1b") {
				t.Fatalf("escape sequence without colour: %q", out)
			}
			if c.color && !strings.Contains(out, "\x1b[") {
				t.Fatalf("no styling in colour: %q", out)
			}
			if got := sgr.ReplaceAllString(out, ""); got != c.want {
				t.Fatalf("got %q, want %q", got, c.want)
			}
		})
	}
}

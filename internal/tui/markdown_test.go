package tui

import (
	"regexp"
	"strings"
	"testing"

	"github.com/charmbracelet/lipgloss"
	"github.com/charmbracelet/x/ansi"
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

// Fenced code fits the pane like prose does: a line wider than the width is
// wrapped hard, its continuations marked "↪ ", tabs expanded to stops of
// four, wide runes counted as two columns; nothing of the code is lost.
func TestMarkdownCodeBlockFitsTheWidth(t *testing.T) {
	lipgloss.SetColorProfile(termenv.Ascii)
	long := strings.TrimSpace(strings.Repeat("x := compute(a, b) + 1; ", 8)) // trailing blanks are trimmed
	cjk := strings.Repeat("漢字", 30) + "a"
	cases := []struct {
		name, code string
		width      int
		lines      int    // rendered lines; 0: whatever the width needs
		expanded   string // the code line as shown, tabs expanded
	}{
		{"long line at 20", long, 20, 0, long},
		{"long line at 40", long, 40, 0, long},
		{"long line at 80", long, 80, 0, long},
		{"wide runes at 20", cjk, 20, 0, cjk},
		{"wide runes at 41", "a" + cjk, 41, 0, "a" + cjk},
		{"wide runes at 80", cjk, 80, 0, cjk},
		{"tabs at 20", "\tif x {\n\t\treturn strings.Repeat(s, n)\n\t}", 20, 0, "    if x {\n        return strings.Repeat(s, n)\n    }"},
		{"tab after text at 40", "ab\tc\t" + long, 40, 0, "ab  c   " + long},
		{"exactly the width", strings.Repeat("y", 18), 20, 1, strings.Repeat("y", 18)},
		{"one past the width", strings.Repeat("y", 19), 20, 2, strings.Repeat("y", 19)},
		{"wide runes exactly the width", strings.Repeat("漢", 19), 40, 1, strings.Repeat("漢", 19)},
		{"short line untouched", "fmt.Println(1)", 80, 1, "fmt.Println(1)"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			out := renderMarkdown(render.Terminal("```go\n"+c.code+"\n```"), c.width)
			lines := strings.Split(out, "\n")
			if c.lines != 0 && len(lines) != c.lines {
				t.Errorf("%d lines, want %d: %q", len(lines), c.lines, out)
			}
			var got []string
			for i, l := range lines {
				if w := ansi.StringWidth(l); w > c.width {
					t.Errorf("line %d is %d columns wide, over %d: %q", i, w, c.width, l)
				}
				if strings.Contains(l, "\t") {
					t.Errorf("line %d keeps a tab (its width is the terminal's guess): %q", i, l)
				}
				if rest, ok := strings.CutPrefix(l, "↪ "); ok && i > 0 {
					got[len(got)-1] += rest
				} else if rest, ok := strings.CutPrefix(l, "  "); ok {
					got = append(got, rest)
				} else {
					t.Fatalf("line %d has neither the block's indent nor the continuation mark: %q", i, l)
				}
			}
			if strings.Join(got, "\n") != c.expanded {
				t.Errorf("code changed:\ngot  %q\nwant %q", strings.Join(got, "\n"), c.expanded)
			}
		})
	}
}

// In colour, every piece of a wrapped code line is styled on its own, so
// the styling neither leaks into the next line nor counts as width.
func TestMarkdownCodeBlockWrappedInColour(t *testing.T) {
	lipgloss.SetColorProfile(termenv.TrueColor)
	defer lipgloss.SetColorProfile(termenv.Ascii)
	out := renderMarkdown(render.Terminal("```\n"+strings.Repeat("z\x1b", 30)+"\n```"), 20)
	lines := strings.Split(out, "\n")
	if len(lines) < 2 {
		t.Fatalf("not wrapped: %q", out)
	}
	for i, l := range lines {
		if ansi.StringWidth(l) > 20 || !strings.HasPrefix(l, "\x1b[") || !strings.HasSuffix(l, "m") {
			t.Errorf("line %d: %q", i, l)
		}
		if rest := sgr.ReplaceAllString(l, ""); strings.Contains(rest, "\x1b") {
			t.Errorf("line %d: a raw escape reached the screen: %q", i, rest)
		}
	}
}

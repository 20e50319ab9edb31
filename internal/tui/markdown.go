package tui

import (
	"regexp"
	"strings"

	"github.com/charmbracelet/lipgloss"
	"github.com/charmbracelet/x/ansi"
	"github.com/muesli/termenv"
)

// Markdown is rendered here, line by line, rather than by glamour: glamour
// links chroma's lexers and styles, goldmark and bluemonday, whose package
// initialisation (lexer tables built at start-up) made every pm command,
// pm say included, run about 8x the instructions it needs (issue 14; the
// figures are in docs/benchmarks.md). What a reply uses is covered:
// headings, emphasis, inline code, fenced code blocks, lists, quotes, links.

var (
	mdHeading = lipgloss.NewStyle().Bold(true).Foreground(lipgloss.Color("39"))
	mdBold    = lipgloss.NewStyle().Bold(true)
	mdItalic  = lipgloss.NewStyle().Italic(true)
	mdCode    = lipgloss.NewStyle().Foreground(lipgloss.Color("203"))
	mdBlock   = lipgloss.NewStyle().Foreground(lipgloss.Color("250"))
	mdQuote   = lipgloss.NewStyle().Foreground(lipgloss.Color("244"))
	mdLink    = lipgloss.NewStyle().Underline(true).Foreground(lipgloss.Color("75"))

	heading  = regexp.MustCompile(`^(#{1,6}) +(.*)$`)
	bullet   = regexp.MustCompile(`^(\s*)[-*+] +(.*)$`)
	numbered = regexp.MustCompile(`^(\s*)(\d{1,9}[.)]) +(.*)$`)
	inline   = regexp.MustCompile("\\*\\*([^*]+)\\*\\*|__([^_]+)__|`([^`]+)`|\\*([^*\\s][^*]*)\\*|\\[([^\\]]+)\\]\\(([^)\\s]+)\\)")
)

// renderMarkdown renders a reply as markdown wrapped to width, code blocks
// too (codeLines). The text must already be escaped (render.Terminal): the
// styling added here is the only escape sequence that reaches the screen,
// so a model cannot put one there through markdown. Without colours (NO_COLOR, an Ascii profile) it writes
// no escape sequence at all: lists get bullets, code loses its backticks,
// the rest is the text as written.
func renderMarkdown(escaped string, width int) string {
	color := lipgloss.ColorProfile() != termenv.Ascii
	width = max(width, 10)
	var out []string
	fenced := false
	for _, line := range strings.Split(strings.Trim(escaped, "\n"), "\n") {
		line = strings.TrimRight(line, " \t")
		if strings.HasPrefix(strings.TrimSpace(line), "```") {
			fenced = !fenced
			continue
		}
		if fenced {
			out = append(out, codeLines(color, line, width)...)
			continue
		}
		out = append(out, wrap(block(color, line), width))
	}
	return strings.Join(out, "\n")
}

// block renders one line outside a code block.
func block(color bool, line string) string {
	if m := heading.FindStringSubmatch(line); m != nil {
		return style(color, mdHeading, m[1]+" "+spans(color, m[2]))
	}
	if m := bullet.FindStringSubmatch(line); m != nil {
		return m[1] + "• " + spans(color, m[2])
	}
	if m := numbered.FindStringSubmatch(line); m != nil {
		return m[1] + m[2] + " " + spans(color, m[3])
	}
	if rest, ok := strings.CutPrefix(line, ">"); ok {
		return style(color, mdQuote, "│ "+strings.TrimPrefix(rest, " "))
	}
	return spans(color, line)
}

// spans renders the inline markup of a line.
func spans(color bool, text string) string {
	return inline.ReplaceAllStringFunc(text, func(m string) string {
		g := inline.FindStringSubmatch(m)
		switch {
		case g[1] != "" || g[2] != "":
			if !color {
				return m
			}
			return mdBold.Render(g[1] + g[2])
		case g[3] != "":
			return style(color, mdCode, g[3])
		case g[4] != "":
			if !color {
				return m
			}
			return mdItalic.Render(g[4])
		default:
			return style(color, mdLink, g[5]) + " (" + g[6] + ")"
		}
	})
}

func style(color bool, s lipgloss.Style, text string) string {
	if !color {
		return text
	}
	return s.Render(text)
}

// codeTab is the tab stop in code blocks: a terminal would expand a tab to
// its own stop, past the width the block was fitted to.
const codeTab = 4

// codeLines renders one line of a fenced code block within width. Code is
// wrapped hard at the width, never cut, so none of it is hidden: the first
// piece gets the block's two-space indent, each continuation "↪ " in its
// place, which tells a wrapped line from the next line of code. Tabs are
// expanded to stops of codeTab first, and wide runes (CJK) count as two
// columns, so the width measured is the width shown. Each piece is styled
// on its own: the styling never spans a line break.
func codeLines(color bool, line string, width int) []string {
	const indent, more = "  ", "↪ "
	pieces := strings.Split(ansi.Hardwrap(expandTabs(line, codeTab), width-ansi.StringWidth(indent), true), "\n")
	out := make([]string, len(pieces))
	for i, p := range pieces {
		prefix := more
		if i == 0 {
			prefix = indent
		}
		out[i] = style(color, mdBlock, prefix+p)
	}
	return out
}

// expandTabs replaces each tab with the spaces up to the next multiple of
// stop, counting columns as the terminal shows them.
func expandTabs(line string, stop int) string {
	if !strings.Contains(line, "\t") {
		return line
	}
	var b strings.Builder
	col := 0
	for i, part := range strings.Split(line, "\t") {
		if i > 0 {
			n := stop - col%stop
			b.WriteString(strings.Repeat(" ", n))
			col += n
		}
		b.WriteString(part)
		col += ansi.StringWidth(part)
	}
	return b.String()
}

// wrap breaks a line at spaces to width, keeping its styling.
func wrap(line string, width int) string {
	if ansi.StringWidth(line) <= width {
		return line
	}
	return ansi.Wrap(line, width, " ")
}

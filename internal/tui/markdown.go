package tui

import (
	"strings"
	"sync"

	"github.com/charmbracelet/glamour"
	"github.com/charmbracelet/glamour/ansi"
	"github.com/charmbracelet/glamour/styles"
	"github.com/charmbracelet/lipgloss"
	"github.com/muesli/termenv"
)

// markdownStyle is glamour's dark style without its document margin and
// blank first and last lines: a reply sits under its speaker's name.
// On a terminal without colours (TERM=dumb is line mode already, but
// NO_COLOR or a test's Ascii profile) it is the plain "notty" style, which
// writes no escape sequence at all.
func markdownStyle(p termenv.Profile) ansi.StyleConfig {
	st := styles.DarkStyleConfig
	if p == termenv.Ascii {
		st = styles.NoTTYStyleConfig
	}
	zero := uint(0)
	st.Document.Margin = &zero
	st.Document.BlockPrefix, st.Document.BlockSuffix = "", ""
	return st
}

// renderers caches one glamour renderer per width and colour profile
// (building one parses its style; a reply is re-rendered on every streamed
// piece).
var renderers sync.Map // rendererKey -> *glamour.TermRenderer

type rendererKey struct {
	width   int
	profile termenv.Profile
}

// renderMarkdown renders a reply as markdown wrapped to width. The text must
// already be escaped (render.Terminal): glamour then only adds its own
// styling, so a model cannot put a terminal sequence on the screen through
// markdown. Text glamour cannot render is shown as it is.
func renderMarkdown(escaped string, width int) string {
	key := rendererKey{max(width, 10), lipgloss.ColorProfile()}
	r, ok := renderers.Load(key)
	if !ok {
		nr, err := glamour.NewTermRenderer(glamour.WithStyles(markdownStyle(key.profile)), glamour.WithWordWrap(key.width),
			glamour.WithColorProfile(key.profile))
		if err != nil {
			return escaped
		}
		r, _ = renderers.LoadOrStore(key, nr)
	}
	out, err := r.(*glamour.TermRenderer).Render(escaped)
	if err != nil {
		return escaped
	}
	lines := strings.Split(strings.Trim(out, "\n"), "\n")
	for i, l := range lines {
		lines[i] = strings.TrimRight(l, " ") // glamour pads every line to the width
	}
	return strings.Join(lines, "\n")
}

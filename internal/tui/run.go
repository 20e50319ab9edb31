package tui

import (
	"context"
	"io"
	"os"

	tea "github.com/charmbracelet/bubbletea"
	"github.com/charmbracelet/x/term"
)

// UseTUI reports whether a screen should be drawn: both ends are
// terminals, the terminal is not dumb and --plain was not given. Otherwise
// the commands keep their line mode, which scripts and agents rely on.
func UseTUI(in io.Reader, out io.Writer, getenv func(string) string, plain bool) bool {
	if plain || getenv("TERM") == "dumb" {
		return false
	}
	return isTerminal(in) && isTerminal(out)
}

func isTerminal(v any) bool {
	f, ok := v.(*os.File)
	return ok && term.IsTerminal(f.Fd())
}

// RunTalk runs `pm talk PO` on the terminal until the human leaves.
func RunTalk(ctx context.Context, be Backend, po string, in io.Reader, out io.Writer) error {
	return runProgram(ctx, in, out, func(ctx context.Context) tea.Model { return NewTalk(ctx, be, po, nil) })
}

// runProgram runs a full-screen model; its background work ends with it.
func runProgram(ctx context.Context, in io.Reader, out io.Writer, model func(context.Context) tea.Model) error {
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	p := tea.NewProgram(model(ctx), tea.WithContext(ctx), tea.WithInput(in), tea.WithOutput(out), tea.WithAltScreen())
	_, err := p.Run()
	if err == tea.ErrProgramKilled && ctx.Err() != nil {
		return nil
	}
	return err
}

// RunTop runs `pm top` on the terminal until the human leaves.
func RunTop(ctx context.Context, be TopBackend, in io.Reader, out io.Writer) error {
	return runProgram(ctx, in, out, func(ctx context.Context) tea.Model { return NewTop(ctx, be, nil) })
}

package demo

import (
	"context"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/plasmodium/pm/internal/envlist"
	"github.com/plasmodium/pm/internal/msglog"

	"github.com/plasmodium/pm/internal/agent"
	"github.com/plasmodium/pm/internal/bus"
	"github.com/plasmodium/pm/internal/cmdutil"
	"github.com/plasmodium/pm/internal/errs"
	"github.com/plasmodium/pm/internal/ops"
	"github.com/plasmodium/pm/internal/render"
	"github.com/plasmodium/pm/internal/replay"
	"github.com/plasmodium/pm/internal/store"
	"github.com/plasmodium/pm/internal/tui"
)

// runTalk plays one of the seed's five demos in pm talk: in the terminal
// UI, the presenter sends each scripted line with Enter and answers the
// questions with a key; off a terminal (or --plain) the lines are sent and
// the questions answered as scripted, and the message log printed at the end.
func runTalk(f *cmdutil.Factory, o Options) error {
	if o.Which == "" {
		return listDemos(f.IO.Out)
	}
	script, err := replay.TalkDemo(o.Which)
	if err != nil {
		return err
	}
	env, label, stop, err := provider(f, o, script)
	if err != nil {
		return err
	}
	defer stop()
	dir, err := workspace(o.Dir)
	if err != nil {
		return err
	}
	if err := writeDemoProject(dir, script.Talk); err != nil {
		return err
	}
	s, l, err := project(f, dir, env)
	if err != nil {
		return err
	}
	sess := &ops.Session{Store: s, State: l.State, Actor: store.Human, Launcher: l, Getenv: func(k string) string { return envlist.Get(env, k) }}
	defer stopResidents(sess) // they must not outlive the replay server
	t := script.Talk
	fmt.Fprintf(f.IO.Out, "%sdemo %d: %s - %q; project %s\n", label, t.N, t.Title, t.Tagline, dir)
	if tui.UseTUI(f.IO.In, f.IO.Out, f.Getenv, o.Plain) {
		d := &tui.Demo{Banner: fmt.Sprintf("%sdemo %d · %s", label, t.N, t.Title)}
		for _, ln := range t.Lines {
			d.Lines = append(d.Lines, tui.DemoLine{Say: ln.Say, Then: ln.Then})
		}
		return tui.RunDemo(f.Context, tui.FromSession(sess), t.PO, d, f.IO.In, f.IO.Out)
	}
	ctx, cancel := context.WithTimeout(f.Context, o.Timeout)
	defer cancel()
	if err := playLines(ctx, sess, t, f.IO.Out, label); err != nil {
		return errs.Timeoutf("see pm log and pm logs NAME with PM_HOME="+s.Root, "demo did not finish: %v", err)
	}
	return nil
}

func listDemos(w io.Writer) error {
	all, err := replay.TalkDemos()
	if err != nil {
		return err
	}
	fmt.Fprintln(w, "The seed's five demos, played in pm talk (offline unless a model provider is set):")
	for _, s := range all {
		fmt.Fprintf(w, "  %d  %-18s %s: %q (talk with %s)\n", s.Talk.N, s.Talk.Name, s.Talk.Title, s.Talk.Tagline, s.Talk.PO)
	}
	fmt.Fprintln(w, "Play one: pm demo --talk 2   or   pm demo --talk binding")
	return nil
}

// writeDemoProject lays out the project the demos explore and the prompt
// objects the demo brings (prompts/NAME.md overrides a built-in one).
func writeDemoProject(dir string, t *replay.Talk) error {
	files, err := replay.DemoProject()
	if err != nil {
		return err
	}
	for name, body := range t.Prompts {
		files[filepath.Join("prompts", name+".md")] = []byte(body)
	}
	for p, data := range files {
		path := filepath.Join(dir, filepath.FromSlash(p))
		if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
			return err
		}
		if err := os.WriteFile(path, data, 0o644); err != nil {
			return err
		}
	}
	return nil
}

// stopResidents ends the prompt objects the demo started.
func stopResidents(sess *ops.Session) {
	res, err := ops.Agents(context.Background(), sess, ops.AgentsInput{})
	if err != nil {
		return
	}
	for _, a := range res.Agents {
		if a.TaskID == "" && agent.Running(a) {
			_, _ = ops.Stop(context.Background(), sess, ops.StopInput{Name: a.Name})
		}
	}
}

// playLines sends the demo's lines in order, answering each question an
// object asks with the line's next scripted answer, then prints the message
// log (the cascade, nested by the ids the events carry).
func playLines(ctx context.Context, sess *ops.Session, t *replay.Talk, out io.Writer, label string) error {
	_, start, err := sess.Store.Bus().Tail(0)
	if err != nil {
		return err
	}
	p := &player{sess: sess, out: out, label: label, replies: make(chan struct{}, len(t.Lines)), cascade: msglog.NewCascade()}
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	go p.watch(ctx, start)
	po := t.PO
	for _, ln := range t.Lines {
		p.mu.Lock()
		p.answers = ln.Answers
		fmt.Fprintf(out, "%sYou → %s: %s\n", label, po, ln.Say)
		p.mu.Unlock()
		res, err := ops.Send(ctx, sess, ops.SendInput{PO: po, Message: ln.Say})
		if err != nil {
			return err
		}
		// Every line of the reply is labelled, as everything a replay prints.
		p.say("%s%s: %s\n", label, po, strings.ReplaceAll(render.Terminal(res.Reply), "\n", "\n"+label))
		select { // the reply's event is on the bus: the log is whole so far
		case <-p.replies:
		case <-ctx.Done():
			return ctx.Err()
		}
		if ln.Then != "" {
			po = ln.Then
			p.say("%s(the conversation moves to %s)\n", label, po)
		}
	}
	p.say("%smessage log:\n", label)
	for _, l := range p.log() {
		p.say("%s%s\n", label, l)
	}
	return nil
}

// player answers the objects' questions and keeps the message log while
// the demo's lines are sent.
type player struct {
	sess    *ops.Session
	out     io.Writer
	label   string
	replies chan struct{} // one per reply to the human

	mu      sync.Mutex
	answers []string
	cascade *msglog.Cascade // the message log, kept as lines as events come
	lines   []string
}

func (p *player) say(format string, a ...any) {
	p.mu.Lock()
	defer p.mu.Unlock()
	fmt.Fprintf(p.out, format, a...)
}

func (p *player) watch(ctx context.Context, from bus.Cursor) {
	for d, err := range p.sess.Store.Bus().Subscribe(ctx, from) {
		if err != nil {
			return
		}
		ev := d.Event
		p.mu.Lock()
		if l, ok := p.cascade.Line(ev); ok {
			p.lines = append(p.lines, l.Format(time.Local))
		}
		p.mu.Unlock()
		switch {
		case ev.Kind == bus.EvRequestAsked:
			p.answer(ctx, ev)
		case ev.Kind == bus.POKind("reply") && ev.Agent == store.Human.Name:
			select {
			case p.replies <- struct{}{}:
			case <-ctx.Done():
				return
			}
		}
	}
}

// answer gives the next scripted answer ("no" when the script has none).
func (p *player) answer(ctx context.Context, ev bus.Event) {
	p.mu.Lock()
	text := "no"
	if len(p.answers) > 0 {
		text, p.answers = p.answers[0], p.answers[1:]
	}
	fmt.Fprintf(p.out, "%s%s asks: %s\n%sYou answer: %s\n", p.label, render.Line(ev.Actor), render.Line(ev.Text), p.label, text)
	p.mu.Unlock()
	d, _ := ev.Data.(bus.RequestAsked)
	id := d.Request
	if _, err := ops.Answer(ctx, p.sess, ops.AnswerInput{ID: id, Text: text}); err != nil {
		p.say("%sanswer %s: %v\n", p.label, id, err)
	}
}

// log is the message log as pm talk shows it.
func (p *player) log() []string {
	p.mu.Lock()
	defer p.mu.Unlock()
	return slices.Clone(p.lines)
}

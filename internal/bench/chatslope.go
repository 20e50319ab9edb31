package bench

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"os/exec"
	"time"

	"github.com/plasmodium/pm/internal/store"
)

// SlopeCase is one command timed on a small and a large room: its wall
// time per message is the slope between the two.
type SlopeCase struct {
	Name         string
	Small, Large Durations
	// LargeRSS is the peak RSS (KiB) of one more run on the large room,
	// measured by GNU time (0 without /usr/bin/time): the rusage of a
	// child this process starts counts this process's own memory (the
	// child starts as a vfork of it), not the command's alone.
	LargeRSS int64
}

// Slope is (median large - median small) / (large - small messages).
func (c SlopeCase) Slope(small, large int) time.Duration {
	return (c.Large.Median() - c.Small.Median()) / time.Duration(large-small)
}

// ChatSlope times `cat messages.jsonl`, `pm chat` (as the room's owner,
// text) and `pm chat --json` on rooms of small and large pm-written
// messages (~224-byte lines, WriteRoom), runs times each, all interleaved
// run by run, stdout a pipe drained by io.Copy(io.Discard) (a harness
// buffer growing with the output would weigh on cat most). The first case
// is cat.
func ChatSlope(ctx context.Context, bin, dir string, small, large, runs int) ([]SlopeCase, error) {
	p, err := NewProject(ctx, bin, dir, large)
	if err != nil {
		return nil, err
	}
	type room struct {
		owner, path string
	}
	var rooms [2]room
	for i, n := range []int{small, large} {
		t, err := p.Task(ctx, fmt.Sprintf("room of %d", n))
		if err != nil {
			return nil, err
		}
		ph, err := p.Phase(ctx, t, n)
		if err != nil {
			return nil, err
		}
		path := p.Store.MessagesPath(t.ID, ph.ID)
		if err := WriteRoom(path, ph.ID, t.Owner, n); err != nil {
			return nil, err
		}
		rooms[i] = room{t.Owner, path}
	}
	cases := []SlopeCase{{Name: "cat messages.jsonl"}, {Name: "pm chat (agent)"}, {Name: "pm chat --json (agent)"}}
	for range runs {
		for i, r := range rooms {
			for k := range cases {
				var cmd *exec.Cmd
				switch k {
				case 0:
					cmd = exec.CommandContext(ctx, "cat", r.path)
				case 1:
					cmd = p.Command(ctx, r.owner, "chat")
				case 2:
					cmd = p.Command(ctx, r.owner, "chat", "--json")
				}
				d, err := drained(ctx, cmd)
				if err != nil {
					return nil, fmt.Errorf("%s: %w", cases[k].Name, err)
				}
				if i == 0 {
					cases[k].Small = append(cases[k].Small, d)
				} else {
					cases[k].Large = append(cases[k].Large, d)
				}
			}
		}
	}
	for k, args := range [][]string{{"cat", rooms[1].path}, {bin, "chat"}, {bin, "chat", "--json"}} {
		cmd := p.Command(ctx, rooms[1].owner) // pm's environment, as the agent
		cmd.Path, cmd.Args = args[0], args
		if cases[k].LargeRSS, err = PeakRSS(ctx, cmd, dir); err != nil {
			return nil, fmt.Errorf("%s: %w", cases[k].Name, err)
		}
	}
	return cases, nil
}

// drained runs cmd with its stdout drained from a pipe and returns its
// wall time (start to reaped).
func drained(ctx context.Context, cmd *exec.Cmd) (time.Duration, error) {
	ctx, cancel := context.WithTimeout(ctx, CmdTimeout) // bounds the run: a kill ends the drain
	defer cancel()
	out, err := cmd.StdoutPipe()
	if err != nil {
		return 0, err
	}
	start := time.Now()
	if err := cmd.Start(); err != nil {
		return 0, err
	}
	done := make(chan struct{})
	go func() {
		select {
		case <-ctx.Done():
			_ = cmd.Process.Kill()
		case <-done:
		}
	}()
	_, cerr := io.Copy(io.Discard, out)
	err = cmd.Wait()
	d := time.Since(start)
	close(done)
	if err == nil {
		err = cerr
	}
	return d, err
}

// WriteRoom writes n messages to path as pm say writes them (json.Marshal
// of store.Message, ~224 bytes a line): the owner and a designer in turn,
// one in ten with a second line and quotes (escapes), a second apart.
func WriteRoom(path, phaseID, owner string, n int) error {
	f, err := os.Create(path)
	if err != nil {
		return err
	}
	w := bufio.NewWriter(f)
	at := time.Date(2026, 3, 4, 5, 6, 7, 123456789, time.UTC)
	for k := range n {
		m := store.Message{ID: fmt.Sprintf("msg-%06x", k&0xffffff), PhaseID: phaseID, Author: owner,
			Content:   fmt.Sprintf("message %d: lead with the benefit, not the feature; the second section says why", k),
			Timestamp: at.Add(time.Duration(k) * time.Second)}
		if k%2 == 1 {
			m.Author, m.Role = "designer_0001", "designer"
		}
		if k%10 == 9 {
			m.Content += "\nand \"quoted\" on a second line"
		}
		line, err := json.Marshal(m)
		if err != nil {
			f.Close()
			return err
		}
		w.Write(append(line, '\n'))
	}
	if err := w.Flush(); err != nil {
		f.Close()
		return err
	}
	return f.Close()
}

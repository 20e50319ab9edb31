package bench

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/plasmodium/pm/internal/jsonl"
	"github.com/plasmodium/pm/internal/store"
)

// AppendRecord is what an append worker writes: writer, sequence, padding
// the size of a typical event.
type AppendRecord struct {
	W   int    `json:"w"`
	I   int    `json:"i"`
	Pad string `json:"pad"`
}

// AppendWorker appends n records as writer w to path with jsonl.Append, the
// one append path of pm (events.jsonl, inboxes, transcripts). It is the body
// of `pmbench -append-worker`, so each writer is its own OS process.
func AppendWorker(path string, w, n int) error {
	pad := strings.Repeat("x", 160)
	for i := range n {
		if err := jsonl.Append(path, AppendRecord{W: w, I: i, Pad: pad}); err != nil {
			return err
		}
	}
	return nil
}

// LogCheck is the result of checking a log written by concurrent writers.
type LogCheck struct {
	Lines, Torn, Lost, Dup, OutOfOrder int
}

func (c LogCheck) OK() bool { return c.Torn == 0 && c.Lost == 0 && c.Dup == 0 && c.OutOfOrder == 0 }

func (c LogCheck) String() string {
	return fmt.Sprintf("%d lines, %d torn, %d lost, %d duplicated, %d out of order", c.Lines, c.Torn, c.Lost, c.Dup, c.OutOfOrder)
}

// CheckLog reads path line by line (not through jsonl, which would skip bad
// lines) and checks that every line is whole JSON and that each writer's
// records 0..per-1 appear exactly once, in order. key extracts (writer, seq)
// from a line.
func CheckLog(path string, writers, per int, key func(raw []byte) (w, i int, ok bool)) (LogCheck, error) {
	var c LogCheck
	f, err := os.Open(path)
	if err != nil {
		return c, err
	}
	defer f.Close()
	seen := make([][]bool, writers)
	last := make([]int, writers)
	for w := range seen {
		seen[w], last[w] = make([]bool, per), -1
	}
	sc := bufio.NewScanner(f)
	sc.Buffer(make([]byte, 64<<10), 2<<20)
	for sc.Scan() {
		c.Lines++
		raw := sc.Bytes()
		if !json.Valid(raw) {
			c.Torn++
			continue
		}
		w, i, ok := key(raw)
		if !ok {
			continue
		}
		if w < 0 || w >= writers || i < 0 || i >= per {
			c.Torn++
			continue
		}
		if seen[w][i] {
			c.Dup++
		}
		seen[w][i] = true
		if i < last[w] {
			c.OutOfOrder++
		}
		last[w] = i
	}
	for w := range seen {
		for _, ok := range seen[w] {
			if !ok {
				c.Lost++
			}
		}
	}
	return c, sc.Err()
}

// ConcurrentAppend starts `self -append-worker` writers processes that each
// append per records to one log at once, and returns the wall time from the
// first start to the last exit, and the check of the log.
func ConcurrentAppend(ctx context.Context, self, dir string, writers, per int) (time.Duration, LogCheck, error) {
	path := dir + "/append.jsonl"
	ctx, cancel := context.WithTimeout(ctx, CmdTimeout*2)
	defer cancel()
	cmds := make([]*exec.Cmd, writers)
	for w := range cmds {
		cmds[w] = exec.CommandContext(ctx, self, "-append-worker", path, "-worker-id", strconv.Itoa(w), "-worker-n", strconv.Itoa(per))
		cmds[w].Stderr = os.Stderr
	}
	start := time.Now()
	errs := make([]error, writers)
	var wg sync.WaitGroup
	for w, cmd := range cmds {
		if err := cmd.Start(); err != nil {
			errs[w] = err
			continue
		}
		wg.Go(func() { errs[w] = cmd.Wait() })
	}
	wg.Wait()
	d := time.Since(start)
	if err := errors.Join(errs...); err != nil {
		return d, LogCheck{}, fmt.Errorf("append workers: %v", err)
	}
	c, err := CheckLog(path, writers, per, func(raw []byte) (int, int, bool) {
		var r AppendRecord
		err := json.Unmarshal(raw, &r)
		return r.W, r.I, err == nil
	})
	return d, c, err
}

// SayResult is what ConcurrentSay found.
type SayResult struct {
	Wall       time.Duration
	Check      LogCheck
	Refused    int  // says that exited 5 before the limit was reached (must be 0)
	ExtraExit  int  // exit code of one more say after the limit (must be 5)
	PhaseClose bool // phase.json says closed by limit
}

// ConcurrentSay runs writers goroutines, each running per `pm say` processes
// one after another, on one phase whose limit is writers*per: the whole
// path of a message (process start, lock, count, append, event, close).
// Then one more say must be refused with exit 5.
func ConcurrentSay(ctx context.Context, bin, dir string, writers, per int) (*SayResult, error) {
	total := writers * per
	p, err := NewProject(ctx, bin, dir, total)
	if err != nil {
		return nil, err
	}
	t, err := p.Task(ctx, "concurrent say")
	if err != nil {
		return nil, err
	}
	ph, err := p.Phase(ctx, t, total)
	if err != nil {
		return nil, err
	}
	res := &SayResult{}
	errs := make([]error, writers)
	refused := make([]int, writers)
	var wg sync.WaitGroup
	start := time.Now()
	for w := range writers {
		wg.Go(func() {
			for i := range per {
				_, _, err := p.Run(ctx, t.Owner, "say", fmt.Sprintf("w%d i%d the hero section should lead with the benefit", w, i))
				var ee *exec.ExitError
				if errors.As(err, &ee) && ee.ExitCode() == 5 {
					refused[w]++
					continue
				}
				if err != nil {
					errs[w] = err
					return
				}
			}
		})
	}
	wg.Wait()
	res.Wall = time.Since(start)
	if err := errors.Join(errs...); err != nil {
		return nil, err
	}
	for _, r := range refused {
		res.Refused += r
	}
	_, _, err = p.Run(ctx, t.Owner, "say", "one too many")
	var ee *exec.ExitError
	if errors.As(err, &ee) {
		res.ExtraExit = ee.ExitCode()
	}
	if closed, err := p.Store.Phase(t.ID, ph.ID); err == nil {
		res.PhaseClose = closed.Status == store.PhaseClosed && closed.CloseReason == store.CloseLimit
	}
	res.Check, err = CheckLog(p.Store.MessagesPath(t.ID, ph.ID), writers, per, func(raw []byte) (int, int, bool) {
		var m store.Message
		if json.Unmarshal(raw, &m) != nil {
			return 0, 0, false
		}
		var w, i int
		if _, err := fmt.Sscanf(m.Content, "w%d i%d", &w, &i); err != nil {
			return -1, -1, true
		}
		return w, i, true
	})
	return res, err
}

package bench

import (
	"bufio"
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"time"
)

// Floor holds the floor programs (cmd/floorappend, cmd/floorwatch): the
// least a Go program does for the work of a short pm command, measured in the
// same run so that pm's figures read as ratios that do not move with the
// machine.
type Floor struct {
	Append string // floorappend PATH LINE: open O_APPEND, flock, one line, exit
	Watch  string // floorwatch PATH: fsnotify follower printing appended lines
}

// BuildFloor builds the floor programs of the module at modDir into outDir,
// static like pm's own build.
func BuildFloor(ctx context.Context, modDir, outDir string) (*Floor, error) {
	f := &Floor{Append: filepath.Join(outDir, "floorappend"), Watch: filepath.Join(outDir, "floorwatch")}
	for bin, pkg := range map[string]string{f.Append: "./internal/bench/cmd/floorappend", f.Watch: "./internal/bench/cmd/floorwatch"} {
		if err := goBuild(ctx, modDir, bin, pkg); err != nil {
			return nil, err
		}
	}
	return f, nil
}

// StartupCase is one short pm command timed against the floor, the two
// interleaved run by run so that both see the same load.
type StartupCase struct {
	Name      string
	PM, Floor Durations
}

// Ratio is the median of pm over the median of the floor.
func (c StartupCase) Ratio() float64 { return ratio(c.PM.Median(), c.Floor.Median()) }

// Startup times `pm say`, `pm chat` (agent) and `pm --help` against
// floorappend, runs times each, interleaved.
func Startup(ctx context.Context, bin string, fl *Floor, dir string, runs int) ([]StartupCase, error) {
	p, err := NewProject(ctx, bin, dir, 10*runs+20)
	if err != nil {
		return nil, err
	}
	t, err := p.Task(ctx, "start-up")
	if err != nil {
		return nil, err
	}
	if _, err := p.Phase(ctx, t, 10*runs+20); err != nil {
		return nil, err
	}
	for i := range 10 { // a room of 10 messages, as in scripts/bench-instructions.sh
		if _, _, err := p.Run(ctx, t.Owner, "say", fmt.Sprintf("message %d", i)); err != nil {
			return nil, err
		}
	}
	floorLog := filepath.Join(dir, "floor.jsonl")
	cases := []struct {
		name string
		args []string
	}{
		{"pm say", []string{"say", "one more"}},
		{"pm chat (agent)", []string{"chat"}},
		{"pm --help", []string{"--help"}},
	}
	var res []StartupCase
	for _, c := range cases {
		sc := StartupCase{Name: c.name}
		for range runs {
			_, d, err := p.Run(ctx, t.Owner, c.args...)
			if err != nil {
				return nil, err
			}
			sc.PM = append(sc.PM, d)
			fd, err := timeCmd(ctx, fl.Append, floorLog, `{"body":"one more"}`)
			if err != nil {
				return nil, err
			}
			sc.Floor = append(sc.Floor, fd)
		}
		res = append(res, sc)
	}
	return res, nil
}

// floorPair is the floor pair of delivery: floorwatch follows a file that
// floorappend processes append to, one at a time.
type floorPair struct {
	fl    *Floor
	path  string
	lines chan time.Time
	stop  func()
	n     int
}

// startFloorPair starts floorwatch on a fresh file under dir; stop ends it.
func startFloorPair(ctx context.Context, fl *Floor, dir string, n int) (*floorPair, error) {
	path := filepath.Join(dir, "floor-delivery.jsonl")
	if err := os.WriteFile(path, nil, 0o644); err != nil {
		return nil, err
	}
	wctx, cancel := context.WithTimeout(ctx, CmdTimeout+time.Duration(n)*100*time.Millisecond)
	w := exec.CommandContext(wctx, fl.Watch, path)
	stdout, err := w.StdoutPipe()
	if err == nil {
		err = w.Start()
	}
	if err != nil {
		cancel()
		return nil, err
	}
	fp := &floorPair{fl: fl, path: path, lines: make(chan time.Time, n+2), stop: func() { cancel(); _ = w.Wait() }}
	sc := bufio.NewScanner(stdout)
	if !sc.Scan() || sc.Text() != "ready" {
		fp.stop()
		return nil, fmt.Errorf("floorwatch did not start")
	}
	go func() {
		defer close(fp.lines)
		for sc.Scan() {
			fp.lines <- time.Now()
		}
	}()
	return fp, nil
}

// step runs one floorappend and waits for floorwatch's line: start -> line
// and exit -> line.
func (fp *floorPair) step(ctx context.Context) (fromStart, fromExit time.Duration, err error) {
	start := time.Now()
	if _, err := timeCmd(ctx, fp.fl.Append, fp.path, fmt.Sprintf(`{"i":%d}`, fp.n)); err != nil {
		return 0, 0, err
	}
	fp.n++
	exited := time.Now()
	select {
	case at, ok := <-fp.lines:
		if !ok {
			return 0, 0, fmt.Errorf("floorwatch ended")
		}
		return at.Sub(start), max(at.Sub(exited), 0), nil
	case <-time.After(10 * time.Second):
		return 0, 0, fmt.Errorf("floorwatch: line %d not delivered within 10s", fp.n)
	}
}

func timeCmd(ctx context.Context, name string, args ...string) (time.Duration, error) {
	ctx, cancel := context.WithTimeout(ctx, CmdTimeout)
	defer cancel()
	start := time.Now()
	out, err := exec.CommandContext(ctx, name, args...).CombinedOutput()
	d := time.Since(start)
	if err != nil {
		return d, fmt.Errorf("%s: %v\n%s", filepath.Base(name), err, strings.TrimSpace(string(out)))
	}
	return d, nil
}

func ratio(a, b time.Duration) float64 {
	if b <= 0 {
		return 0
	}
	return float64(a) / float64(b)
}

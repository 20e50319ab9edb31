package main

import (
	"bufio"
	"bytes"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"testing"
)

// The init budgets bound what package initialisation allocates before a
// command runs (GODEBUG=inittrace=1 reports it per package). pm (cmd/pm,
// the short commands: 15 KB now) and pm-full (every other command: 0.44 MB
// now) each pay theirs at every start: a library whose init builds big
// tables (glamour's chroma lexers took pm-full from 0.4 MB to 6.9 MB and
// every command to 8.5x its instructions) fails this test, not a benchmark
// someone must remember to run. Bytes allocated are a count, not a time:
// they do not move with the machine's load.
var initBudgets = map[string]int{"pm": 64 << 10, "pm-full": 1 << 20}

func TestStartupInitBudget(t *testing.T) {
	dir := t.TempDir()
	for name, budget := range initBudgets {
		t.Run(name, func(t *testing.T) { checkInitBudget(t, dir, name, budget) })
	}
}

func checkInitBudget(t *testing.T, dir, name string, initBudget int) {
	bin := filepath.Join(dir, name)
	build := exec.Command("go", "build", "-o", bin, "../"+name)
	build.Env = append(os.Environ(), "CGO_ENABLED=0")
	if out, err := build.CombinedOutput(); err != nil {
		t.Fatalf("go build: %v\n%s", err, out)
	}
	cmd := exec.Command(bin, "--help")
	cmd.Env = append(os.Environ(), "GODEBUG=inittrace=1")
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	if err := cmd.Run(); err != nil {
		t.Fatalf("%s --help: %v\n%s", name, err, stderr.String())
	}
	total, top := initBytes(stderr.String())
	if total == 0 {
		t.Fatalf("no init trace in:\n%s", stderr.String())
	}
	if total > initBudget {
		t.Fatalf("%s: package init allocates %d bytes at every start, over the budget of %d; the largest:\n%s", name, total, initBudget, top)
	}
}

// initBytes sums the "init PKG @... ms, ... ms clock, N bytes, M allocs"
// lines and names the five largest.
func initBytes(trace string) (int, string) {
	type pkg struct {
		name  string
		bytes int
	}
	var pkgs []pkg
	total := 0
	sc := bufio.NewScanner(strings.NewReader(trace))
	for sc.Scan() {
		f := strings.Fields(sc.Text())
		if len(f) < 9 || f[0] != "init" || f[8] != "bytes," {
			continue
		}
		n, err := strconv.Atoi(f[7])
		if err != nil {
			continue
		}
		total += n
		pkgs = append(pkgs, pkg{f[1], n})
	}
	sort.Slice(pkgs, func(i, j int) bool { return pkgs[i].bytes > pkgs[j].bytes })
	var b strings.Builder
	for _, p := range pkgs[:min(5, len(pkgs))] {
		fmt.Fprintf(&b, "  %s %d\n", p.name, p.bytes)
	}
	return total, b.String()
}

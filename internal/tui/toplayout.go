package tui

import (
	"fmt"

	"github.com/plasmodium/pm/internal/store"
)

// busMin is how many rows of the bus tail pm top keeps when the panels
// above want more than the screen has (on a short screen, none: the panels
// come first).
func busMin(height int) int {
	if height < 16 {
		return 0
	}
	return 3
}

// sectionRows splits rows among sections that want want[i] lines each,
// leaving the bus bus of them: everything when it fits; else one cap c for
// every section (the largest that fits), the rows left over going to the
// first sections still wanting more, in order (tasks first). No section gets more than it wants,
// and the result never sums past rows - bus (nor below 0).
func sectionRows(rows, bus int, want []int) []int {
	budget := max(rows-bus, 0)
	got := make([]int, len(want))
	total := 0
	for _, w := range want {
		total += w
	}
	if total <= budget {
		copy(got, want)
		return got
	}
	c := 0
	for {
		sum := 0
		for _, w := range want {
			sum += min(w, c+1)
		}
		if sum > budget {
			break
		}
		c++
	}
	left := budget
	for i, w := range want {
		got[i] = min(w, c)
		left -= got[i]
	}
	for i, w := range want {
		more := min(w-got[i], left)
		got[i] += more
		left -= more
	}
	return got
}

// window keeps n of lines, focus among them, the last kept row saying how
// many were left out.
func window(lines []string, n, focus int) []string {
	if len(lines) <= n {
		return lines
	}
	if n <= 0 {
		return nil
	}
	if n == 1 {
		return []string{dimStyle.Render(fmt.Sprintf("  … %d", len(lines)))}
	}
	start := min(max(focus-(n-1)/2, 0), len(lines)-(n-1))
	out := append([]string(nil), lines[start:start+n-1]...)
	return append(out, dimStyle.Render(fmt.Sprintf("  … %d more", len(lines)-(n-1))))
}

// liveFirst orders task trees (a top-level task with the subtasks that
// follow it, deeper) so that the trees of live tasks come first, each
// order kept: finished work does not push what runs off the screen.
func liveFirst(tasks []*store.Task) []*store.Task {
	var live, ended []*store.Task
	var tree []*store.Task
	flush := func() {
		if len(tree) > 0 && tree[0].Live() {
			live = append(live, tree...)
		} else {
			ended = append(ended, tree...)
		}
		tree = nil
	}
	for _, t := range tasks {
		if t.Depth == 0 {
			flush()
		}
		tree = append(tree, t)
	}
	flush()
	return append(live, ended...)
}

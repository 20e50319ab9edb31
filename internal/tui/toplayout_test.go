package tui

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	tea "github.com/charmbracelet/bubbletea"

	"github.com/plasmodium/pm/internal/store"
)

func TestSectionRows(t *testing.T) {
	tests := []struct {
		rows int
		want []int
		got  []int
	}{
		{20, []int{3, 2, 1, 1}, []int{3, 2, 1, 1}},
		{13, []int{17, 4, 6, 1}, []int{3, 3, 3, 1}},
		{10, []int{17, 0, 0, 0}, []int{7, 0, 0, 0}},
		{2, []int{5, 5, 5, 5}, []int{0, 0, 0, 0}},
		{8, []int{5, 5, 5, 5}, []int{2, 1, 1, 1}},
	}
	for _, tt := range tests {
		got := sectionRows(tt.rows, 3, tt.want)
		if !slices.Equal(got, tt.got) {
			t.Errorf("sectionRows(%d, %v) = %v, want %v", tt.rows, tt.want, got, tt.got)
		}
		sum := 0
		for i, g := range got {
			sum += g
			if g > tt.want[i] || g < 0 {
				t.Errorf("section %d got %d of %d", i, g, tt.want[i])
			}
		}
		if sum > max(tt.rows-3, 0) {
			t.Errorf("sectionRows(%d, %v) sums to %d", tt.rows, tt.want, sum)
		}
	}
}

func TestWindowKeepsTheFocus(t *testing.T) {
	lines := []string{"a", "b", "c", "d", "e", "f", "g"}
	for focus := range lines {
		got := window(lines, 4, focus)
		if len(got) != 4 || !slices.Contains(got, lines[focus]) || !strings.Contains(got[3], "4 more") {
			t.Errorf("window(…, 4, %d) = %q", focus, got)
		}
	}
	if got := window(lines, 10, 0); len(got) != len(lines) {
		t.Errorf("a window that fits cut: %q", got)
	}
}

func TestLiveFirst(t *testing.T) {
	tk := func(id string, st store.TaskStatus, depth int) *store.Task {
		return &store.Task{ID: id, Status: st, Depth: depth}
	}
	in := []*store.Task{
		tk("done1", store.TaskDone, 0), tk("done1.a", store.TaskDone, 1),
		tk("live1", store.TaskActive, 0), tk("live1.a", store.TaskDone, 1), tk("live1.b", store.TaskActive, 1),
		tk("killed", store.TaskKilled, 0),
		tk("blocked", store.TaskBlocked, 0),
	}
	var ids []string
	for _, t := range liveFirst(in) {
		ids = append(ids, t.ID)
	}
	want := []string{"live1", "live1.a", "live1.b", "blocked", "done1", "done1.a", "killed"}
	if !slices.Equal(ids, want) {
		t.Errorf("liveFirst = %v, want %v", ids, want)
	}
}

// At 80x24 with many tasks, a long bus and a confirmation open, the title
// and every panel's rule stay on the screen, live tasks first, and the
// view is exactly the terminal's height (issue 25: the header scrolled off).
func TestTopFitsTheTerminal(t *testing.T) {
	var did []string
	be := fakeTop(&did)
	base := be.Snapshot
	be.Snapshot = func(ctx context.Context) (TopData, error) {
		d, err := base(ctx)
		for i := range 15 {
			d.Tasks = append(d.Tasks, &store.Task{ID: fmt.Sprintf("tk-1000%02d", i), Status: store.TaskDone, Description: "finished"})
		}
		d.Tasks = liveFirst(append([]*store.Task{{ID: "tk-0000ff", Status: store.TaskDone, Description: "old"}}, d.Tasks...))
		return d, err
	}
	for _, size := range [][2]int{{80, 24}, {120, 40}, {80, 12}} {
		m := NewTop(context.Background(), be, time.UTC)
		m.Update(tea.WindowSizeMsg{Width: size[0], Height: size[1]})
		m.Update(m.snapshot())
		for i := range 50 {
			m.tail = append(m.tail, fmt.Sprintf("event %d", i))
		}
		m.key(tea.KeyMsg{Type: tea.KeyRunes, Runes: []rune("k")}) // a confirmation in the footer
		view := m.View()
		lines := strings.Split(view, "\n")
		if len(lines) != size[1] {
			t.Errorf("%dx%d: %d lines", size[0], size[1], len(lines))
		}
		if !strings.HasPrefix(lines[0], "pm top") {
			t.Errorf("%dx%d: first line %q", size[0], size[1], lines[0])
		}
		for _, rule := range []string{"TASKS", "ROOMS", "AGENTS", "NEEDS YOU", "BUS"} {
			if !strings.Contains(view, rule) {
				t.Errorf("%dx%d: no %s panel:\n%s", size[0], size[1], rule, view)
			}
		}
		if !strings.Contains(lines[2], "tk-000001") {
			t.Errorf("%dx%d: the live task is not first: %q", size[0], size[1], lines[2])
		}
		if size[1] >= 24 && !strings.Contains(view, "design  3/10") {
			t.Errorf("%dx%d: the active room is not shown:\n%s", size[0], size[1], view)
		}
	}
}

// Enter opens the selected task's view; esc goes back to the panels.
func TestTopEnterOpensATask(t *testing.T) {
	var did []string
	be := fakeTop(&did)
	be.Detail = func(_ context.Context, id string) ([]string, error) {
		return []string{"task " + id, "phases: design 3/10"}, nil
	}
	m := NewTop(context.Background(), be, time.UTC)
	m.Update(m.snapshot())
	m.key(tea.KeyMsg{Type: tea.KeyDown})
	cmd := m.key(tea.KeyMsg{Type: tea.KeyEnter})
	if cmd == nil {
		t.Fatal("enter did nothing")
	}
	m.Update(cmd())
	if v := m.View(); !strings.Contains(v, "pm top › tk-000002") || !strings.Contains(v, "phases: design 3/10") {
		t.Fatalf("no task view:\n%s", v)
	}
	m.key(tea.KeyMsg{Type: tea.KeyEsc})
	if v := m.View(); !strings.Contains(v, "TASKS") {
		t.Fatalf("esc did not go back:\n%s", v)
	}
}

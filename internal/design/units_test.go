package design

import (
	"strings"
	"testing"
)

func TestSplit(t *testing.T) {
	goSrc := "// Package p.\npackage p\n\nimport \"fmt\"\n\n// A says hi.\nfunc A() { fmt.Println(\"hi\") }\n\ntype T struct{}\n\nfunc (t *T) M() {}\n\nvar x, y = 1, 2\n"
	tests := []struct {
		name, file, content string
		want                []string // unit names
		starts              []int
	}{
		{"go declarations", "p.go", goSrc, []string{"import", "func A", "type T", "func (*T) M", "var x, y"}, []int{1, 6, 9, 11, 13}},
		{"go that does not parse falls back to blocks", "p.go", "package p\nfunc (\n\nx\n", []string{"block at line 1", "block at line 4"}, []int{1, 4}},
		{"blocks", "a.py", "\nimport os\n\n\ndef f():\n    pass\n", []string{"block at line 2", "block at line 5"}, []int{1, 5}},
		{"empty", "a.txt", "", []string{"whole file"}, []int{1}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			units := Split(tt.file, tt.content)
			var names []string
			var starts []int
			var joined strings.Builder
			for i, u := range units {
				names = append(names, u.Name)
				starts = append(starts, u.StartLine)
				joined.WriteString(u.OriginalContent)
				if u.Number != i+1 || u.CurrentContent != u.OriginalContent {
					t.Errorf("unit %d: number %d, current differs", i, u.Number)
				}
			}
			if strings.Join(names, "|") != strings.Join(tt.want, "|") {
				t.Errorf("names %q, want %q", names, tt.want)
			}
			if len(starts) != len(tt.starts) {
				t.Fatalf("starts %v, want %v", starts, tt.starts)
			}
			for i := range starts {
				if starts[i] != tt.starts[i] {
					t.Errorf("starts %v, want %v", starts, tt.starts)
				}
			}
			if joined.String() != tt.content {
				t.Errorf("units do not join into the file: %q", joined.String())
			}
		})
	}
}

func TestTransitions(t *testing.T) {
	all := []Status{StatusInitializing, StatusProcessing, StatusConverged, StatusMaxIterations, StatusError, StatusComplete}
	allowed := map[[2]Status]bool{
		{StatusInitializing, StatusProcessing}: true, {StatusInitializing, StatusError}: true,
		{StatusProcessing, StatusProcessing}: true, {StatusProcessing, StatusConverged}: true,
		{StatusProcessing, StatusMaxIterations}: true, {StatusProcessing, StatusError}: true,
		{StatusConverged, StatusComplete}: true, {StatusMaxIterations, StatusComplete}: true, {StatusError, StatusComplete}: true,
	}
	for _, from := range all {
		for _, to := range all {
			if got := CanMove(from, to); got != allowed[[2]Status{from, to}] {
				t.Errorf("CanMove(%s, %s) = %v", from, to, got)
			}
		}
	}
	st := &State{Status: StatusComplete}
	if err := st.move(StatusProcessing); err == nil {
		t.Error("a complete design moved back to processing")
	}
}

func TestConverged(t *testing.T) {
	p := func(issues, mods int) PassResult {
		return PassResult{IssueCount: issues, Modifications: make([]Modification, mods)}
	}
	tests := []struct {
		name    string
		history []PassResult
		want    bool
	}{
		{"one pass is too few", []PassResult{p(0, 0)}, false},
		{"two stable passes", []PassResult{p(1, 0), p(1, 0)}, true},
		{"issue count changed", []PassResult{p(2, 0), p(1, 0)}, false},
		{"a modification in the window", []PassResult{p(0, 1), p(0, 0)}, false},
		{"stable after a change", []PassResult{p(3, 1), p(0, 0), p(0, 0)}, true},
		{"last pass modified", []PassResult{p(0, 0), p(0, 0), p(0, 1)}, false},
	}
	for _, tt := range tests {
		if got := DefaultCriteria.Converged(tt.history); got != tt.want {
			t.Errorf("%s: %v, want %v", tt.name, got, tt.want)
		}
	}
	strict := Criteria{MinPasses: 3, IssueStability: 3, ContentStability: 2}
	if strict.Converged([]PassResult{p(0, 0), p(0, 0)}) || !strict.Converged([]PassResult{p(0, 0), p(0, 0), p(0, 0)}) {
		t.Error("custom criteria not applied")
	}
}

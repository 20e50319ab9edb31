package envlist

import (
	"slices"
	"testing"
)

func TestSetAndGet(t *testing.T) {
	for _, tt := range []struct {
		name      string
		env       []string
		set, want []string
		get       string
	}{
		{"absent", []string{"A=1"}, []string{"B", "2"}, []string{"A=1", "B=2"}, "2"},
		{"replaced", []string{"B=0", "A=1"}, []string{"B", "2"}, []string{"A=1", "B=2"}, "2"},
		{"duplicates all dropped", []string{"B=0", "B=9", "BB=3"}, []string{"B", ""}, []string{"BB=3", "B="}, ""},
		{"a prefix is not the name", []string{"TMPDIR_X=1"}, []string{"TMPDIR", "/t"}, []string{"TMPDIR_X=1", "TMPDIR=/t"}, "/t"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			in := slices.Clone(tt.env)
			got := Set(tt.env, tt.set[0], tt.set[1])
			if !slices.Equal(got, tt.want) || !slices.Equal(tt.env, in) {
				t.Errorf("Set = %q (input now %q), want %q", got, tt.env, tt.want)
			}
			if g := Get(got, tt.set[0]); g != tt.get {
				t.Errorf("Get = %q, want %q", g, tt.get)
			}
		})
	}
	if Get([]string{"A=1", "A=2"}, "A") != "2" || Get(nil, "A") != "" {
		t.Error("Get: the last of duplicates, or empty")
	}
}

package gitx

import "testing"

func TestMergeLines(t *testing.T) {
	base := "a\nb\nc\nd\ne\nf\n"
	for _, tc := range []struct {
		name, ours, theirs, want string
		ok                       bool
	}{
		{"apart", "A\nb\nc\nd\ne\nf\n", "a\nb\nc\nd\ne\nF\n", "A\nb\nc\nd\ne\nF\n", true},
		{"same change", "a\nB\nc\nd\ne\nf\n", "a\nB\nc\nd\ne\nf\n", "a\nB\nc\nd\ne\nf\n", true},
		{"same line", "a\nX\nc\nd\ne\nf\n", "a\nY\nc\nd\ne\nf\n", "", false},
		{"adjacent lines", "a\nX\nc\nd\ne\nf\n", "a\nb\nY\nd\ne\nf\n", "", false},
		{"insert and edit apart", "top\na\nb\nc\nd\ne\nf\n", "a\nb\nc\nd\ne\nf\nend\n", "top\na\nb\nc\nd\ne\nf\nend\n", true},
		{"delete and edit apart", "b\nc\nd\ne\nf\n", "a\nb\nc\nd\nE\nf\n", "b\nc\nd\nE\nf\n", true},
		{"delete what the other edits", "a\nc\nd\ne\nf\n", "a\nB\nc\nd\ne\nf\n", "", false},
		{"no final newline", "a\nb\nc\nd\ne\nf", "A\nb\nc\nd\ne\nf\n", "A\nb\nc\nd\ne\nf", true},
		{"binary", "a\x00\n", "a\n", "", false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got, ok := mergeLines([]byte(base), []byte(tc.ours), []byte(tc.theirs))
			if ok != tc.ok || ok && string(got) != tc.want {
				t.Fatalf("got %q, %v; want %q, %v", got, ok, tc.want, tc.ok)
			}
			// The merge is symmetric.
			got2, ok2 := mergeLines([]byte(base), []byte(tc.theirs), []byte(tc.ours))
			if ok2 != ok || string(got2) != string(got) {
				t.Fatalf("swapped: got %q, %v", got2, ok2)
			}
		})
	}
}

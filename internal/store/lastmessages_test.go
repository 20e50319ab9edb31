package store_test

import (
	"os"
	"path/filepath"
	"testing"
)

// LastMessages ends as Messages does and counts as MessageCount does,
// whatever else the log holds.
func TestLastMessages(t *testing.T) {
	msg := func(id string) string { return `{"id":"` + id + `","author":"a","content":"x"}` + "\n" }
	for _, tc := range []struct {
		name  string
		log   string // "" with missing: no file
		n     int
		want  []string
		count int
	}{
		{"no file", "", 2, nil, 0},
		{"fewer than n", msg("m1"), 3, []string{"m1"}, 1},
		{"last n", msg("m1") + msg("m2") + msg("m3"), 2, []string{"m2", "m3"}, 3},
		{"strays and torn lines skipped", msg("m1") + msg("m2") + "[1,2]\n{}\n{\"torn\n\"hello\"\n", 2, []string{"m1", "m2"}, 2},
		{"unterminated last line left", msg("m1") + msg("m2") + `{"id":"m3"`, 1, []string{"m2"}, 2},
		{"zero", msg("m1"), 0, nil, 1},
	} {
		t.Run(tc.name, func(t *testing.T) {
			s, _ := newStore(t)
			path := s.MessagesPath("tk-000001", "ph-000001")
			if tc.log != "" {
				if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
					t.Fatal(err)
				}
				if err := os.WriteFile(path, []byte(tc.log), 0o644); err != nil {
					t.Fatal(err)
				}
			}
			ms, count, err := s.LastMessages("tk-000001", "ph-000001", tc.n)
			if err != nil {
				t.Fatal(err)
			}
			var got []string
			for _, m := range ms {
				got = append(got, m.ID)
			}
			if count != tc.count || len(got) != len(tc.want) {
				t.Fatalf("LastMessages = %v, %d; want %v, %d", got, count, tc.want, tc.count)
			}
			for i := range got {
				if got[i] != tc.want[i] {
					t.Fatalf("LastMessages = %v; want %v", got, tc.want)
				}
			}
			if n, _ := s.MessageCount("tk-000001", "ph-000001"); n != count {
				t.Errorf("MessageCount = %d, LastMessages counted %d", n, count)
			}
		})
	}
}

package loopguard

import "testing"

func TestGuard(t *testing.T) {
	type call struct{ name, args, result string }
	same := call{"read_file", `{"path": "a"}`, "x"}
	for _, tc := range []struct {
		name  string
		limit int
		calls []call
		next  call
		want  bool
		times int
	}{
		{"four the same, fifth is a hit", 5, []call{same, same, same, same}, same, true, 4},
		{"three the same is not yet", 5, []call{same, same, same}, same, false, 0},
		{"spaces in JSON do not count", 3, []call{same, {"read_file", `{"path":"a"}`, "x"}}, same, true, 2},
		{"a changed result starts again", 3, []call{same, {"read_file", `{"path":"a"}`, "y"}}, same, false, 0},
		{"other arguments are another call", 3, []call{same, same}, call{"read_file", `{"path":"b"}`, ""}, false, 0},
		{"another call between breaks the row", 3, []call{same, {"list_files", `{}`, "x"}, same}, same, false, 0},
		{"limit 0 is off", 0, []call{same, same, same, same, same, same}, same, false, 0},
		{"limit 1 is off", 1, []call{same}, same, false, 0},
	} {
		t.Run(tc.name, func(t *testing.T) {
			g := &Guard{Limit: tc.limit}
			for _, c := range tc.calls {
				g.Record(c.name, c.args, c.result)
			}
			h, hit := g.Check(tc.next.name, tc.next.args)
			if hit != tc.want || h.Times != tc.times {
				t.Fatalf("Check = %+v, %v; want hit %v after %d", h, hit, tc.want, tc.times)
			}
			if hit {
				g.Reset()
				if _, again := g.Check(tc.next.name, tc.next.args); again {
					t.Fatal("a hit after Reset")
				}
			}
		})
	}
}

func TestCascade(t *testing.T) {
	for _, tc := range []struct {
		name  string
		chain []string
		to    string
		path  string
		hit   bool
	}{
		{"back to the caller's caller", []string{"b", "a"}, "a", "@a → @b → @a", true},
		{"back three deep", []string{"c", "b", "a"}, "a", "@a → @b → @c → @a", true},
		{"back to the nearest", []string{"c", "b", "a"}, "b", "@b → @c → @b", true},
		{"a new object", []string{"b", "a"}, "c", "", false},
		{"no chain", nil, "a", "", false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			path, hit := Cascade(tc.chain, tc.to)
			if path != tc.path || hit != tc.hit {
				t.Fatalf("Cascade(%q, %q) = %q, %v; want %q, %v", tc.chain, tc.to, path, hit, tc.path, tc.hit)
			}
		})
	}
}

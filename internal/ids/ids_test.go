package ids

import (
	"bytes"
	"fmt"
	"regexp"
	"strings"
	"testing"
)

func TestParse(t *testing.T) {
	tests := []struct {
		kind, id string
		ok       bool
	}{
		{Task, "tk-a1b2c3", true},
		{Task, "tk-000000", true},
		{Task, "tk-ffffff", true},
		{Phase, "ph-0f0f0f", true},
		{Message, "msg-123abc", true},
		{Request, "rq-abcdef", true},
		{Task, "ph-a1b2c3", false},   // wrong kind
		{Phase, "tk-a1b2c3", false},  // wrong kind
		{Task, "tk-A1B2C3", false},   // upper case
		{Task, "tk-a1b2c", false},    // too short
		{Task, "tk-a1b2c3d", false},  // too long
		{Task, "tk-a1b2cg", false},   // not hex
		{Task, "tk_a1b2c3", false},   // wrong separator
		{Task, "tk-", false},         // empty
		{Task, "", false},            // empty
		{Task, "tk-../../x", false},  // path
		{Task, "tk-a1b2c/", false},   // path separator
		{Task, " tk-a1b2c3", false},  // space
		{Task, "tk-a1b2c3\n", false}, // trailing newline
		{Task, "tk-a1b2c\u00e9", false},
		{Task, "tk-１２３４５６", false}, // full-width digits
		{Message, "ms-123abc", false},
	}
	for _, tt := range tests {
		err := Parse(tt.kind, tt.id)
		if (err == nil) != tt.ok {
			t.Errorf("Parse(%q, %q) = %v, want ok=%v", tt.kind, tt.id, err, tt.ok)
		}
		if err != nil && !strings.Contains(err.Error(), tt.kind+"-xxxxxx") {
			t.Errorf("Parse(%q, %q) error %q does not show the expected form", tt.kind, tt.id, err)
		}
	}
}

func TestValidAgentName(t *testing.T) {
	tests := []struct {
		name string
		ok   bool
	}{
		{"cedar_a1b2", true},
		{"owner", true},
		{"a", true},
		{"0abc", true},
		{"qa-2", true},
		{strings.Repeat("a", 64), true},
		{strings.Repeat("a", 65), false},
		{"", false},
		{"_a", false},
		{"-a", false},
		{"..", false},
		{"a..b", false},
		{".", false},
		{"a/b", false},
		{"/a", false},
		{`a\b`, false},
		{"Cedar", false},
		{"a b", false},
		{"a\x00", false},
		{"human\n", false},
		{"é", false},
	}
	for _, tt := range tests {
		if got := ValidAgentName(tt.name); got != tt.ok {
			t.Errorf("ValidAgentName(%q) = %v, want %v", tt.name, got, tt.ok)
		}
	}
}

func TestNewDeterministic(t *testing.T) {
	src := Source{Rand: bytes.NewReader([]byte{0xa1, 0xb2, 0xc3, 0x00, 0x01, 0xff, 0xde, 0xad, 0xbe, 0xef})}
	want := []struct{ kind, id string }{
		{Task, "tk-a1b2c3"},
		{Phase, "ph-0001ff"},
	}
	for _, w := range want {
		if got := src.New(w.kind); got != w.id {
			t.Fatalf("New(%s) = %q, want %q", w.kind, got, w.id)
		}
		if err := Parse(w.kind, w.id); err != nil {
			t.Fatalf("New made an id Parse rejects: %v", err)
		}
	}
	// Four bytes remain; New needs three.
	if got := src.New(Message); got != "msg-deadbe" {
		t.Fatalf("New(msg) = %q", got)
	}
}

func TestNewPanicsOnExhaustedSource(t *testing.T) {
	defer func() {
		if recover() == nil {
			t.Fatal("New on an empty source did not panic")
		}
	}()
	Source{Rand: bytes.NewReader(nil)}.New(Task)
}

func TestAgentName(t *testing.T) {
	re := regexp.MustCompile(`^[a-z]+_[0-9a-f]{4}$`)
	seed := []byte{0x00, 0x12, 0x34, 0xff, 0xab, 0xcd}
	a := Source{Rand: bytes.NewReader(seed)}
	b := Source{Rand: bytes.NewReader(seed)}
	for range 2 {
		x, y := a.AgentName(), b.AgentName()
		if x != y {
			t.Fatalf("same seed, different names %q and %q", x, y)
		}
		if !re.MatchString(x) || !ValidAgentName(x) {
			t.Fatalf("AgentName() = %q, want tree_xxxx and a valid agent name", x)
		}
	}
	// With a real source, names are valid and vary.
	seen := map[string]bool{}
	for range 200 {
		n := Default.AgentName()
		if !re.MatchString(n) || !ValidAgentName(n) {
			t.Fatalf("AgentName() = %q", n)
		}
		tree := n[:strings.IndexByte(n, '_')]
		found := false
		for _, tr := range trees {
			found = found || tr == tree
		}
		if !found {
			t.Fatalf("AgentName() = %q uses an unknown tree", n)
		}
		seen[n] = true
	}
	if len(seen) < 150 {
		t.Fatalf("only %d distinct names in 200", len(seen))
	}
}

func TestNilRandUsesCrypto(t *testing.T) {
	id := Source{}.New(Request)
	if err := Parse(Request, id); err != nil {
		t.Fatal(err)
	}
}

// FuzzParse: Parse never panics and accepts exactly ^kind-[0-9a-f]{6}$.
func FuzzParse(f *testing.F) {
	for _, s := range []string{"tk-a1b2c3", "ph-000000", "msg-ffffff", "rq-0a0a0a", "tk-A1B2C3", "tk-a1b2c", "", "tk-\xff\xff\xff\xff\xff\xff", "ph-a1b2c3\x00"} {
		f.Add(s)
	}
	res := map[string]*regexp.Regexp{}
	for _, k := range []string{Task, Phase, Message, Request} {
		res[k] = regexp.MustCompile(`^` + k + `-[0-9a-f]{6}$`)
	}
	all := regexp.MustCompile(`^(tk|ph|msg|rq)-[0-9a-f]{6}$`)
	f.Fuzz(func(t *testing.T, id string) {
		accepted := 0
		for k, re := range res {
			err := Parse(k, id)
			if (err == nil) != re.MatchString(id) {
				t.Fatalf("Parse(%q, %q) = %v; regexp says %v", k, id, err, re.MatchString(id))
			}
			if err == nil {
				accepted++
			}
		}
		if accepted > 1 {
			t.Fatalf("%q accepted for %d kinds", id, accepted)
		}
		if (accepted == 1) != all.MatchString(id) {
			t.Fatalf("%q: accepted %v, want %v", id, accepted == 1, all.MatchString(id))
		}
	})
}

// The default source is random enough for ids: 20,000 draws of six hex
// digits (16.7 M values) collide about 12 times by the birthday bound, so
// over 100 means a broken generator (a constant, a short cycle, bytes not
// filled); every byte value turns up in each position of a draw.
func TestDefaultSourceSpreads(t *testing.T) {
	const draws = 20000
	seen := make(map[string]bool, draws)
	dup := 0
	var byPos [3][256]bool
	for range draws {
		id := Default.New(Task)
		if err := Parse(Task, id); err != nil {
			t.Fatal(err)
		}
		if seen[id] {
			dup++
		}
		seen[id] = true
		for i := range 3 {
			var v byte
			fmt.Sscanf(id[3+2*i:5+2*i], "%02x", &v)
			byPos[i][v] = true
		}
	}
	if dup > 100 {
		t.Errorf("%d of %d ids repeated: the source is not random", dup, draws)
	}
	for i, vals := range byPos {
		for v, ok := range vals {
			if !ok {
				t.Errorf("byte %d of the id never took the value %#x in %d draws", i, v, draws)
			}
		}
	}
}

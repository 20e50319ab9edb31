package llmagent_test

import (
	"bufio"
	"os"
	"strconv"
	"strings"
	"testing"

	"github.com/plasmodium/pm/internal/llmagent"
	"github.com/plasmodium/pm/internal/state/fsstate"
)

// overheadDoc is where the figures are kept.
const overheadDoc = "../../docs/benchmarks.md"

// documentedOverhead reads the fixed bytes per call of each role from the
// table of docs/benchmarks.md's "pm's overhead per llm turn" section.
func documentedOverhead(t *testing.T) map[string]int {
	t.Helper()
	f, err := os.Open(overheadDoc)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	out := map[string]int{}
	in := false
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		line := sc.Text()
		if strings.HasPrefix(line, "#") {
			in = strings.Contains(line, "pm's overhead per llm turn")
			continue
		}
		if !in || !strings.HasPrefix(line, "| `") {
			continue
		}
		cells := strings.Split(line, "|")
		if len(cells) < 6 {
			continue
		}
		role := strings.Trim(strings.TrimSpace(cells[1]), "`")
		fixed, err := strconv.Atoi(strings.ReplaceAll(strings.TrimSpace(cells[5]), ",", ""))
		if err != nil {
			t.Fatalf("%s: row %q: fixed bytes %q: %v", overheadDoc, line, cells[5], err)
		}
		out[role] = fixed
	}
	return out
}

// What pm sends with every model call of a role (its system prompt and its
// tool list) may not grow by more than 10% over the figure docs/benchmarks.md
// keeps without the figure being updated (make bench prints the new ones).
func TestOverheadWithinDocumented(t *testing.T) {
	f := newFixture(t)
	tk, _ := f.task(t, "Build a landing page for our product")
	got, err := llmagent.Overheads(f.s, fsstate.New(f.s), tk, "Brainstorm", 10)
	if err != nil {
		t.Fatal(err)
	}
	doc := documentedOverhead(t)
	for _, o := range got {
		want, ok := doc[o.Role]
		t.Logf("%-10s prompt %5d tools %5d (%d) context %4d fixed %5d ≈ %d tokens (documented %d)", o.Role, o.Prompt, o.Tools, len(o.Names), o.Context, o.Fixed(), o.Tokens(), want)
		if !ok {
			t.Errorf("%s: no figure for role %s in %s", o.Role, o.Role, overheadDoc)
			continue
		}
		switch {
		case float64(o.Fixed()) > 1.1*float64(want):
			t.Errorf("%s: pm's fixed overhead per call is %d bytes, more than 10%% over the %d in %s: cut it, or update the figure (make bench prints it)",
				o.Role, o.Fixed(), want, overheadDoc)
		case float64(o.Fixed()) < 0.9*float64(want):
			t.Errorf("%s: pm's fixed overhead per call is %d bytes, more than 10%% under the %d in %s: update the figure (make bench prints it), so the next growth is caught",
				o.Role, o.Fixed(), want, overheadDoc)
		}
	}
}

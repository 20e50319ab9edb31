package render

import (
	"bytes"
	"encoding/json"
	"strings"
	"testing"
	"time"
	_ "time/tzdata" // the zones below, wherever the test runs

	"github.com/plasmodium/pm/internal/store"
)

// printView decodes raw as a view and prints it through a Printer (after
// a message of another second and zone span, so its caches are in use),
// and through PrintMessage's general path from the message encoding/json
// decodes. ok is false for a line that is no message.
func printView(t *testing.T, p *Printer, raw []byte) (view, general string, ok bool) {
	t.Helper()
	var v store.MessageView
	if !v.DecodeLine(raw) || v.ID == "" {
		return "", "", false
	}
	var f bytes.Buffer
	p.Print(&f, &v)
	var m store.Message
	_ = json.Unmarshal(raw, &m) // what fits, as the reader passes it
	var g strings.Builder
	PrintMessage(onlyWriter{&g}, m)
	return f.String(), g.String(), true
}

func TestPrinterMatchesGeneral(t *testing.T) {
	var p Printer
	for _, line := range []string{
		`{"id":"m1","author":"oak_0001","content":"ship it","timestamp":"2026-03-04T05:06:07.000000008Z"}`,
		`{"id":"m2","author":"oak_0001","role":"qa","content":"a\nb\n\nc\n","timestamp":"2026-03-04T05:06:07.5Z"}`,
		`{"id":"m3","author":"human","role":"lead","content":"\tok \u003cb\u003e \"q\"","timestamp":"2026-03-04T05:06:08Z"}`,
		`{"id":"m4","author":"a","content":"\u001b[31mred","timestamp":"2026-03-04T05:06:08Z"}`,
		`{"id":"m5","author":"a\nb","content":"x"}`,
		`{"id":"m6","author":"a","role":"q\ta","content":"x"}`,
		`{"id":"m7","author":"a","content":"café ` + "\u202e" + `"}`,
		`{"id":"m8","author":"a","content":"` + "\x7f" + `"}`,
		`{"id":"m9","author":"a","content":"\u007f\u0085"}`,
		`{"id":"m10","author":"a","content":"x","timestamp":"2026-03-04T05:06:07+05:30"}`,
		`{"id":"m11","author":"a","content":"x","ID":"y"}`,
		`{"id":"m12","author":5,"content":"x"}`,
	} {
		view, general, ok := printView(t, &p, []byte(line))
		if !ok || view != general {
			t.Errorf("%s: Printer %q, PrintMessage %q (decoded %v)", line, view, general, ok)
		}
	}
}

// The local clock from the zone's span is t.Local()'s, across daylight
// saving changes (forward, back, negative, half-hour), before 1970 and
// far ahead, whatever order the messages come in.
func TestPrinterClock(t *testing.T) {
	defer func(l *time.Location) { time.Local = l }(time.Local)
	for _, name := range []string{"UTC", "America/New_York", "Europe/Dublin", "Australia/Lord_Howe", "Asia/Kathmandu", "America/St_Johns", "Pacific/Apia"} {
		loc, err := time.LoadLocation(name)
		if err != nil {
			t.Fatal(err)
		}
		time.Local = loc
		var z localZone
		for _, span := range []struct {
			from time.Time
			step time.Duration
			n    int
		}{
			{time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC), 7*time.Minute + 13*time.Second, 75_000},
			{time.Date(1969, 12, 31, 0, 0, 0, 0, time.UTC), 59 * time.Second, 3_000},
			{time.Date(1916, 1, 1, 0, 0, 0, 0, time.UTC), 97 * time.Minute, 6_000},
			{time.Date(2099, 1, 1, 0, 0, 0, 0, time.UTC), 3*time.Hour + 7*time.Second, 3_000},
			{time.Date(2026, 11, 1, 5, 0, 0, 0, time.UTC), -time.Second, 20_000}, // backwards
		} {
			at := span.from
			for range span.n {
				h, m, s := z.clock(at)
				if got, want := twoDigits[2*h:2*h+2]+":"+twoDigits[2*m:2*m+2]+":"+twoDigits[2*s:2*s+2], at.Local().Format("15:04:05"); got != want {
					t.Fatalf("%s: clock of %v = %s, want %s", name, at, got, want)
				}
				at = at.Add(span.step)
			}
		}
	}
}

// FuzzPrintView: for any line, the Printer prints what PrintMessage's
// general path prints for the message encoding/json decodes.
func FuzzPrintView(f *testing.F) {
	for _, s := range []string{
		`{"id":"m","author":"oak","role":"qa","content":"a\nb\u003c","timestamp":"2026-03-04T05:06:07.5Z"}`,
		`{"id":"m","author":"a` + "\x7f" + `","content":"\u0085\u202e\ud800"}`,
		"{\"id\":\"m\",\"author\":\"a\",\"content\":\"\xff\"}",
		`{"id":"m","Author":"x","content":"\t","timestamp":"1969-12-31T23:59:59.999999999Z"}`,
	} {
		f.Add([]byte(s))
	}
	var p Printer // shared: its caches carry from line to line
	f.Fuzz(func(t *testing.T, raw []byte) {
		if view, general, ok := printView(t, &p, raw); ok && view != general {
			t.Fatalf("%q: Printer %q, PrintMessage %q", raw, view, general)
		}
	})
}

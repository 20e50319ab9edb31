package bench

import (
	"fmt"
	"io"
	"os"
	"strings"
	"text/tabwriter"
)

// Row is one figure of the report.
type Row struct {
	Figure string
	Goal   string
	Result string
	// Verdict is "ok", "MISSED", "FAILED" (a correctness check) or "" (no goal).
	Verdict string
}

// Verdict returns "ok" when met, else "MISSED".
func Verdict(met bool) string {
	if met {
		return "ok"
	}
	return "MISSED"
}

// Print writes rows as an aligned table.
func Print(w io.Writer, rows []Row) {
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	fmt.Fprintln(tw, "figure\tgoal\t\tresult")
	fmt.Fprintln(tw, "------\t----\t\t------")
	for _, r := range rows {
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\n", r.Figure, r.Goal, r.Verdict, r.Result)
	}
	tw.Flush()
}

// LoadAvg returns the 1, 5 and 15 minute load averages from /proc/loadavg
// ("" where there is none): other work on the machine skews every figure.
func LoadAvg() string {
	data, err := os.ReadFile("/proc/loadavg")
	if err != nil {
		return ""
	}
	f := strings.Fields(string(data))
	if len(f) < 3 {
		return ""
	}
	return strings.Join(f[:3], " ")
}

package jsonl

import (
	"encoding/json"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

// countedRecord counts its decodes.
type countedRecord struct{ N int }

var recordDecodes int

func (c *countedRecord) UnmarshalJSON(b []byte) error {
	recordDecodes++
	var v struct{ N int }
	err := json.Unmarshal(b, &v)
	c.N = v.N
	return err
}

// LastRecords decodes only the last n records when fits vouches for the
// rest, and every line (once to count, the last n twice more) when it cannot;
// both give ReadAll's last n, its count and its reports, once each.
func TestLastRecordsDecodes(t *testing.T) {
	var b strings.Builder
	for i := range 100 {
		b.WriteString(`{"N":` + strings.Repeat(" ", i%3) + itoa(i) + "}\n")
		if i%10 == 0 {
			b.WriteString(`{"N":"not a number"}` + "\n" + `{torn` + "\n")
		}
	}
	path := filepath.Join(t.TempDir(), "records.jsonl")
	if err := os.WriteFile(path, []byte(b.String()), 0o644); err != nil {
		t.Fatal(err)
	}
	var want []BadLine
	all, err := ReadAll[countedRecord](path, func(b BadLine) { want = append(want, b) })
	if err != nil || len(all) != 100 || len(want) != 20 {
		t.Fatalf("ReadAll = %d records, %v, %d bad", len(all), err, len(want))
	}
	sure := func(raw []byte) bool { return !strings.Contains(string(raw), `"not`) }
	tests := []struct {
		name    string
		fits    func([]byte) bool
		decodes int
	}{
		{"fits vouches for the good lines", sure, 5 + 10}, // the 5 kept, the 10 misfits
		{"no fits", nil, 5 + 5 + 110},                     // chosen, kept, counted
	}
	for _, tt := range tests {
		recordDecodes = 0
		var bad []BadLine
		last, total, err := LastRecords[countedRecord](path, 5, tt.fits, func(b BadLine) { bad = append(bad, b) })
		if err != nil || total != 100 || !slices.Equal(last, all[95:]) || !slices.Equal(bad, want) {
			t.Errorf("%s: %v of %d, %v, bad %v; want %v of 100, bad %v", tt.name, last, total, err, bad, all[95:], want)
		}
		if recordDecodes != tt.decodes {
			t.Errorf("%s: %d decodes, want %d", tt.name, recordDecodes, tt.decodes)
		}
	}
}

func itoa(i int) string { b, _ := json.Marshal(i); return string(b) }

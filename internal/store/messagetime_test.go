package store

import (
	"fmt"
	"strings"
	"testing"
	"time"
)

// checkParseUTC asserts that when parseUTC handles s it gives exactly what
// time.Time's UnmarshalJSON gives (which encoding/json calls), and reports
// whether it handled it.
func checkParseUTC(t *testing.T, s string) bool {
	t.Helper()
	got, ok := parseUTC([]byte(s))
	if !ok {
		return false
	}
	var want time.Time
	if err := want.UnmarshalJSON([]byte(`"` + s + `"`)); err != nil {
		t.Fatalf("parseUTC(%q) = %v, UnmarshalJSON refuses it: %v", s, got, err)
	}
	if got != want {
		t.Fatalf("parseUTC(%q) = %#v, UnmarshalJSON %#v", s, got, want)
	}
	return true
}

// checkStampCache asserts that a stampCache parses s as parseUTC does,
// cold and after a timestamp of the same minute (s's first 16 bytes) or
// second.
func checkStampCache(t *testing.T, s string) {
	t.Helper()
	want, wok := parseUTC([]byte(s))
	var c stampCache
	for _, prime := range []string{"", s, s[:min(len(s), 19)] + "Z", s[:min(len(s), 19)] + ".9Z", s[:min(len(s), 16)] + ":59.9Z", s[:min(len(s), 16)] + ":00Z"} {
		if prime != "" {
			c.parse([]byte(prime))
		}
		if got, ok := c.parse([]byte(s)); ok != wok || got != want {
			t.Fatalf("stampCache.parse(%q) after %q = %#v, %v; parseUTC %#v, %v", s, prime, got, ok, want, wok)
		}
	}
}

func TestParseUTCDates(t *testing.T) {
	handled := 0
	for _, year := range []int{0, 1, 4, 100, 1600, 1900, 1970, 2000, 2024, 2026, 2100, 9999} {
		for month := 0; month <= 13; month++ {
			for day := 0; day <= 32; day++ {
				s := fmt.Sprintf("%04d-%02d-%02dT23:59:59Z", year, month, day)
				checkStampCache(t, s)
				if checkParseUTC(t, s) {
					handled++
				}
			}
		}
	}
	// Every valid day of the twelve years above, five of them leap years
	// (0, 4, 1600, 2000, 2024).
	if want := 7*365 + 5*366; handled != want {
		t.Errorf("parseUTC handled %d dates, want %d", handled, want)
	}
}

func TestParseUTC(t *testing.T) {
	cases := []struct {
		s       string
		handled bool
	}{
		{"2026-01-02T03:04:05Z", true},
		{"2026-11-25T13:35:27.04983976Z", true},
		{"2026-11-25T13:35:27.1Z", true},
		{"2026-11-25T13:35:27.123456789Z", true},
		{"2026-11-25T00:00:00.000000000Z", true},
		{"2026-11-25T13:35:27.1234567891Z", false}, // ten digits: UnmarshalJSON truncates
		{"2026-11-25T13:35:27.Z", false},
		{"2026-11-25T13:35:27,5Z", false},
		{"2026-11-25T24:00:00Z", false},
		{"2026-11-25T23:60:00Z", false},
		{"2026-11-25T23:59:60Z", false},
		{"2026-11-25T13:35:27+00:00", false},
		{"2026-11-25T13:35:27.5-07:00", false},
		{"2026-11-25t13:35:27Z", false},
		{"2026-11-25T13:35:27z", false},
		{"2026-11-25 13:35:27Z", false},
		{"+2026-11-25T13:35:27Z", false},
		{"2026-1-25T13:35:27Z", false},
		{"2026-11-25T13:35:2Z", false},
		{"2026-11-25T1:35:27Z", false},
		{"-026-11-25T13:35:27Z", false},
		{"2026-11-25T13:35:27", false},
		{"", false},
		{"2026-11-25T13:35:27.12345678\u00e9Z", false},
	}
	for _, c := range cases {
		if got := checkParseUTC(t, c.s); got != c.handled {
			t.Errorf("parseUTC(%q) handled = %v, want %v", c.s, got, c.handled)
		}
	}
	for n := 1; n <= 9; n++ {
		s := "2026-11-25T13:35:27." + strings.Repeat("7", n) + "Z"
		if !checkParseUTC(t, s) {
			t.Errorf("parseUTC(%q) not handled", s)
		}
	}
}

// FuzzParseUTC: whatever parseUTC handles, it parses as UnmarshalJSON does;
// stampCache parses as parseUTC does.
func FuzzParseUTC(f *testing.F) {
	f.Add("2026-11-25T13:35:27.04983976Z")
	f.Add("2024-02-29T00:00:00Z")
	f.Add("2023-02-29T00:00:00.1Z")
	f.Fuzz(func(t *testing.T, s string) {
		checkParseUTC(t, s)
		checkStampCache(t, s)
	})
}

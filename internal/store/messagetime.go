package store

import "time"

// parseUTC parses the timestamps pm writes, UTC RFC 3339 with up to nine
// fraction digits (2026-01-02T03:04:05.123456789Z), as time.Time's
// UnmarshalJSON does but in a fraction of its cost. Any other form is left
// to UnmarshalJSON: false means "not handled", not "invalid".
func parseUTC(b []byte) (time.Time, bool) {
	const short = len("2006-01-02T15:04:05Z")
	if len(b) < short || len(b) > short+10 || b[len(b)-1] != 'Z' ||
		b[4] != '-' || b[7] != '-' || b[10] != 'T' || b[13] != ':' || b[16] != ':' {
		return time.Time{}, false
	}
	year := num2(b[0], b[1])*100 + num2(b[2], b[3])
	month, day := num2(b[5], b[6]), num2(b[8], b[9])
	hour, minute, sec := num2(b[11], b[12]), num2(b[14], b[15]), num2(b[17], b[18])
	if year < 0 || month < 1 || month > 12 || day < 1 || day > daysIn(month, year) ||
		hour < 0 || hour > 23 || minute < 0 || minute > 59 || sec < 0 || sec > 59 {
		return time.Time{}, false
	}
	nsec, ok := fraction(b[19 : len(b)-1])
	if !ok {
		return time.Time{}, false
	}
	return time.Date(year, time.Month(month), day, hour, minute, sec, nsec, time.UTC), true
}

// fraction parses a timestamp's fraction of a second, nothing or a period
// and one to nine digits, into nanoseconds.
func fraction(frac []byte) (nsec int, ok bool) {
	if len(frac) == 0 {
		return 0, true
	}
	n, ok := decimal(frac[1:])
	if frac[0] != '.' || len(frac) < 2 || !ok {
		return 0, false
	}
	for range 10 - len(frac) {
		n *= 10
	}
	return n, true
}

// num2 is the two-digit number c d, or -10000 (below every range the
// callers check, even times 100 plus 99) if either is not a digit.
func num2(c, d byte) int {
	if c-'0' > 9 || d-'0' > 9 {
		return -10000
	}
	return int(c-'0')*10 + int(d-'0')
}

// decimal parses b, all decimal digits (at most nine).
func decimal(b []byte) (int, bool) {
	n := 0
	for _, c := range b {
		if c < '0' || c > '9' {
			return 0, false
		}
		n = n*10 + int(c-'0')
	}
	return n, true
}

// daysIn is the number of days in month of year (proleptic Gregorian).
func daysIn(month, year int) int {
	switch month {
	case 2:
		if year%4 == 0 && (year%100 != 0 || year%400 == 0) {
			return 29
		}
		return 28
	case 4, 6, 9, 11:
		return 30
	}
	return 31
}

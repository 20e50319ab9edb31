package render

import "testing"

func TestTerminal(t *testing.T) {
	tests := []struct {
		name, in, want, line string
	}{
		{"plain", "hello, world", "hello, world", "hello, world"},
		{"newline and tab kept", "a\n\tb", "a\n\tb", `a\n\tb`},
		{"title and colour", "\x1b]0;title\a\x1b[31mred", `\x1b]0;title\x07\x1b[31mred`, `\x1b]0;title\x07\x1b[31mred`},
		{"carriage return", "ok\rbad", `ok\x0dbad`, `ok\x0dbad`},
		{"nul and del", "a\x00b\x7f", `a\x00b\x7f`, `a\x00b\x7f`},
		{"C1 CSI", "x\u009b31m", `x\u009b31m`, `x\u009b31m`},
		{"bidi override", "abc\u202edef", `abc\u202edef`, `abc\u202edef`},
		{"invalid UTF-8", "a\xffb\xc3", `a\xffb\xc3`, `a\xffb\xc3`},
		{"unicode kept", "héllo ✓ 日本", "héllo ✓ 日本", "héllo ✓ 日本"},
		{"backslash kept", `a\x1b`, `a\x1b`, `a\x1b`},
		{"empty", "", "", ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := Terminal(tt.in); got != tt.want {
				t.Errorf("Terminal(%q) = %q; want %q", tt.in, got, tt.want)
			}
			if got := Line(tt.in); got != tt.line {
				t.Errorf("Line(%q) = %q; want %q", tt.in, got, tt.line)
			}
			for _, c := range []byte(Terminal(tt.in) + Line(tt.in)) {
				if c < 0x20 && c != '\n' && c != '\t' || c == 0x7f {
					t.Errorf("output of %q holds control byte %#x", tt.in, c)
				}
			}
		})
	}
}

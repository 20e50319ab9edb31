package secret

import (
	"slices"
	"strings"
)

// Masked is what a secret is replaced with.
const Masked = "[masked]"

// Set is the secrets one process masks. The zero Set masks nothing.
type Set struct {
	values []string // non-empty, distinct, longest first
}

// New returns the Set of the non-empty values.
func New(values ...string) Set {
	var s Set
	s.Add(values...)
	return s
}

// Add adds the non-empty values to s. It copies, so copies of s taken
// before (a Writer's, say) keep what they had.
func (s *Set) Add(values ...string) {
	*s = s.With(values...)
}

// With returns s plus the non-empty values; s is unchanged.
func (s Set) With(values ...string) Set {
	out := slices.Clone(s.values)
	for _, v := range values {
		if Maskable(v) && !slices.Contains(out, v) {
			out = append(out, v)
		}
	}
	// Longest first: a secret that contains another is masked whole.
	slices.SortStableFunc(out, func(a, b string) int { return len(b) - len(a) })
	return Set{values: out}
}

// Maskable reports whether v is masked when it is added to a Set: at least
// MinLen bytes, and not a word (letters alone). A shorter value or a word
// ("x", "ollama", "notneeded": dummy keys for local models) would turn
// ordinary text into "[masked]" ("suggested_fi[masked]") while guarding
// nothing a real key is made of.
func Maskable(v string) bool {
	if len(v) < MinLen {
		return false
	}
	for _, c := range []byte(v) {
		if (c < 'a' || c > 'z') && (c < 'A' || c > 'Z') {
			return true
		}
	}
	return false
}

// Empty reports whether s masks nothing.
func (s Set) Empty() bool { return len(s.values) == 0 }

// Mask returns text with every occurrence of every secret replaced by Masked.
func (s Set) Mask(text string) string {
	for _, sec := range s.values {
		if strings.Contains(text, sec) {
			text = strings.ReplaceAll(text, sec, Masked)
		}
	}
	return text
}

// MaskStream masks text streamed so far and not yet passed on, and splits it
// into what can be passed on now and what must be held back because it ends
// with the start of a secret (the rest may come in the next piece). The
// caller prepends held to the next piece, and passes Mask(held) on at the end.
func (s Set) MaskStream(text string) (out, held string) {
	text = s.Mask(text)
	hold := 0
	for _, sec := range s.values {
		for k := min(len(sec)-1, len(text)); k > hold; k-- {
			if strings.HasSuffix(text, sec[:k]) {
				hold = k
				break
			}
		}
	}
	return text[:len(text)-hold], text[len(text)-hold:]
}

package fieldfill

import (
	"testing"
	"time"
)

type inner struct {
	N int
	S []string
}

type record struct {
	inner
	Name    string
	Count   uint32
	Ratio   float64
	On      bool
	At      time.Time
	AtP     *time.Time
	Nested  *inner
	Tags    map[string]any
	Pair    [2]int8
	private string
}

func TestFillReachesEveryExportedField(t *testing.T) {
	var r record
	if err := Fill(&r); err != nil {
		t.Fatal(err)
	}
	if z := Zero(r); z != nil {
		t.Fatalf("zero after Fill: %v", z)
	}
	if r.private != "" {
		t.Error("an unexported field was filled")
	}
	if r.Name == r.Nested.S[0] {
		t.Error("two fields got the same value")
	}
}

func TestZeroNamesWhatIsMissing(t *testing.T) {
	var r record
	if err := Fill(&r); err != nil {
		t.Fatal(err)
	}
	r.Nested.N, r.Count = 0, 0
	z := Zero(r)
	want := map[string]bool{"record.Count": true, "record.Nested.N": true}
	if len(z) != len(want) {
		t.Fatalf("Zero = %v, want %v", z, want)
	}
	for _, p := range z {
		if !want[p] {
			t.Errorf("Zero named %s", p)
		}
	}
}

func TestFillRefuses(t *testing.T) {
	for _, v := range []any{nil, record{}, &struct{ F func() }{}, &struct{ C chan int }{}} {
		if err := Fill(v); err == nil {
			t.Errorf("Fill(%T) = nil, want an error", v)
		}
	}
}

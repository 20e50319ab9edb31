package bus

import (
	"encoding/json"
	"testing"
)

func TestCursorRoundTrip(t *testing.T) {
	cases := []Cursor{{}, {off: 1, id: 1}, {off: 4096, id: 0xdeadbeef}, {off: 1 << 40, id: 0xffffffff}}
	for _, c := range cases {
		t.Run(c.String(), func(t *testing.T) {
			got, err := ParseCursor(c.String())
			if err != nil || got != c {
				t.Fatalf("ParseCursor(%q) = %+v, %v; want %+v", c.String(), got, err, c)
			}
			b, err := json.Marshal(struct{ C Cursor }{c})
			if err != nil {
				t.Fatal(err)
			}
			var back struct{ C Cursor }
			if err := json.Unmarshal(b, &back); err != nil || back.C != c {
				t.Fatalf("JSON %s read back as %+v, %v", b, back.C, err)
			}
		})
	}
}

func TestParseCursor(t *testing.T) {
	cases := []struct {
		in      string
		want    Cursor
		wantErr bool
	}{
		{in: "", want: Cursor{}},
		{in: "c1.0.0", want: Cursor{}},
		{in: "c1.ff.10", want: Cursor{off: 16, id: 255}},
		{in: "c2.ff.10", wantErr: true},
		{in: "c1.ff", wantErr: true},
		{in: "c1.zz.10", wantErr: true},
		{in: "c1.1.-10", wantErr: true},
		{in: "c1.1ffffffff.0", wantErr: true},
		{in: "garbage", wantErr: true},
	}
	for _, c := range cases {
		t.Run(c.in, func(t *testing.T) {
			got, err := ParseCursor(c.in)
			if (err != nil) != c.wantErr || (!c.wantErr && got != c.want) {
				t.Fatalf("ParseCursor(%q) = %+v, %v; want %+v (error %v)", c.in, got, err, c.want, c.wantErr)
			}
		})
	}
}

package netguard

import (
	"net/netip"
	"strings"
	"testing"
)

func TestCheck(t *testing.T) {
	cases := []struct {
		addr  string
		allow []string
		want  string // "" allowed, else a substring of the refusal
	}{
		{"93.184.215.14:443", nil, ""},
		{"[2606:4700::1111]:443", nil, ""},
		{"127.0.0.1:80", nil, "loopback"},
		{"127.8.9.10:80", nil, "loopback"},
		{"[::1]:80", nil, "loopback"},
		{"[::ffff:127.0.0.1]:80", nil, "loopback"},
		{"[64:ff9b::7f00:1]:80", nil, "loopback"},
		{"[2002:7f00:1::]:80", nil, "loopback"},
		{"10.0.0.1:80", nil, "private"},
		{"172.16.5.4:80", nil, "private"},
		{"192.168.1.1:80", nil, "private"},
		{"[fd00::1]:80", nil, "private"},
		{"169.254.169.254:80", nil, "link-local"},
		{"[fe80::1]:80", nil, "link-local"},
		{"0.0.0.0:80", nil, "unspecified"},
		{"0.1.2.3:80", nil, "unspecified"},
		{"[::]:80", nil, "unspecified"},
		{"224.0.0.1:80", nil, "link-local"},
		{"239.1.2.3:80", nil, "multicast"},
		{"100.64.0.1:80", nil, "reserved or shared"},
		{"255.255.255.255:80", nil, "reserved or shared"},
		{"127.0.0.1:8080", []string{"127.0.0.1:8080"}, ""},
		{"127.0.0.1:8081", []string{"127.0.0.1:8080"}, "loopback"},
		{"[::ffff:127.0.0.1]:8080", []string{"127.0.0.1:8080"}, ""},
		{"10.1.2.3:80", []string{"10.1.0.0/16"}, ""},
		{"10.2.2.3:80", []string{"10.1.0.0/16"}, "private"},
		{"192.168.1.1:80", []string{"192.168.1.1"}, ""},
	}
	for _, c := range cases {
		p, err := Parse(c.allow)
		if err != nil {
			t.Fatal(err)
		}
		err = p.Check(netip.MustParseAddrPort(c.addr))
		switch {
		case c.want == "" && err != nil:
			t.Errorf("%s allow %v: refused: %v", c.addr, c.allow, err)
		case c.want != "" && (err == nil || !strings.Contains(err.Error(), c.want)):
			t.Errorf("%s allow %v: %v, want %q", c.addr, c.allow, err, c.want)
		}
	}
}

func TestParseRefusesWhatItCannotRead(t *testing.T) {
	for _, e := range []string{"localhost", "10.0.0.0/33", "*", "127.0.0.1:http", ""} {
		if _, err := Parse([]string{e}); err == nil {
			t.Errorf("Parse(%q) accepted", e)
		}
	}
}

func TestDenyAll(t *testing.T) {
	p := Policy{DenyAll: true}
	if err := p.Check(netip.MustParseAddrPort("93.184.215.14:443")); err == nil {
		t.Fatal("DenyAll allowed a public address")
	}
}

func FuzzParse(f *testing.F) {
	for _, s := range []string{"127.0.0.1", "10.0.0.0/8", "[::1]:80", "x"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		p, err := Parse([]string{s})
		if err != nil {
			return
		}
		_ = p.Check(netip.MustParseAddrPort("127.0.0.1:1"))
	})
}

package netguard

import (
	"fmt"
	"net/netip"
	"strings"
	"syscall"
)

// Policy decides which addresses an agent's fetch may connect to. The zero
// value refuses every internal address and allows the rest.
type Policy struct {
	prefixes []netip.Prefix
	ports    []netip.AddrPort
	DenyAll  bool // the config denies the network outright (sandbox.network false)
}

// Parse reads sandbox.http_allow's entries.
func Parse(entries []string) (Policy, error) {
	var p Policy
	for _, e := range entries {
		e = strings.TrimSpace(e)
		if ap, err := netip.ParseAddrPort(e); err == nil {
			p.ports = append(p.ports, netip.AddrPortFrom(ap.Addr().Unmap(), ap.Port()))
			continue
		}
		if a, err := netip.ParseAddr(e); err == nil {
			p.prefixes = append(p.prefixes, netip.PrefixFrom(a.Unmap(), a.Unmap().BitLen()))
			continue
		}
		if pf, err := netip.ParsePrefix(e); err == nil {
			p.prefixes = append(p.prefixes, pf.Masked())
			continue
		}
		return Policy{}, fmt.Errorf("sandbox.http_allow entry %q is not an IP, IP:port or CIDR prefix (e.g. \"127.0.0.1:8080\", \"10.1.0.0/16\")", e)
	}
	return p, nil
}

// Check says whether a connection to addr may be made.
func (p Policy) Check(addr netip.AddrPort) error {
	if p.DenyAll {
		return fmt.Errorf("network access is off for agents (sandbox.network is false)")
	}
	ip := addr.Addr().Unmap()
	for _, ap := range p.ports {
		if ap.Addr() == ip && ap.Port() == addr.Port() {
			return nil
		}
	}
	for _, pf := range p.prefixes {
		if pf.Contains(ip) {
			return nil
		}
	}
	if why := internal(ip); why != "" {
		return fmt.Errorf("%s is %s; agents may not reach it (allow it with sandbox.http_allow)", netip.AddrPortFrom(ip, addr.Port()), why)
	}
	return nil
}

// Control is a net.Dialer Control function enforcing the policy on the
// address being dialled.
func (p Policy) Control(network, address string, _ syscall.RawConn) error {
	ap, err := netip.ParseAddrPort(address)
	if err != nil {
		return fmt.Errorf("refusing to dial %q: %v", address, err)
	}
	return p.Check(ap)
}

var (
	sharedSpace = netip.MustParsePrefix("100.64.0.0/10") // carrier-grade NAT
	thisNetwork = netip.MustParsePrefix("0.0.0.0/8")
	benchmarks  = netip.MustParsePrefix("198.18.0.0/15")
	reserved    = netip.MustParsePrefix("240.0.0.0/4") // and broadcast
	nat64       = netip.MustParsePrefix("64:ff9b::/96")
	sixToFour   = netip.MustParsePrefix("2002::/16")
)

// internal names the kind of internal address ip is, or "" for a public one.
func internal(ip netip.Addr) string {
	if v4, ok := embeddedV4(ip); ok {
		ip = v4
	}
	switch {
	case ip.IsLoopback():
		return "a loopback address"
	case ip.IsPrivate():
		return "a private address"
	case ip.IsLinkLocalUnicast(), ip.IsLinkLocalMulticast():
		return "a link-local address (cloud metadata lives there)"
	case ip.IsUnspecified(), thisNetwork.Contains(ip):
		return "an unspecified address (it reaches this machine)"
	case ip.IsMulticast(), ip.IsInterfaceLocalMulticast():
		return "a multicast address"
	case sharedSpace.Contains(ip), benchmarks.Contains(ip), reserved.Contains(ip):
		return "a reserved or shared address"
	}
	return ""
}

// embeddedV4 is the IPv4 address an IPv6 address carries, if it carries one.
func embeddedV4(ip netip.Addr) (netip.Addr, bool) {
	if ip.Is4() {
		return ip, false
	}
	b := ip.As16()
	switch {
	case ip.Is4In6():
		return ip.Unmap(), true
	case nat64.Contains(ip):
		return netip.AddrFrom4([4]byte{b[12], b[13], b[14], b[15]}), true
	case sixToFour.Contains(ip):
		return netip.AddrFrom4([4]byte{b[2], b[3], b[4], b[5]}), true
	}
	return ip, false
}

// Package netguard is the one network policy for what an agent fetches
// (http_get): connections to the machine itself, its private networks and
// link-local addresses (cloud metadata at 169.254.169.254 included) are
// refused unless the config's sandbox.http_allow names them.
//
// Invariants:
//   - The check runs on the address actually dialled (net.Dialer.Control),
//     after name resolution and on every redirect hop, so a DNS name that
//     resolves to 127.0.0.1, a rebinding resolver, a decimal or IPv4-mapped
//     IPv6 spelling, or a redirect to an internal address cannot slip past a
//     check made on the URL's text.
//   - IPv4 addresses embedded in IPv6 (::ffff:a.b.c.d, 64:ff9b::/96 NAT64,
//     2002::/16 6to4) are judged by the IPv4 address they carry.
//   - An allow entry is an IP, an IP:port or a CIDR prefix; anything else is
//     a config error, never a silent wider allow.
package netguard

package httpguard

import (
	"context"
	"fmt"
	"net"
	"net/http"
	"net/netip"
	"net/url"

	"github.com/plasmodium/pm/internal/netguard"
)

// Transport is an HTTP transport that enforces the policy on every
// connection it dials, a proxy's included, and that keeps no connection
// alive between fetches (each http_get is its own). A proxy from the
// environment (HTTP_PROXY, HTTPS_PROXY) is still used, since the user
// configured it; one on an internal address must be named in
// sandbox.http_allow like any other. The target is judged before it is
// handed to the proxy by resolving its name here (the proxy resolves it
// again, so a rebinding DNS server has a window there that direct
// connections do not have; docs/security.md).
func Transport(p netguard.Policy) *http.Transport {
	t := http.DefaultTransport.(*http.Transport).Clone()
	t.DisableKeepAlives = true
	t.Proxy = func(req *http.Request) (*url.URL, error) {
		u, err := http.ProxyFromEnvironment(req)
		if err != nil || u == nil {
			return u, err
		}
		if err := checkHost(req.Context(), p, req.URL); err != nil {
			return nil, err
		}
		return u, nil
	}
	t.DialContext = (&net.Dialer{Control: p.Control}).DialContext // judged on the address dialled
	return t
}

// checkHost judges every address a URL's host resolves to.
func checkHost(ctx context.Context, p netguard.Policy, u *url.URL) error {
	port := u.Port()
	if port == "" {
		port = map[string]string{"http": "80", "https": "443"}[u.Scheme]
	}
	addrs, err := net.DefaultResolver.LookupNetIP(ctx, "ip", u.Hostname())
	if err != nil {
		return err
	}
	for _, a := range addrs {
		ap, err := netip.ParseAddrPort(net.JoinHostPort(a.Unmap().String(), port))
		if err != nil {
			return fmt.Errorf("refusing %s: %v", u.Host, err)
		}
		if err := p.Check(ap); err != nil {
			return err
		}
	}
	return nil
}

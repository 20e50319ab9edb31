// Package httpguard is the HTTP transport of http_get: every connection it
// dials, a proxy's included, is judged by a netguard.Policy.
//
// It is apart from netguard so that the packages that only parse or check
// the policy (the store's config validation) do not link net/http and
// crypto/tls into every pm process.
package httpguard

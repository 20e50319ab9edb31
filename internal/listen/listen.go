// Package listen opens the listeners of pm's servers (pm dashboard, pm mcp
// --http) with errors a person can act on: a port in use names the flag
// and how to find the listener.
package listen

import (
	"errors"
	"net"
	"syscall"

	"github.com/plasmodium/pm/internal/errs"
)

// TCP listens on addr for a server command (pm dashboard, pm mcp
// --http), whose flag is named by flag. A port in use or refused is a
// state error that says what to do about it.
func TCP(addr, flag string) (net.Listener, error) {
	ln, err := net.Listen("tcp", addr)
	switch {
	case err == nil:
		return ln, nil
	case errors.Is(err, syscall.EADDRINUSE):
		_, port, _ := net.SplitHostPort(addr)
		return nil, errs.Statef("another process listens there: pick another port ("+flag+" 127.0.0.1:0 takes any free one), or find it with ss -ltnp 'sport = :"+port+"'",
			"%s is in use", addr)
	case errors.Is(err, syscall.EACCES):
		return nil, errs.Statef("ports below 1024 need privileges: pick a port above 1024 with "+flag,
			"not allowed to listen on %s", addr)
	case errors.Is(err, syscall.EADDRNOTAVAIL):
		return nil, errs.Usagef("name an address of this machine with "+flag+" (127.0.0.1:PORT)",
			"%s is not an address of this machine", addr)
	}
	return nil, err
}

package mcpserver

import (
	"context"
	"crypto/rand"
	"crypto/subtle"
	"encoding/hex"
	"errors"
	"net"
	"net/http"
	"net/url"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/plasmodium/pm/internal/errs"
)

// Path is where the Streamable HTTP endpoint is served.
const Path = "/mcp"

// NewToken returns a fresh bearer token (128 random bits, hex).
func NewToken() string {
	b := make([]byte, 16)
	_, _ = rand.Read(b) // crypto/rand.Read never fails on Linux
	return hex.EncodeToString(b)
}

// CheckLoopback refuses a listen address that is not a loopback one: pm
// acts as the human, so it is offered only to this machine.
func CheckLoopback(addr string) error {
	host, _, err := net.SplitHostPort(addr)
	if err != nil {
		return errs.Usagef("an address such as 127.0.0.1:7071", "bad address %q: %v", addr, err)
	}
	if host == "localhost" {
		return nil
	}
	if ip := net.ParseIP(host); ip == nil || !ip.IsLoopback() {
		return errs.Usagef("listen on 127.0.0.1 (or ::1) and tunnel if you must reach it from elsewhere", "%q is not a loopback address", addr)
	}
	return nil
}

// Handler is the Streamable HTTP endpoint: every request must carry
// "Authorization: Bearer token", and a request with an Origin header must
// come from a loopback origin (a web page elsewhere cannot drive pm).
func (s *Server) Handler(token string) http.Handler {
	h := mcp.NewStreamableHTTPHandler(func(*http.Request) *mcp.Server { return s.MCP }, nil)
	mux := http.NewServeMux()
	mux.Handle(Path, guard(token, h))
	return mux
}

func guard(token string, next http.Handler) http.Handler {
	want := []byte("Bearer " + token)
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if o := r.Header.Get("Origin"); o != "" && !loopbackOrigin(o) {
			http.Error(w, "origin not allowed", http.StatusForbidden)
			return
		}
		if subtle.ConstantTimeCompare([]byte(r.Header.Get("Authorization")), want) != 1 {
			w.Header().Set("WWW-Authenticate", `Bearer realm="pm"`)
			http.Error(w, "missing or wrong bearer token (PM_MCP_TOKEN)", http.StatusUnauthorized)
			return
		}
		next.ServeHTTP(w, r)
	})
}

func loopbackOrigin(origin string) bool {
	u, err := url.Parse(origin)
	if err != nil {
		return false
	}
	host := u.Hostname()
	if host == "localhost" {
		return true
	}
	ip := net.ParseIP(host)
	return ip != nil && ip.IsLoopback()
}

// ServeHTTP serves the endpoint on ln until ctx ends, then shuts down.
func (s *Server) ServeHTTP(ctx context.Context, ln net.Listener, token string) error {
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	go s.Watch(ctx)
	srv := &http.Server{Handler: s.Handler(token), ReadHeaderTimeout: 10 * time.Second}
	go func() {
		<-ctx.Done()
		shut, done := context.WithTimeout(context.Background(), 2*time.Second)
		defer done()
		_ = srv.Shutdown(shut)
	}()
	if err := srv.Serve(ln); err != nil && !errors.Is(err, http.ErrServerClosed) {
		return err
	}
	return nil
}

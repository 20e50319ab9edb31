package dashboard

import (
	"context"
	"embed"
	"errors"
	"fmt"
	"github.com/plasmodium/pm/internal/bus"
	"github.com/plasmodium/pm/internal/listen"
	"github.com/plasmodium/pm/internal/task"
	"io/fs"
	"net"
	"net/http"
	"net/url"
	"sync"
	"sync/atomic"
	"time"

	"github.com/plasmodium/pm/internal/ops"
)

// DefaultAddr is where pm dashboard listens unless told otherwise.
const DefaultAddr = "127.0.0.1:7070"

//go:embed web
var webFS embed.FS

// Config is what a dashboard serves and how.
type Config struct {
	// Addr is host:port to listen on (DefaultAddr when empty; port 0 picks one).
	Addr string
	// Token authenticates every API call. It may be empty only on loopback.
	Token string
	// Session is the store and launcher the human's actions run with; its
	// Actor is replaced by the human.
	Session *ops.Session
	// MaxQueue is how many events may wait for one websocket client before
	// it is told to resnapshot (default 1024).
	MaxQueue int
	// MaxBody caps a request body in bytes (default 64 KiB).
	MaxBody int64
	// WriteTimeout bounds one websocket write (default 10s).
	WriteTimeout time.Duration

	// Test hooks: beforeWrite runs before each websocket event write;
	// onBehind when a client's queue overflows.
	beforeWrite func()
	onBehind    func()
}

// Server is a running dashboard. Close stops it.
type Server struct {
	cfg    Config
	sess   *ops.Session
	ln     net.Listener
	http   *http.Server
	ctx    context.Context
	cancel context.CancelFunc
	wg     sync.WaitGroup // websocket handlers, which outlive http.Server.Shutdown
	done   chan error

	closeOnce sync.Once
	closeErr  error

	// stateReads counts GET /api/state answers: the page reads a snapshot
	// once and then applies events (tests check it does not re-read).
	stateReads atomic.Int64

	// agents keeps the agent records snapshots show, following the bus
	// (agentview.go); nil: every snapshot reads them all.
	agents *agentView

	// health is each recent event's task health, shared by the connections
	// (healthAt).
	health struct {
		mu    sync.Mutex
		at    map[bus.Cursor]*task.Health
		reads int // health worked out (tests: once per event, not per page)
	}
}

// Open validates cfg, listens and serves in the background.
func Open(cfg Config) (*Server, error) {
	if cfg.Session == nil || cfg.Session.Store == nil {
		return nil, errors.New("dashboard: no store")
	}
	if cfg.Addr == "" {
		cfg.Addr = DefaultAddr
	}
	if cfg.MaxQueue <= 0 {
		cfg.MaxQueue = 1024
	}
	if cfg.MaxBody <= 0 {
		cfg.MaxBody = 64 << 10
	}
	if cfg.WriteTimeout <= 0 {
		cfg.WriteTimeout = 10 * time.Second
	}
	loop, err := isLoopback(cfg.Addr)
	if err != nil {
		return nil, err
	}
	if !loop && cfg.Token == "" {
		return nil, fmt.Errorf("dashboard: refusing to listen on %s without a token (only loopback may go without)", cfg.Addr)
	}
	ln, err := listen.TCP(cfg.Addr, "--addr")
	if err != nil {
		return nil, err
	}
	sess := *cfg.Session
	sess.Actor = humanActor
	s := &Server{cfg: cfg, sess: &sess, ln: ln, done: make(chan error, 1)}
	s.ctx, s.cancel = context.WithCancel(context.Background())
	if _, end, err := sess.Store.Bus().Tail(0); err == nil {
		s.agents = newAgentView(s.ctx, sess.Store.Bus(), end)
	}
	s.http = &http.Server{Handler: s.routes(), ReadHeaderTimeout: 10 * time.Second,
		BaseContext: func(net.Listener) context.Context { return s.ctx }}
	go func() { s.done <- s.http.Serve(ln) }()
	return s, nil
}

// Addr is the address the server listens on.
func (s *Server) Addr() string { return s.ln.Addr().String() }

// URL is the page's address with the token: open it once, the page keeps a
// cookie. It carries the token, so print it only to the human.
func (s *Server) URL() string {
	u := url.URL{Scheme: "http", Host: s.Addr(), Path: "/"}
	if s.cfg.Token != "" {
		u.RawQuery = url.Values{"token": {s.cfg.Token}}.Encode()
	}
	return u.String()
}

// Close stops listening, ends every websocket and waits for their handlers.
// Calling it again returns the first result.
func (s *Server) Close() error {
	s.closeOnce.Do(func() { s.closeErr = s.close() })
	return s.closeErr
}

func (s *Server) close() error {
	s.cancel()
	ctx, stop := context.WithTimeout(context.Background(), 5*time.Second)
	defer stop()
	err := s.http.Shutdown(ctx)
	s.wg.Wait()
	if serr := <-s.done; !errors.Is(serr, http.ErrServerClosed) && err == nil {
		err = serr
	}
	return err
}

func (s *Server) routes() http.Handler {
	mux := http.NewServeMux()
	assets, _ := fs.Sub(webFS, "web")
	mux.Handle("GET /assets/", http.StripPrefix("/assets/", http.FileServerFS(assets)))
	mux.HandleFunc("GET /{$}", s.page)
	mux.HandleFunc("GET /api/state", s.authed(s.state))
	mux.HandleFunc("GET /api/events", s.authed(s.events))
	mux.HandleFunc("GET /api/task", s.authed(s.taskDetail))
	mux.HandleFunc("GET /api/timeline", s.authed(s.timeline))
	s.actions(mux)
	return securityHeaders(mux)
}

// securityHeaders keeps the page from being framed or sniffed and forbids
// inline and foreign scripts (agent text can never become script).
func securityHeaders(h http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Security-Policy", "default-src 'self'; connect-src 'self'; img-src 'self'; frame-ancestors 'none'")
		w.Header().Set("X-Content-Type-Options", "nosniff")
		w.Header().Set("Referrer-Policy", "no-referrer")
		h.ServeHTTP(w, r)
	})
}

// isLoopback reports whether addr's host only accepts local connections.
func isLoopback(addr string) (bool, error) {
	host, _, err := net.SplitHostPort(addr)
	if err != nil {
		return false, fmt.Errorf("dashboard: bad address %q: %w", addr, err)
	}
	if host == "localhost" {
		return true, nil
	}
	ip := net.ParseIP(host)
	return ip != nil && ip.IsLoopback(), nil
}

package dashboard

import (
	"crypto/subtle"
	"net/http"
	"net/url"
	"strings"

	"github.com/plasmodium/pm/internal/store"
)

// humanActor is who every dashboard action runs as.
var humanActor = store.Human

// cookieName holds the token in the browser after the page is opened with it.
const cookieName = "pm_token"

// csrfHeader must be present on a cookie-authenticated POST: a cross-site
// form cannot set it, and a cross-site fetch that sets it needs a CORS
// preflight this server never grants.
const csrfHeader = "X-PM-CSRF"

// authKind is how a request proved it has the token.
type authKind int

const (
	authNone authKind = iota
	authBearer
	authCookie
	authOpen // the server runs without a token (loopback only)
)

// authOf checks the request's credentials.
func (s *Server) authOf(r *http.Request) authKind {
	if s.cfg.Token == "" {
		return authOpen
	}
	if t, ok := strings.CutPrefix(r.Header.Get("Authorization"), "Bearer "); ok && s.tokenIs(t) {
		return authBearer
	}
	if c, err := r.Cookie(cookieName); err == nil && s.tokenIs(c.Value) {
		return authCookie
	}
	return authNone
}

func (s *Server) tokenIs(t string) bool {
	return subtle.ConstantTimeCompare([]byte(t), []byte(s.cfg.Token)) == 1
}

// authed refuses requests without the token.
func (s *Server) authed(h http.HandlerFunc) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		if s.authOf(r) == authNone {
			writeError(w, http.StatusUnauthorized, "missing or wrong token: open the URL pm dashboard printed, or send Authorization: Bearer TOKEN")
			return
		}
		h(w, r)
	}
}

// sameOrigin reports whether the request's Origin (when a browser sent one)
// is this server.
func sameOrigin(r *http.Request) bool {
	o := r.Header.Get("Origin")
	if o == "" {
		return true
	}
	u, err := url.Parse(o)
	return err == nil && strings.EqualFold(u.Host, r.Host)
}

// writeGuard refuses a write that a browser could have been tricked into
// sending: a cookie-authenticated POST needs the CSRF header, and any POST
// from a browser needs a same-origin Origin.
func (s *Server) writeGuard(r *http.Request) (int, string) {
	kind := s.authOf(r)
	switch {
	case kind == authNone:
		return http.StatusUnauthorized, "missing or wrong token"
	case !sameOrigin(r):
		return http.StatusForbidden, "cross-origin request refused"
	case kind != authBearer && r.Header.Get(csrfHeader) == "":
		return http.StatusForbidden, "missing " + csrfHeader + " header"
	}
	return 0, ""
}

// page serves the single page; opened with ?token= it stores the token in a
// cookie and redirects to itself without it, so the token leaves the
// address bar and history.
func (s *Server) page(w http.ResponseWriter, r *http.Request) {
	if t := r.URL.Query().Get("token"); t != "" {
		if !s.tokenIs(t) {
			writeError(w, http.StatusUnauthorized, "wrong token")
			return
		}
		http.SetCookie(w, &http.Cookie{Name: cookieName, Value: t, Path: "/", HttpOnly: true, SameSite: http.SameSiteStrictMode})
		http.Redirect(w, r, "/", http.StatusSeeOther)
		return
	}
	w.Header().Set("Cache-Control", "no-store")
	http.ServeFileFS(w, r, webFS, "web/index.html")
}

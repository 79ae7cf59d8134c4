package console

import (
	"crypto/subtle"
	"net"
	"net/http"
	"strings"
	"time"

	"github.com/fabric-runtime/fabric/adapterkit/harnessui"
)

// CookieName is the session cookie.
const CookieName = "fabric_console"

// maxSessions bounds the sessions kept (the oldest goes first).
const maxSessions = 64

// guard refuses what does not come from this machine's console origin:
// a non-loopback peer (unless the console was told to listen elsewhere),
// a Host that is not the console's address (DNS rebinding), an Origin
// that is not the console's own (another site's page), and any request
// without the token or a session.
func (c *Console) guard(public bool, h http.HandlerFunc) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		setHeaders(w)
		if !c.opts.AllowNonLoopback {
			host, _, _ := net.SplitHostPort(r.RemoteAddr)
			if ip := net.ParseIP(host); ip == nil || !ip.IsLoopback() {
				refuse(w, r, http.StatusForbidden, "not_loopback", "the console answers loopback peers only")
				return
			}
		}
		if !c.hosts[strings.ToLower(r.Host)] {
			refuse(w, r, http.StatusForbidden, "bad_host", "the request's Host is not the console's address")
			return
		}
		origin := r.Header.Get("Origin")
		if origin != "" && origin != c.origin && !c.hosts[strings.TrimPrefix(origin, "http://")] {
			refuse(w, r, http.StatusForbidden, "bad_origin", "the request comes from another origin than the console's")
			return
		}
		bearer := c.bearerOK(r)
		if !bearer && r.Method != http.MethodGet && r.Method != http.MethodHead && origin == "" {
			// A cookie-carrying state change must say where it comes from.
			refuse(w, r, http.StatusForbidden, "bad_origin", "a request that changes something must carry its Origin or the token")
			return
		}
		if public || bearer || c.sessionOK(r) {
			h(w, r)
			return
		}
		if r.Method == http.MethodGet && !strings.HasPrefix(r.URL.Path, "/api/") {
			// A page: the sign-in page, which takes the token from the
			// URL fragment.
			c.pages.render(w, r, http.StatusUnauthorized, "signin", nil)
			return
		}
		w.Header().Set("WWW-Authenticate", `Bearer realm="fabric-console"`)
		refuse(w, r, http.StatusUnauthorized, "unauthorized", "sign in: present the console token as Authorization: Bearer, or open the URL fabric deploy console prints")
	}
}

func setHeaders(w http.ResponseWriter) {
	h := w.Header()
	h.Set("Content-Security-Policy", "default-src 'none'; script-src 'self'; style-src 'self'; img-src 'self' data:; connect-src 'self'; form-action 'self'; frame-ancestors 'none'; base-uri 'none'")
	h.Set("X-Content-Type-Options", "nosniff")
	h.Set("X-Frame-Options", "DENY")
	h.Set("Referrer-Policy", "no-referrer")
	h.Set("Cache-Control", "no-store")
	h.Set("Cross-Origin-Resource-Policy", "same-origin")
}

// bearerOK reports whether r presents the console token.
func (c *Console) bearerOK(r *http.Request) bool {
	v := r.Header.Get("Authorization")
	tok, ok := strings.CutPrefix(v, "Bearer ")
	return ok && subtle.ConstantTimeCompare([]byte(strings.TrimSpace(tok)), []byte(c.token)) == 1
}

func (c *Console) sessionOK(r *http.Request) bool {
	ck, err := r.Cookie(CookieName)
	if err != nil || ck.Value == "" {
		return false
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	for s := range c.sessions {
		if subtle.ConstantTimeCompare([]byte(s), []byte(ck.Value)) == 1 {
			return true
		}
	}
	return false
}

// signIn exchanges the token (Authorization: Bearer) for a session
// cookie: HttpOnly, SameSite=Strict, for this console's path only, gone
// when the console stops.
func (c *Console) signIn(w http.ResponseWriter, r *http.Request) {
	if r.Method != http.MethodPost {
		refuse(w, r, http.StatusMethodNotAllowed, "method_not_allowed", "POST the token as Authorization: Bearer")
		return
	}
	if !c.bearerOK(r) {
		w.Header().Set("WWW-Authenticate", `Bearer realm="fabric-console"`)
		refuse(w, r, http.StatusUnauthorized, "unauthorized", "the token is not this console's (it changes at every start of the supervisor: run fabric deploy console again)")
		return
	}
	sess, err := newSecret("fabs_")
	if err != nil {
		refuse(w, r, http.StatusInternalServerError, "internal", err.Error())
		return
	}
	harnessui.RecordForAudit(sess)
	c.mu.Lock()
	if len(c.sessions) >= maxSessions {
		var oldest string
		var at time.Time
		for s, t := range c.sessions {
			if oldest == "" || t.Before(at) {
				oldest, at = s, t
			}
		}
		delete(c.sessions, oldest)
	}
	c.sessions[sess] = time.Now()
	c.mu.Unlock()
	http.SetCookie(w, &http.Cookie{Name: CookieName, Value: sess, Path: "/", HttpOnly: true, SameSite: http.SameSiteStrictMode})
	w.WriteHeader(http.StatusNoContent)
}

// signOut ends the request's session.
func (c *Console) signOut(w http.ResponseWriter, r *http.Request) {
	if ck, err := r.Cookie(CookieName); err == nil {
		c.mu.Lock()
		delete(c.sessions, ck.Value)
		c.mu.Unlock()
	}
	http.SetCookie(w, &http.Cookie{Name: CookieName, Value: "", Path: "/", MaxAge: -1, HttpOnly: true, SameSite: http.SameSiteStrictMode})
	w.WriteHeader(http.StatusNoContent)
}

// refuse answers an error as JSON, for scripts and the page alike.
func refuse(w http.ResponseWriter, _ *http.Request, status int, code, msg string) {
	writeJSON(w, status, map[string]any{"error": map[string]string{"code": code, "message": msg}})
}

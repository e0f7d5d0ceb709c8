package console

import (
	"fmt"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"time"

	"github.com/switchboard-mcp/switchboard/gateway"
)

// Under a gateway (Options.Login) the browser cannot send the gateway's
// Authorization header, and a key must never be typed into an address: the
// credential is posted once to the login page, from the console's own
// origin, and the session's HttpOnly SameSite=Strict cookie stands for it.

// loginPage is the login page's data: where to go once signed in, and
// why nobody can sign in now (Options.SignInClosed; "" shows the form).
type loginPage struct {
	Next, Closed string
}

// LoginIdle ends a session signed in with a gateway credential
// (Options.Login) that has had no request for this long: a cookie left in
// a browser, or copied from it, does not stand for the credential for as
// long as the gateway runs. (A page that reloads itself keeps its session.)
const LoginIdle = 12 * time.Hour

// MaxLoginSessions bounds the sessions one principal holds at once under
// Options.Login: a new sign-in past it ends that principal's session
// unused longest, so that signing in in a loop cannot grow the console's
// memory.
const MaxLoginSessions = 32

// pruneLogins ends, under c.mu, the sessions unused for longer than
// LoginIdle, and the unused longest of principal's past
// MaxLoginSessions-1, to make room for one more of principal's.
func (c *Console) pruneLogins(principal string) {
	now := c.o.Now()
	var mine []string
	for id, s := range c.sessions {
		switch {
		case now.Sub(s.seen) > LoginIdle:
			delete(c.sessions, id)
		case s.principal == principal:
			mine = append(mine, id)
		}
	}
	for len(mine) >= MaxLoginSessions {
		oldest := 0
		for i, id := range mine {
			if c.sessions[id].seen.Before(c.sessions[mine[oldest]].seen) {
				oldest = i
			}
		}
		delete(c.sessions, mine[oldest])
		mine = append(mine[:oldest], mine[oldest+1:]...)
	}
}

// loginSession finds the session of a request under Options.Login: its
// cookie's, if the credential behind it is still accepted (a revoked key
// or an expired token ends the session at its next request).
func (c *Console) loginSession(w http.ResponseWriter, r *http.Request) (*session, bool) {
	if ck, err := r.Cookie(cookieName); err == nil {
		c.mu.Lock()
		s := c.sessions[ck.Value]
		var idle *session
		if s != nil && c.o.Now().Sub(s.seen) > LoginIdle {
			delete(c.sessions, ck.Value)
			idle, s = s, nil
		}
		c.mu.Unlock()
		if idle != nil {
			c.audit(r, idle, "session", "", "ended: unused for longer than "+LoginIdle.String())
		}
		if s != nil {
			v, err := c.o.Login(r.Context(), s.credential)
			if err == nil && v != nil && v.Name == s.principal {
				c.mu.Lock()
				s.seen = c.o.Now()
				now := *s
				c.mu.Unlock()
				now.viewer = v // the rules and roles as they are now
				return &now, true
			}
			c.mu.Lock()
			delete(c.sessions, ck.Value)
			c.mu.Unlock()
			c.audit(r, s, "session", "", "ended: its credential is no longer accepted")
		}
	}
	if r.Method == http.MethodGet || r.Method == http.MethodHead {
		// Back to this page once signed in (a question's link).
		http.Redirect(w, r, c.o.BasePath+"/login?next="+url.QueryEscape(r.URL.RequestURI()), http.StatusSeeOther)
		return nil, false
	}
	http.Error(w, "console: not authenticated: sign in at "+c.o.BasePath+"/login", http.StatusUnauthorized)
	return nil, false
}

// login shows the login form (GET) or takes the credential posted to it
// (POST, from the console's own origin only: no other site can sign a
// browser in to a session of its choosing).
func (c *Console) login(w http.ResponseWriter, r *http.Request) {
	anon := &session{principal: "(not signed in)"}
	closed := ""
	if c.o.SignInClosed != nil {
		closed = c.o.SignInClosed()
	}
	show := func(status int, msg string) {
		w.Header().Set("Content-Type", "text/html; charset=utf-8")
		w.WriteHeader(status)
		_ = c.execute(w, "login.html", page{Title: "Sign in", Base: c.o.BasePath, Message: msg, Data: loginPage{Next: c.next(r), Closed: closed}})
	}
	switch r.Method {
	case http.MethodGet, http.MethodHead:
		show(http.StatusOK, "")
		return
	case http.MethodPost:
	default:
		http.Error(w, "console: GET or POST", http.StatusMethodNotAllowed)
		return
	}
	if why := foreignOrigin(r); why != "" {
		c.audit(r, anon, "session", "", "refused: "+why)
		http.Error(w, "console: sign-in refused: "+why, http.StatusForbidden)
		return
	}
	if err := r.ParseForm(); err != nil {
		show(http.StatusBadRequest, "The form could not be read: "+err.Error())
		return
	}
	if closed != "" {
		c.audit(r, anon, "session", "", "refused: nobody can sign in to this gateway's console")
		show(http.StatusForbidden, "")
		return
	}
	if f := c.o.Failures; f != nil {
		if wait := f.FailureWait(r); wait > 0 {
			secs := gateway.RetryAfterSeconds(wait)
			c.audit(r, anon, "session", "", "refused: too many credentials from this address were not accepted")
			w.Header().Set("Retry-After", strconv.Itoa(secs))
			show(http.StatusTooManyRequests, fmt.Sprintf("Too many keys or tokens from your address were not accepted lately: try again in %d s.", secs))
			return
		}
	}
	v, err := c.o.Login(r.Context(), r.PostForm.Get("key"))
	if err != nil || v == nil {
		if f := c.o.Failures; f != nil {
			if err == nil {
				err = gateway.ErrUnauthorized
			}
			f.Failed(r, err)
		}
		c.audit(r, anon, "session", "", "refused: the credential was not accepted")
		show(http.StatusUnauthorized, "That key or token is not accepted by this gateway.")
		return
	}
	s := c.newSession(w, r, v, r.PostForm.Get("key"))
	role := "member"
	if v.Admin {
		role = "admin"
	}
	c.audit(r, s, "session", "", "opened with a gateway credential ("+role+")")
	http.Redirect(w, r, c.next(r), http.StatusSeeOther)
}

// next is where a sign-in goes on to: the console page it was asked for
// ("next"), never elsewhere; else the console's first page.
func (c *Console) next(r *http.Request) string {
	n := r.FormValue("next")
	if u, err := url.Parse(n); err == nil && u.Scheme == "" && u.Host == "" && !strings.HasPrefix(n, "//") &&
		strings.HasPrefix(u.Path, c.o.BasePath+"/") && !strings.Contains(u.Path, "..") && u.Path != c.o.BasePath+"/login" {
		return n
	}
	return c.o.BasePath + "/"
}

// logout ends the session.
func (c *Console) logout(w http.ResponseWriter, r *http.Request) {
	if ck, err := r.Cookie(cookieName); err == nil {
		c.mu.Lock()
		delete(c.sessions, ck.Value)
		c.mu.Unlock()
	}
	path := c.o.BasePath
	if path == "" {
		path = "/"
	}
	http.SetCookie(w, &http.Cookie{Name: cookieName, Value: "", Path: path, MaxAge: -1, HttpOnly: true, SameSite: http.SameSiteStrictMode, Secure: r.TLS != nil})
	c.audit(r, sessionOf(r), "session", "", "signed out")
	to := c.o.BasePath + "/login"
	if c.o.Login == nil {
		to = c.o.BasePath + "/?" + c.msgQuery("Signed out: open the address `switchboard ui` printed to sign in again.")
	}
	http.Redirect(w, r, to, http.StatusSeeOther)
}

// adminOnly refuses h to a viewer who is not an admin (a gateway's
// member): what runs and what may be called are the admins' to change.
func (c *Console) adminOnly(h http.HandlerFunc) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		if v := sessionOf(r).viewer; !v.Admin {
			why := fmt.Sprintf("%s is not an admin of this gateway: only its admins change servers, rules and pinned tools", v.Name)
			if r.Method == http.MethodGet {
				c.render(w, r, http.StatusForbidden, "message.html", page{Title: "Not yours to see", Message: why + "."})
				return
			}
			c.fail(w, r, http.StatusForbidden, r.URL.Path, r.PostForm.Get("server")+r.PostForm.Get("rule")+r.PostForm.Get("tool"), why)
			return
		}
		h(w, r)
	}
}

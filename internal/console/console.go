// Package console is Switchboard's console in the browser: the servers
// and their approvals, the permission rules, the tools and a playground,
// the calls made from it, and the questions waiting for an answer. It is
// an [http.Handler] built from a front door ([Front], which a
// *switchboard.Switchboard satisfies) and [Options]; `switchboard ui`
// serves it on loopback behind a one-time token, and `serve --http` mounts
// it at /ui behind the gateway's own keys or access tokens (Options.Login).
//
// The console guards itself (docs/security.md, "The console's own
// safety"): every request is authenticated (token exchanged for an
// HttpOnly SameSite=Strict cookie, or a gateway credential posted once to
// its login page: Options.Login), its Host must be one
// of Options.Hosts (DNS rebinding), every change is a POST whose Origin is
// the console's own and whose form carries the session's CSRF token, the
// pages run no script (Content-Security-Policy script-src 'self', and none
// is served), no secret value is rendered, and every change is written to
// the audit log. The root package never imports it: the library gains no
// dependency from it.
package console

import (
	"context"
	"crypto/subtle"
	"embed"
	"encoding/json"
	"fmt"
	"html/template"
	"io"
	"net/http"
	"net/url"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/switchboard-mcp/switchboard"
	"github.com/switchboard-mcp/switchboard/config"
	"github.com/switchboard-mcp/switchboard/gateway"
	"github.com/switchboard-mcp/switchboard/host"
	"github.com/switchboard-mcp/switchboard/policy"
)

// Front is what the console reads and changes: a *switchboard.Switchboard.
type Front interface {
	Config() *config.Resolved
	Status() []host.ServerStatus
	Policy() *policy.Policy
	Trust() *switchboard.LaunchTrust
	Host() *host.Host
	Call(ctx context.Context, name string, args any) (*switchboard.Result, error)
	Reload() (host.ApplyResult, error)
	ToolChanges() []host.ToolChange
	AcceptChange(c host.ToolChange) error
}

// Options configure [New].
type Options struct {
	// Token is the secret of the URL `switchboard ui` prints: the first
	// visit with ?token=Token gets a session cookie, whose viewer is an
	// admin, and uses the token up (NewToken makes another).
	// Ignored when Login is set.
	Token string
	// Login, if set, replaces the token (a gateway's keys or access
	// tokens): the console serves a login page where the credential is
	// posted once, and Login says whose it is. The session's cookie
	// stands for it, and every request calls Login again with it, so that
	// a revoked key or an expired token ends the session. An error refuses
	// the credential.
	Login func(ctx context.Context, credential string) (*Viewer, error)
	// SignInClosed, if set with Login, says why nobody can sign in now
	// (a gateway that asks for no credential): a non-empty answer is shown
	// on the login page in place of its form, and a credential posted
	// meanwhile is refused with it. Asked on every visit, so that it can
	// follow a reload of the gateway's auth file.
	SignInClosed func() string
	// Failures, if set with Login, limits the credentials one client
	// address may have refused at the login page: an address that had too
	// many refused lately gets 429 without its credential being checked
	// (a *gateway.Auth: the gateway's own budget, AuthOptions.FailuresPerMinute).
	Failures FailureLimit
	// Hosts are the Host headers the console answers to ("127.0.0.1:PORT",
	// "localhost:PORT"); any other is refused (DNS rebinding). Required
	// unless Login is set (a gateway answering to many names).
	Hosts []string
	// BasePath is where the console is mounted ("" or "/ui").
	BasePath string
	// Asks is the registry of questions the console answers (the run's
	// Prompter); nil shows none.
	Asks *Asks
	// Audit gets one JSON line per change made in the console. Required.
	Audit io.Writer
	// Home is the Switchboard directory: rules are written to its
	// settings.json, local to the workspace of the Front's configuration.
	Home string
	// Environ is the user's environment, for the review's list of the
	// variables a server gets; nil: none listed.
	Environ func() []string
	// Now is the clock; nil: time.Now.
	Now func() time.Time
	// CallTimeout bounds a playground call, its question included; 0:
	// two minutes.
	CallTimeout time.Duration
	// GatewayCalls, if set, returns a gateway's recent calls, newest
	// first (its audit log's last lines): the Calls page lists them, a
	// member's own only.
	GatewayCalls func() []gateway.AuditEntry
	// Figures, if set, returns a gateway's call figures per server (its
	// metrics): the Calls page draws them.
	Figures func() []gateway.ServerFigures
}

// FailureLimit limits, per client address, the credentials refused at the
// login page (Options.Failures): a *gateway.Auth.
type FailureLimit interface {
	// FailureWait returns how long r's address must wait before it may
	// present a credential again; 0 when it may now.
	FailureWait(r *http.Request) time.Duration
	// Failed counts err, the refusal of the credential r presented.
	Failed(r *http.Request, err error)
}

// Viewer is who is looking: what the console shows them and lets them
// change.
type Viewer struct {
	// Name is the principal's name (the audit log's "principal").
	Name string
	// Admin may change what runs and what may be called: approve, pause,
	// resume and retry servers, add and remove rules, accept tool
	// changes, call tools from the playground. Others see only the
	// servers and tools Sees lets them, their own calls and questions.
	Admin bool
	// Sees reports whether the viewer's rules let it see a tool (not
	// denied to it); nil: every tool.
	Sees func(policy.Request) bool
}

func (v *Viewer) sees(req policy.Request) bool { return v.Admin || v.Sees == nil || v.Sees(req) }

// Console is the handler.
type Console struct {
	front Front
	o     Options
	mux   *http.ServeMux
	// pages are the page templates, parsed at the first page shown: a
	// gateway mounts a console that most never open (~0.5 ms and ~190 KB
	// at each start). TestPagesParse parses them.
	pages func() (*template.Template, error)

	// msgKey signs the messages the console puts in its own addresses
	// (?msg=…&sig=…), so that a link of somebody else's cannot make a page
	// say what they wrote (msgQuery).
	msgKey []byte

	mu       sync.Mutex
	token    string // the link's token until its first use ("": used)
	sessions map[string]*session
	calls    []*callRecord
	auditMu  sync.Mutex
}

type session struct {
	csrf      string
	principal string
	viewer    *Viewer
	// credential is what was posted to the login page (Options.Login),
	// checked again on every request.
	credential string
	seen       time.Time // its last request (under Console.mu)
}

// Watching reports whether somebody who could answer a question of
// principal (an admin, or that principal) has used the console within
// the last d: a gateway puts a question there only then, rather than
// holding a call for an answer nobody is there to give.
func (c *Console) Watching(principal string, d time.Duration) bool {
	since := c.o.Now().Add(-d)
	c.mu.Lock()
	defer c.mu.Unlock()
	for _, s := range c.sessions {
		if s.seen.After(since) && s.viewer != nil && (s.viewer.Admin || s.principal == principal) {
			return true
		}
	}
	return false
}

//go:embed assets
var assets embed.FS

// New returns the console of front.
func New(front Front, o Options) (*Console, error) {
	if len(o.Hosts) == 0 && o.Login == nil {
		return nil, fmt.Errorf("console: Options.Hosts is required")
	}
	if o.Audit == nil {
		return nil, fmt.Errorf("console: Options.Audit is required: every change is audited")
	}
	if o.Login == nil && len(o.Token) < 16 {
		return nil, fmt.Errorf("console: Options.Token must be a long random secret")
	}
	if o.Now == nil {
		o.Now = time.Now
	}
	if o.CallTimeout == 0 {
		o.CallTimeout = 2 * time.Minute
	}
	o.BasePath = strings.TrimSuffix(o.BasePath, "/")
	c := &Console{front: front, o: o, token: o.Token, sessions: map[string]*session{}, msgKey: []byte(newSecret())}
	c.pages = sync.OnceValues(func() (*template.Template, error) { return parsePages(o.BasePath) })
	m := http.NewServeMux()
	m.HandleFunc("GET /{$}", c.servers)
	m.HandleFunc("GET /servers/review", c.adminOnly(c.reviewPage))
	m.HandleFunc("POST /servers/approve", c.adminOnly(c.approve))
	m.HandleFunc("POST /servers/action", c.adminOnly(c.serverAction))
	m.HandleFunc("GET /permissions", c.adminOnly(c.permissions))
	m.HandleFunc("POST /permissions/add", c.adminOnly(c.addRule))
	m.HandleFunc("POST /permissions/remove", c.adminOnly(c.removeRule))
	m.HandleFunc("GET /tools", c.tools)
	m.HandleFunc("GET /playground", c.playground)
	m.HandleFunc("POST /call", c.adminOnly(c.call))
	m.HandleFunc("GET /changes", c.adminOnly(c.toolChanges))
	m.HandleFunc("POST /changes/accept", c.adminOnly(c.acceptTool))
	m.HandleFunc("POST /changes/accept-prompt", c.adminOnly(c.acceptPrompt))
	m.HandleFunc("POST /logout", c.logout)
	m.HandleFunc("GET /calls", c.callsPage)
	m.HandleFunc("GET /asks", c.asksPage)
	m.HandleFunc("POST /asks/answer", c.answer)
	m.HandleFunc("GET /console.css", func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/css; charset=utf-8")
		http.ServeFileFS(w, r, assets, "assets/console.css")
	})
	c.mux = m
	return c, nil
}

// ServeHTTP checks the request (Host, authentication, Origin and CSRF
// token of a change) and serves it.
func (c *Console) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	h := w.Header()
	h.Set("Content-Security-Policy", "default-src 'none'; script-src 'self'; style-src 'self'; img-src 'self'; form-action 'self'; frame-ancestors 'none'; base-uri 'none'")
	h.Set("X-Content-Type-Options", "nosniff")
	h.Set("X-Frame-Options", "DENY")
	// same-origin, not no-referrer: under no-referrer a browser sends
	// "Origin: null" with the console's own forms, which checkChange
	// must refuse.
	h.Set("Referrer-Policy", "same-origin")
	h.Set("Cache-Control", "no-store")
	if len(c.o.Hosts) > 0 && !slices.Contains(c.o.Hosts, strings.ToLower(r.Host)) {
		http.Error(w, "console: this Host is not the console's (a page of another site reached it through DNS rebinding?)", http.StatusMisdirectedRequest)
		return
	}
	path, under := strings.CutPrefix(r.URL.Path, c.o.BasePath)
	if !under || (path != "" && path[0] != '/') {
		// Not the console's address (its BasePath may be a secret one:
		// `switchboard ui`).
		http.NotFound(w, r)
		return
	}
	if path == "" {
		path = "/"
	}
	if c.o.Login != nil && path == "/login" {
		c.login(w, r)
		return
	}
	s, ok := c.authenticate(w, r)
	if !ok {
		return
	}
	if r.Method != http.MethodGet && r.Method != http.MethodHead {
		if why := c.checkChange(r, s); why != "" {
			http.Error(w, "console: change refused: "+why+"; nothing was changed", http.StatusForbidden)
			return
		}
	}
	r2 := r.Clone(context.WithValue(r.Context(), sessionKey{}, s))
	r2.URL.Path = path
	c.mux.ServeHTTP(w, r2)
}

type sessionKey struct{}

func sessionOf(r *http.Request) *session { return r.Context().Value(sessionKey{}).(*session) }

const cookieName = "switchboard_console"

// authenticate finds the request's session: Options.Auth's principal, or
// the cookie, or a visit with the token (which sets the cookie and drops
// the token from the address bar).
func (c *Console) authenticate(w http.ResponseWriter, r *http.Request) (*session, bool) {
	if c.o.Login != nil {
		return c.loginSession(w, r)
	}
	if ck, err := r.Cookie(cookieName); err == nil {
		c.mu.Lock()
		s := c.sessions[ck.Value]
		if s != nil {
			s.seen = c.o.Now()
		}
		c.mu.Unlock()
		if s != nil {
			return s, true
		}
	}
	if tok := r.URL.Query().Get("token"); tok != "" && r.Method == http.MethodGet && c.takeToken(tok) {
		s := c.newSession(w, r, &Viewer{Name: "local user", Admin: true}, "")
		c.audit(r, s, "session", "", "opened with the token")
		u := *r.URL
		q := u.Query()
		q.Del("token")
		u.RawQuery = q.Encode()
		http.Redirect(w, r, u.RequestURI(), http.StatusSeeOther)
		return nil, false
	}
	http.Error(w, "console: not authenticated: open the address `switchboard ui` printed; it opens the console once (press Enter in that terminal for a new one)", http.StatusUnauthorized)
	return nil, false
}

// takeToken reports whether tok is the link's token, and uses it up: the
// address printed opens one browser session, so a copy of it (a browser's
// history, a shared screen) opens nothing later.
func (c *Console) takeToken(tok string) bool {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.token == "" || subtle.ConstantTimeCompare([]byte(tok), []byte(c.token)) != 1 {
		return false
	}
	c.token = ""
	return true
}

// NewToken replaces the link's token with a new one-time one (for another
// browser; `switchboard ui` prints a new address when Enter is pressed)
// and returns it. The sessions already opened stay open.
func (c *Console) NewToken() string {
	t := newSecret()
	c.mu.Lock()
	c.token = t
	c.mu.Unlock()
	return t
}

// newSession opens a session for v and sets its cookie on w: Secure when r
// came over TLS, so that the browser never sends it over plain HTTP. (No
// forwarded header is trusted: behind a proxy that ends TLS, the proxy
// marks it Secure; docs/console.md.)
func (c *Console) newSession(w http.ResponseWriter, r *http.Request, v *Viewer, credential string) *session {
	id := newSecret()
	s := &session{csrf: newSecret(), principal: v.Name, viewer: v, credential: credential, seen: c.o.Now()}
	c.mu.Lock()
	if c.o.Login != nil {
		c.pruneLogins(v.Name)
	}
	c.sessions[id] = s
	c.mu.Unlock()
	path := c.o.BasePath
	if path == "" {
		path = "/"
	}
	http.SetCookie(w, &http.Cookie{Name: cookieName, Value: id, Path: path, HttpOnly: true, SameSite: http.SameSiteStrictMode, Secure: r.TLS != nil})
	return s
}

// checkChange says why a change is refused: an Origin that is not the
// console's own (a cross-site form), or a missing or wrong CSRF token.
func (c *Console) checkChange(r *http.Request, s *session) string {
	if why := foreignOrigin(r); why != "" {
		return why
	}
	if err := r.ParseForm(); err != nil {
		return "the form could not be read: " + err.Error()
	}
	if subtle.ConstantTimeCompare([]byte(r.PostForm.Get("csrf")), []byte(s.csrf)) != 1 {
		return "the form's CSRF token is not this session's (reload the page)"
	}
	return ""
}

// foreignOrigin says why r's Origin is not the console's own, or "".
func foreignOrigin(r *http.Request) string {
	origin := r.Header.Get("Origin")
	if origin == "" {
		return "the request has no Origin header"
	}
	u, err := url.Parse(origin)
	if err != nil || !strings.EqualFold(u.Host, r.Host) || (u.Scheme != "http" && u.Scheme != "https") {
		return fmt.Sprintf("it comes from another site (Origin %q)", origin)
	}
	return ""
}

// audit writes one change as a JSON line.
func (c *Console) audit(r *http.Request, s *session, action, target, outcome string) {
	e := struct {
		Time      time.Time `json:"time"`
		Principal string    `json:"principal"`
		Remote    string    `json:"remote"`
		Action    string    `json:"action"`
		Target    string    `json:"target,omitempty"`
		Outcome   string    `json:"outcome"`
	}{c.o.Now().UTC(), s.principal, r.RemoteAddr, action, target, outcome}
	b, _ := json.Marshal(e)
	c.auditMu.Lock()
	defer c.auditMu.Unlock()
	_, _ = c.o.Audit.Write(append(b, '\n'))
}

// parsePages parses the page templates, for a console at base.
func parsePages(base string) (*template.Template, error) {
	return template.New("").Funcs(template.FuncMap{"base": func() string { return base }}).ParseFS(assets, "assets/*.html")
}

// execute executes the page template name into w.
func (c *Console) execute(w io.Writer, name string, data any) error {
	t, err := c.pages()
	if err != nil {
		return err
	}
	return t.ExecuteTemplate(w, name, data)
}

package console

import (
	"context"
	"crypto/hmac"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/switchboard-mcp/switchboard"
	"github.com/switchboard-mcp/switchboard/config"
	"github.com/switchboard-mcp/switchboard/host"
	"github.com/switchboard-mcp/switchboard/internal/redact"
	"github.com/switchboard-mcp/switchboard/internal/review"
	"github.com/switchboard-mcp/switchboard/internal/termsafe"
	"github.com/switchboard-mcp/switchboard/policy"
	"github.com/switchboard-mcp/switchboard/toolsurface"
	"github.com/switchboard-mcp/switchboard/trust"
)

// page is what every template gets.
type page struct {
	Title   string
	Nav     string
	CSRF    string
	Base    string
	Message string
	Refresh bool
	// Admin and Who are the viewer's role and name.
	Admin bool
	Who   string
	Asks  []Question
	Data  any
}

func (c *Console) render(w http.ResponseWriter, r *http.Request, status int, name string, p page) {
	s := sessionOf(r)
	p.CSRF, p.Admin, p.Who = s.csrf, s.viewer.Admin, s.viewer.Name
	p.Base = c.o.BasePath
	if p.Message == "" {
		p.Message = c.queryMessage(r)
	}
	// A refusal may quote a server's words (its error to a call).
	p.Message = termsafe.Text(p.Message)
	if c.o.Asks != nil {
		p.Asks = c.questionsFor(s.viewer)
	}
	w.Header().Set("Content-Type", "text/html; charset=utf-8")
	w.WriteHeader(status)
	if err := c.execute(w, name, p); err != nil {
		fmt.Fprintf(w, "<p>console: %s</p>", template_escape(err.Error()))
	}
}

func template_escape(s string) string {
	return strings.NewReplacer("<", "&lt;", ">", "&gt;", "&", "&amp;").Replace(s)
}

// fail shows why a change was refused; nothing was changed.
func (c *Console) fail(w http.ResponseWriter, r *http.Request, status int, action, target, why string) {
	back := backTo[r.Pattern]
	if back.Path == "" {
		back = backTo["POST /servers/action"]
	}
	c.failBack(w, r, status, action, target, why, back)
}

// failBack is fail leading back to the page back names.
func (c *Console) failBack(w http.ResponseWriter, r *http.Request, status int, action, target, why string, back backLink) {
	c.audit(r, sessionOf(r), action, target, "refused: "+why)
	c.render(w, r, status, "message.html", page{Title: "Nothing changed", Message: why + " — nothing was changed.", Data: back})
}

// backLink is where a refusal leads back: a page's path under the
// console's base, and its name.
type backLink struct{ Path, Label string }

// backTo is the page each form is on, where its refusal leads back.
var backTo = map[string]backLink{
	"POST /servers/approve":    {"/", "Servers"},
	"POST /servers/action":     {"/", "Servers"},
	"POST /permissions/add":    {"/permissions", "Permissions"},
	"POST /permissions/remove": {"/permissions", "Permissions"},
	"POST /call":               {"/tools", "Tools & playground"},
	"POST /changes/accept":     {"/changes", "Tool changes"},
	"POST /asks/answer":        {"/asks", "Questions"},
}

// done goes back to a page saying what happened.
func (c *Console) done(w http.ResponseWriter, r *http.Request, to, msg string) {
	http.Redirect(w, r, c.o.BasePath+to+"?"+c.msgQuery(msg), http.StatusSeeOther)
}

// msgQuery is the query that makes a page show msg: the message and its
// signature, which only this console can make.
func (c *Console) msgQuery(msg string) string {
	return url.Values{"msg": {msg}, "sig": {c.msgSig(msg)}}.Encode()
}

func (c *Console) msgSig(msg string) string {
	m := hmac.New(sha256.New, c.msgKey)
	m.Write([]byte(msg))
	return hex.EncodeToString(m.Sum(nil))
}

// queryMessage is the message a page's address carries, when the console
// wrote it: a link of somebody else's with a message of their own (a
// "security notice" sending the reader elsewhere, carried through the
// sign-in's next=) shows nothing.
func (c *Console) queryMessage(r *http.Request) string {
	q := r.URL.Query()
	msg := q.Get("msg")
	if msg == "" || !hmac.Equal([]byte(q.Get("sig")), []byte(c.msgSig(msg))) {
		return ""
	}
	return msg
}

type serverView struct {
	host.ServerStatus
	Sandbox string
	// Pending: it waits for approval, and its row links its review.
	Pending bool
	// Next says when a server in error is tried again, in the words of
	// switchboard status ("; next try in 4s"); "" when none is due.
	Next string
	// ToolCount is "N (tokens)", or status's "-" for a server not
	// running (its count is not known) and "?" when its list failed.
	ToolCount string
	// Actions are the buttons its state makes sense of (serverActions).
	Actions []serverAction
}

// serverAction is one button of a server's row: its form value and its
// label.
type serverAction struct{ Value, Label string }

var (
	actRetry  = serverAction{"retry", "Retry"}
	actPause  = serverAction{"pause", "Pause"}
	actResume = serverAction{"resume", "Resume"}
)

// serverActions are the actions that do something in st's state: Resume
// a paused server; Pause one that runs or keeps trying (connected,
// connecting, resting with its circuit open, or in error with a next try
// due); Retry one that failed or is waiting to try again. A server held
// (needing approval), disabled or missing gets none: nothing here starts
// it.
func serverActions(st host.ServerStatus) []serverAction {
	trying := !st.NextTry.IsZero()
	switch st.State {
	case host.StatePaused:
		return []serverAction{actResume}
	case host.StateConnected:
		return []serverAction{actPause}
	case host.StateCircuitOpen:
		return []serverAction{actRetry, actPause}
	case host.StateConnecting:
		if trying { // lost its connection, waiting for the next reconnect
			return []serverAction{actRetry, actPause}
		}
		return []serverAction{actPause}
	case host.StateError:
		if trying {
			return []serverAction{actRetry, actPause}
		}
		return []serverAction{actRetry}
	}
	return nil
}

// toolCount is the tools column: "N (tokens)", or as status shows a
// count not known (ServerStatus.UnknownCount).
func toolCount(st host.ServerStatus) string {
	if s := st.UnknownCount(st.Tools); s != "" {
		return s
	}
	return fmt.Sprintf("%d (%d)", st.Tools, st.Tokens)
}

func (c *Console) servers(w http.ResponseWriter, r *http.Request) {
	cfg := c.front.Config()
	lt := c.front.Trust()
	pending := map[string]*config.ResolvedServer{}
	for _, rs := range lt.Pending(cfg) {
		pending[rs.Name] = rs
	}
	// Listing the tools fills the counts, as switchboard status does; a
	// server still starting is not waited for (the page reloads itself
	// until it is up).
	l := c.listTools(r.Context(), false)
	seen := c.visibleServers(sessionOf(r).viewer, l.tools)
	var views []serverView
	// The page reloads itself while a server is on its way (starting,
	// reconnecting, or up since the listing began and not counted yet),
	// so that an Approve, Resume or Retry shows how it ended without a
	// reload by hand; once every server has settled it stops.
	moving := false
	for _, st := range c.front.Status() {
		moving = moving || !st.State.Settled() || l.starting[st.Name]
		if seen != nil && !seen[st.Name] {
			continue
		}
		v := serverView{ServerStatus: st, Next: st.NextTryNote(c.o.Now()), ToolCount: toolCount(st), Actions: serverActions(st)}
		// The reason may quote the server (its stderr's last line, its
		// error): made visible, as status prints it.
		v.Reason = termsafe.Line(st.Reason)
		if l.starting[st.Name] && st.Tools == 0 {
			v.ToolCount = "-" // up since the listing began: counted at the next
		}
		if seen != nil {
			// What a member sees of a server: its name, state and tools;
			// how it runs is the admins' business.
			v.Command, v.File, v.StderrTail, v.ToolChanges = "", "", nil, nil
			views = append(views, v)
			continue
		}
		v.Command = termsafe.Line(redact.String(st.Command)) // already without secrets; a known token shape too
		v.File = termsafe.Line(st.File)
		v.StderrTail = redactLines(st.StderrTail)
		if rs := find(cfg, st.Name); rs != nil {
			// One reading of its sandbox (it stats the protected paths)
			// for the column and the review: the pending server is rs.
			sandbox, helper := c.sandboxPolicies(rs)
			v.Sandbox = review.SandboxWords(rs, sandbox, helper, nil)
		}
		// Its review is on a page of its own (reviewPage), which never
		// reloads itself under its reader; this page links it.
		v.Pending = pending[st.Name] != nil
		views = append(views, v)
	}
	// A server's stderr is opened by a link (?stderr=NAME), not a
	// <details>: the page's reloads keep it open, and show it growing.
	c.render(w, r, http.StatusOK, "servers.html", page{Title: "Servers", Nav: "servers", Refresh: moving, Data: struct {
		Servers []serverView
		Stderr  string
	}{views, r.URL.Query().Get("stderr")}})
}

// pendingNamed is the server called name among those of cfg waiting for
// approval, or nil.
func pendingNamed(lt *switchboard.LaunchTrust, cfg *config.Resolved, name string) *config.ResolvedServer {
	for _, p := range lt.Pending(cfg) {
		if p.Name == name {
			return p
		}
	}
	return nil
}

// reviewPage shows the review of a server waiting for approval, with its
// Approve and Not now. Unlike the servers page it never reloads itself:
// its reader must not lose their place while another server starts.
func (c *Console) reviewPage(w http.ResponseWriter, r *http.Request) {
	name := r.URL.Query().Get("server")
	lt := c.front.Trust()
	rs := pendingNamed(lt, c.front.Config(), name)
	if rs == nil {
		c.render(w, r, http.StatusNotFound, "message.html", page{Title: "No review", Nav: "servers",
			Message: fmt.Sprintf("%q is not waiting for approval (answered already, perhaps in another browser, or no longer configured).", name),
			Data:    backTo["POST /servers/approve"]})
		return
	}
	sandbox, helper := c.sandboxPolicies(rs)
	var env []string
	if c.o.Environ != nil {
		env = c.o.Environ()
	}
	d := review.Build(rs, lt.Verdict(rs), review.Options{Parent: env, Sandbox: sandbox, HelperSandbox: helper, RedactArgs: true})
	c.render(w, r, http.StatusOK, "review.html", page{Title: "Review of " + name, Nav: "servers", Data: struct {
		Name        string
		Review      *review.Doc
		Fingerprint string
		RedactNote  string
		PassedLabel string
		ExtraLabel  string
	}{name, &d, trust.Fingerprint(rs.Written), review.RedactedNote, review.PassedLabel, review.ExtraLabel}})
}

// visibleServers are the servers a member sees a tool of; nil for an
// admin, who sees every one.
func (c *Console) visibleServers(v *Viewer, tools []host.Tool) map[string]bool {
	if v.Admin {
		return nil
	}
	seen := map[string]bool{}
	for _, t := range tools {
		if t.Server != "" && v.sees(request(t)) {
			seen[t.Server] = true
		}
	}
	return seen
}

// redactLines are a server's stderr lines as status prints them: secrets
// redacted, and what a terminal would act on made visible.
func redactLines(l []string) []string {
	out := make([]string, len(l))
	for i, s := range l {
		out[i] = termsafe.Line(redact.String(s))
	}
	return out
}

func find(cfg *config.Resolved, name string) *config.ResolvedServer {
	for i := range cfg.Servers {
		if cfg.Servers[i].Name == name {
			return &cfg.Servers[i]
		}
	}
	return nil
}

// sandboxPolicies are what rs would be confined to: a stdio server's
// sandbox or a remote server's headersHelper's; nil where unconfined.
func (c *Console) sandboxPolicies(rs *config.ResolvedServer) (sandbox, helper *config.SandboxPolicy) {
	lt := c.front.Trust()
	ws := review.SandboxWorkspace(rs, lt.Workspace())
	if config.InferType(rs.Effective) == config.TypeStdio {
		return host.SandboxOf(rs, ws, lt.SandboxDefaults()), nil
	}
	return nil, host.HelperSandboxOf(rs, ws, lt.SandboxDefaults())
}

// approve answers a review: approve (stored, as `mcp approve` does), deny
// (held for this run) or revoke (an approval withdrawn).
func (c *Console) approve(w http.ResponseWriter, r *http.Request) {
	name, decision := r.PostForm.Get("server"), r.PostForm.Get("decision")
	lt := c.front.Trust()
	if decision == "revoke" {
		ok, err := lt.Store().Revoke(lt.Workspace(), name)
		switch {
		case err != nil:
			c.fail(w, r, http.StatusInternalServerError, "revoke", name, err.Error())
		case !ok:
			c.fail(w, r, http.StatusConflict, "revoke", name, fmt.Sprintf("%q has no approval to revoke", name))
		default:
			c.audit(r, sessionOf(r), "revoke", name, "revoked")
			c.done(w, r, "/", fmt.Sprintf("Approval of %q revoked. %s", name, review.RevokeNote))
		}
		return
	}
	rs := pendingNamed(lt, c.front.Config(), name)
	switch {
	case decision != "approve" && decision != "deny":
		c.fail(w, r, http.StatusBadRequest, "approve", name, "the decision must be approve, deny or revoke")
		return
	case rs == nil:
		c.fail(w, r, http.StatusConflict, decision, name, fmt.Sprintf("%q is not waiting for approval (answered already, perhaps in another browser, or no longer configured)", name))
		return
	case trust.Fingerprint(rs.Written) != r.PostForm.Get("fingerprint"):
		c.failBack(w, r, http.StatusConflict, decision, name, fmt.Sprintf("the definition of %q changed since this page showed it: read the review again", name),
			backLink{"/servers/review?" + url.Values{"server": {name}}.Encode(), "the review"})
		return
	}
	if decision == "deny" {
		lt.Deny(name)
		c.audit(r, sessionOf(r), "deny", name, "held for this run")
		c.done(w, r, "/", fmt.Sprintf("%q stays held for this run.", name))
		return
	}
	if err := lt.Approve(rs); err != nil {
		c.fail(w, r, http.StatusInternalServerError, "approve", name, "the approval could not be stored: "+err.Error())
		return
	}
	c.audit(r, sessionOf(r), "approve", name, "approved "+trust.Fingerprint(rs.Written))
	msg := fmt.Sprintf("%q approved; it is starting.", name)
	if err := c.front.Host().Retry(name); err != nil {
		msg = fmt.Sprintf("%q approved, but it did not start: %s", name, err)
	}
	c.done(w, r, "/", msg)
}

func (c *Console) serverAction(w http.ResponseWriter, r *http.Request) {
	name, action := r.PostForm.Get("server"), r.PostForm.Get("action")
	h := c.front.Host()
	var err error
	switch action {
	case "pause":
		err = h.Pause(name)
	case "resume":
		err = h.Resume(name)
	case "retry":
		err = h.Retry(name)
	default:
		c.fail(w, r, http.StatusBadRequest, action, name, "the action must be pause, resume or retry")
		return
	}
	if err != nil {
		c.fail(w, r, http.StatusConflict, action, name, err.Error())
		return
	}
	c.audit(r, sessionOf(r), action, name, "done")
	c.done(w, r, "/", fmt.Sprintf("%s %q: done.", action, name))
}

type ruleView struct {
	Text, List, Source, Problem string
	Removable                   bool
	// Matches are the listed tools the rule applies to (a rule with
	// argument conditions, to some of their calls).
	Matches []string
}

// request is the policy request of a call of t (no arguments).
func request(t host.Tool) policy.Request {
	req := policy.Request{Tool: t.Name, Server: t.Server, ToolName: t.Tool.Name}
	if a := t.Tool.Annotations; a != nil {
		req.Annotations = policy.Annotations{ReadOnlyHint: a.ReadOnlyHint, DestructiveHint: a.DestructiveHint != nil && *a.DestructiveHint}
	}
	return req
}

func (c *Console) permissions(w http.ResponseWriter, r *http.Request) {
	pol := c.front.Policy()
	probs := map[*policy.Rule]string{}
	for _, p := range pol.Problems(c.serverNames()) {
		if p.Rule != nil {
			probs[p.Rule] = p.Message
		}
	}
	tools, _ := c.toolList(r.Context())
	var rules []ruleView
	for _, ru := range pol.Rules() {
		v := ruleView{Text: ru.Text, List: string(ru.List), Source: ru.Source.String(), Problem: ru.Problem()}
		for _, t := range tools {
			if t.Server != "" && (ru.Matches(request(t)) || ru.Pattern().HasArgs() && ru.Pattern().MatchName(request(t))) {
				v.Matches = append(v.Matches, t.Name)
			}
		}
		for pr, m := range probs {
			if pr.Text == ru.Text && pr.List == ru.List && pr.Source == ru.Source {
				v.Problem = m
			}
		}
		v.Removable = ru.Source.Scope == policy.ScopeLocal || ru.Source.Scope == policy.ScopeUser
		rules = append(rules, v)
	}
	var why *policy.Decision
	// unlisted: no listed tool has the name asked about; like: the
	// listed tools whose own name it is (a newcomer's "echo").
	var unlisted bool
	var like []string
	tool := strings.TrimSpace(r.URL.Query().Get("tool"))
	if tool != "" {
		server, name, _ := toolsurface.ParseToolName(tool)
		req := policy.Request{Tool: tool, Server: server, ToolName: name}
		unlisted = true
		for _, t := range tools {
			if t.Name == tool {
				req = request(t) // the configured names and the tool's annotations
				unlisted = false
			} else if t.Tool != nil && t.Tool.Name == tool {
				like = append(like, t.Name)
			}
		}
		d := pol.Decide(req)
		why = &d
	}
	c.render(w, r, http.StatusOK, "permissions.html", page{Title: "Permissions", Nav: "permissions", Data: struct {
		Rules    []ruleView
		Tool     string
		Why      *policy.Decision
		Unlisted bool
		Like     []string
		Target   string
	}{rules, tool, why, unlisted, like, c.settingsFile()}})
}

func (c *Console) serverNames() []string {
	var names []string
	for _, rs := range c.front.Config().Servers {
		names = append(names, rs.Name)
	}
	return names
}

func (c *Console) settingsFile() string { return policy.UserSettingsPath(c.o.Home) }

// localPath is the object of the settings file the workspace's rules go
// in (the user settings' top level outside a workspace).
func (c *Console) localPath() []string {
	ws := c.front.Config().Workspace
	if ws == "" {
		return nil
	}
	keys, _ := config.LocalKeys(c.settingsFile(), ws)
	if len(keys) == 0 {
		keys = []string{config.ProjectKey(ws)}
	}
	return config.SettingsLocalPath(keys[0])
}

// WriteAllow adds rule to the workspace's local allow list (the "always"
// answer of a question): the same edit as `switchboard permissions allow`.
func (c *Console) WriteAllow(rule string) (string, error) {
	if _, _, err := config.SetPermissionRule(c.settingsFile(), c.localPath(), string(policy.Allow), rule); err != nil {
		return "", err
	}
	_, _ = c.front.Reload()
	return c.settingsFile(), nil
}

func (c *Console) addRule(w http.ResponseWriter, r *http.Request) {
	list, text := policy.Action(r.PostForm.Get("list")), strings.TrimSpace(r.PostForm.Get("rule"))
	if list != policy.Allow && list != policy.Ask && list != policy.Deny {
		c.fail(w, r, http.StatusBadRequest, "add rule", text, "the list must be allow, ask or deny")
		return
	}
	src := policy.Source{Scope: policy.ScopeLocal, File: c.settingsFile()}
	ru := policy.NewRule(list, text, src)
	if p := ru.Problem(); p != "" {
		c.fail(w, r, http.StatusBadRequest, "add rule", text, fmt.Sprintf("the rule %q would have no effect: %s", text, p))
		return
	}
	for _, p := range policy.New(ru).Problems(c.serverNames()) {
		c.fail(w, r, http.StatusBadRequest, "add rule", text, fmt.Sprintf("the rule %q would have no effect: %s", text, p.Message))
		return
	}
	moved, _, err := config.SetPermissionRule(c.settingsFile(), c.localPath(), string(list), text)
	if err != nil {
		c.fail(w, r, http.StatusInternalServerError, "add rule", text, err.Error())
		return
	}
	if _, err := c.front.Reload(); err != nil {
		c.audit(r, sessionOf(r), "add rule", text, "written, but the reload failed: "+err.Error())
	}
	c.audit(r, sessionOf(r), "add rule", string(list)+" "+text, "written to "+c.settingsFile())
	msg := fmt.Sprintf("%s %q written to %s.", list, text, c.settingsFile())
	if len(moved) > 0 {
		msg += " It left the " + strings.Join(moved, ", ") + " list."
	}
	c.done(w, r, "/permissions", msg)
}

func (c *Console) removeRule(w http.ResponseWriter, r *http.Request) {
	text := r.PostForm.Get("rule")
	removed, err := config.RemovePermissionRule(c.settingsFile(), c.localPath(), "", text)
	if err == nil && len(removed) == 0 {
		removed, err = config.RemovePermissionRule(c.settingsFile(), nil, "", text)
	}
	switch {
	case err != nil:
		c.fail(w, r, http.StatusInternalServerError, "remove rule", text, err.Error())
		return
	case len(removed) == 0:
		c.fail(w, r, http.StatusConflict, "remove rule", text, fmt.Sprintf("%q is not in your settings (removed already?)", text))
		return
	}
	_, _ = c.front.Reload()
	c.audit(r, sessionOf(r), "remove rule", text, "removed from "+strings.Join(removed, ", "))
	c.done(w, r, "/permissions", fmt.Sprintf("%q removed from %s.", text, strings.Join(removed, ", ")))
}

// field is one input of a tool's playground form, from its input schema.
// Name is the property's name as the form sends it back; Label, Type
// and Description are the server's text made visible (termsafe), as the
// terminal shows it.
type field struct {
	Name, Label, Type, Description string
	Required                       bool
	// Value is what was typed in it, shown again after a refused call.
	Value string
}

type toolView struct {
	Name, Description string
	Fields            []field
	Schema            string
	// JSON is the arguments typed as JSON, shown again after a refused
	// call.
	JSON string
}

func (c *Console) toolList(ctx context.Context) ([]host.Tool, []string) {
	l := c.listTools(ctx, false)
	return l.tools, l.warnings
}

// listing is what listTools found.
type listing struct {
	tools    []host.Tool
	warnings []string
	// starting are the servers left out because they were still
	// starting when the listing began.
	starting map[string]bool
}

// listTools lists the tools of the servers up now. Unless wait, one
// still starting is not waited for: the host would wait for it (its
// ToolsWait, 5 s by default) on every page, and for a server that never
// answers, on every page until its startup timeout. It is left out with
// a line saying so; a server reconnecting is not (the host serves its
// last lists at once). A call (wait) finds its tool as any call does,
// its server waited for up to 5 s.
func (c *Console) listTools(ctx context.Context, wait bool) listing {
	l := listing{starting: map[string]bool{}}
	for _, st := range c.front.Status() {
		if !wait && st.State == host.StateConnecting && !st.Reconnecting {
			l.starting[st.Name] = true
		}
	}
	h := c.front.Host()
	if len(l.starting) > 0 {
		h = h.View(host.Scope{Servers: func(name string) bool { return !l.starting[name] }})
	}
	// A bound all the same: a server that begins starting after the
	// look above (a retry in another browser) is waited for.
	ctx, cancel := context.WithTimeout(ctx, 5*time.Second)
	defer cancel()
	list, err := h.Tools(ctx)
	var warnings []string // new slices: the host's list is not the console's to change
	if list == nil {
		warnings = []string{err.Error()}
	} else {
		// A deferred tool is one the model finds through tool_search;
		// to a person here it is a tool like any other.
		l.tools = slices.Concat(list.Tools, list.Deferred)
		slices.SortFunc(l.tools, func(a, b host.Tool) int { return strings.Compare(a.Name, b.Name) })
		warnings = slices.Clone(list.Warnings)
		// A server still connecting when the wait ends is left out with
		// a warning of its own; the others' tools are listed all the same.
		if err != nil && !errors.Is(err, context.DeadlineExceeded) {
			warnings = append(warnings, err.Error())
		}
		for name := range l.starting {
			warnings = append(warnings, name+": still connecting; its tools are listed here once it is up")
		}
	}
	// They quote servers' errors: shown as the terminal shows them.
	for i, w := range warnings {
		warnings[i] = termsafe.Line(w)
	}
	slices.Sort(warnings)
	l.warnings = warnings
	return l
}

// tools lists the tools, each linking its playground. The list has no
// form to wipe, so while a server is starting it reloads itself, as the
// servers page does, and lists the server's tools once it is up.
func (c *Console) tools(w http.ResponseWriter, r *http.Request) {
	l := c.listTools(r.Context(), false)
	viewer := sessionOf(r).viewer
	var views []toolView
	for _, t := range l.tools {
		if t.Server == "" || !viewer.sees(request(t)) {
			continue // tool_search; a tool a member's rules deny it
		}
		views = append(views, viewOf(t))
	}
	c.render(w, r, http.StatusOK, "tools.html", page{Title: "Tools and playground", Nav: "tools", Refresh: len(l.starting) > 0, Data: struct {
		Tools    []toolView
		Warnings []string
	}{views, l.warnings}})
}

// viewOf is t as the console shows it: the server's text, with what
// would hide or reorder it (an escape sequence, a bidi control, a
// backspace) made visible as the terminal does; the template escapes it
// for HTML.
func viewOf(t host.Tool) toolView {
	s, _ := json.MarshalIndent(t.Tool.InputSchema, "", "  ")
	return toolView{Name: t.Name, Description: termsafe.Text(t.Tool.Description), Fields: fields(t.Tool.InputSchema), Schema: termsafe.Text(string(s))}
}

// playground is one tool's page: its description, its form (for an
// admin) and its schema. It never reloads itself, so a form being filled
// in is never wiped; the list (tools) is the page that follows the
// servers.
func (c *Console) playground(w http.ResponseWriter, r *http.Request) {
	name := r.URL.Query().Get("tool")
	l := c.listTools(r.Context(), false)
	var view *toolView
	for _, t := range l.tools {
		if t.Name == name && t.Server != "" && sessionOf(r).viewer.sees(request(t)) {
			v := viewOf(t)
			view = &v
		}
	}
	if view == nil {
		c.render(w, r, http.StatusNotFound, "message.html", page{Title: "No such tool", Nav: "tools",
			Message: fmt.Sprintf("No tool %q is listed now (its server stopped, or is still starting).", name),
			Data:    backTo["POST /call"]})
		return
	}
	c.render(w, r, http.StatusOK, "playground.html", page{Title: name, Nav: "tools", Data: view})
}

type schema struct {
	Properties map[string]struct {
		Type        any    `json:"type"`
		Description string `json:"description"`
	} `json:"properties"`
	Required []string `json:"required"`
}

func parseSchema(in any) schema {
	var s schema
	b, _ := json.Marshal(in)
	_ = json.Unmarshal(b, &s)
	return s
}

func fields(in any) []field {
	s := parseSchema(in)
	var out []field
	for name, p := range s.Properties {
		typ, _ := p.Type.(string)
		out = append(out, field{Name: name, Label: termsafe.Line(name), Type: termsafe.Line(typ), Description: termsafe.Line(p.Description), Required: slices.Contains(s.Required, name)})
	}
	slices.SortFunc(out, func(a, b field) int { return strings.Compare(a.Name, b.Name) })
	return out
}

// callRecord is one call made from the playground.
type callRecord struct {
	ID, Tool, Args string
	Principal      string
	Started        time.Time
	Done           bool
	Text, Err      string
	IsError        bool
}

// call runs a tool from the playground through the permission rules, as
// any call: a question is shown on every page until it is answered.
func (c *Console) call(w http.ResponseWriter, r *http.Request) {
	name := r.PostForm.Get("tool")
	var tool *host.Tool
	tools := c.listTools(r.Context(), true).tools
	for i := range tools {
		if tools[i].Name == name {
			tool = &tools[i]
		}
	}
	if tool == nil {
		c.fail(w, r, http.StatusBadRequest, "call", name, fmt.Sprintf("no tool %q is listed now", name))
		return
	}
	args, err := formArgs(r, tool.Tool.InputSchema)
	if err != nil {
		// The tool's page again, with what was typed in its form: a
		// refusal wipes nothing.
		c.audit(r, sessionOf(r), "call", name, "refused: "+err.Error())
		v := viewOf(*tool)
		for i, f := range v.Fields {
			v.Fields[i].Value = r.PostForm.Get("arg." + f.Name)
		}
		v.JSON = r.PostForm.Get("json")
		c.render(w, r, http.StatusBadRequest, "playground.html", page{Title: name, Nav: "tools", Message: err.Error() + " — nothing was called; what you typed is kept below.", Data: &v})
		return
	}
	ab, _ := json.Marshal(redact.Args(args))
	rec := &callRecord{ID: newID(), Tool: name, Args: string(ab), Started: c.o.Now(), Principal: sessionOf(r).principal}
	c.mu.Lock()
	c.calls = append(c.calls, rec)
	if len(c.calls) > 100 {
		c.calls = c.calls[1:]
	}
	c.mu.Unlock()
	c.audit(r, sessionOf(r), "call", name, "started")
	go func() {
		ctx, cancel := context.WithTimeout(context.Background(), c.o.CallTimeout)
		defer cancel()
		res, err := c.front.Call(ctx, name, args)
		c.mu.Lock()
		defer c.mu.Unlock()
		rec.Done = true
		if err != nil {
			rec.Err = err.Error()
			return
		}
		rec.Text, rec.IsError = res.Text, res.IsError
	}()
	http.Redirect(w, r, c.o.BasePath+"/calls", http.StatusSeeOther)
}

// formArgs reads the arguments of a playground form: arg.NAME fields
// typed by the schema, or a JSON object in "json".
func formArgs(r *http.Request, in any) (map[string]any, error) {
	if js := strings.TrimSpace(r.PostForm.Get("json")); js != "" {
		var m map[string]any
		if err := json.Unmarshal([]byte(js), &m); err != nil {
			return nil, fmt.Errorf("the arguments are not a JSON object: %v", err)
		}
		return m, nil
	}
	s := parseSchema(in)
	args := map[string]any{}
	for name, p := range s.Properties {
		v, ok := r.PostForm["arg."+name]
		if !ok || len(v) == 0 || v[0] == "" {
			if slices.Contains(s.Required, name) {
				return nil, fmt.Errorf("%q is required", name)
			}
			continue
		}
		typ, _ := p.Type.(string)
		switch typ {
		case "integer":
			n, err := strconv.ParseInt(v[0], 10, 64)
			if err != nil {
				return nil, fmt.Errorf("%q must be a whole number, not %q", name, v[0])
			}
			args[name] = n
		case "number":
			n, err := strconv.ParseFloat(v[0], 64)
			if err != nil {
				return nil, fmt.Errorf("%q must be a number, not %q", name, v[0])
			}
			args[name] = n
		case "boolean":
			args[name] = v[0] == "true" || v[0] == "on"
		case "string", "":
			args[name] = v[0]
		default:
			var x any
			if err := json.Unmarshal([]byte(v[0]), &x); err != nil {
				return nil, fmt.Errorf("%q must be JSON (%s): %v", name, typ, err)
			}
			args[name] = x
		}
	}
	return args, nil
}

func (c *Console) callsPage(w http.ResponseWriter, r *http.Request) {
	viewer := sessionOf(r).viewer
	c.mu.Lock()
	calls := make([]callRecord, 0, len(c.calls))
	running := false
	for i := len(c.calls) - 1; i >= 0; i-- {
		if !viewer.Admin && c.calls[i].Principal != viewer.Name {
			continue // a member sees its own calls
		}
		cr := *c.calls[i]
		// The result and the error are the server's text: made visible,
		// as `switchboard call` prints them.
		cr.Text, cr.Err, cr.Args = termsafe.Text(cr.Text), termsafe.Text(cr.Err), termsafe.Line(cr.Args)
		calls = append(calls, cr)
		running = running || !c.calls[i].Done
	}
	c.mu.Unlock()
	gw := c.gatewayPart(r)
	c.render(w, r, http.StatusOK, "calls.html", page{Title: "Calls", Nav: "calls", Refresh: running || gw.Gateway, Data: struct {
		Console []callRecord
		gatewayData
	}{calls, gw}})
}

func (c *Console) asksPage(w http.ResponseWriter, r *http.Request) {
	c.render(w, r, http.StatusOK, "asks.html", page{Title: "Questions", Nav: "asks", Refresh: true})
}

// questionsFor are the questions v may see and answer: every one for an
// admin, its own for a member.
func (c *Console) questionsFor(v *Viewer) []Question {
	var out []Question
	for _, q := range c.o.Asks.Pending() {
		if v.Admin || q.Principal == v.Name {
			out = append(out, q)
		}
	}
	return out
}

func (c *Console) answer(w http.ResponseWriter, r *http.Request) {
	id, ans := r.PostForm.Get("id"), Answer(r.PostForm.Get("answer"))
	if c.o.Asks == nil {
		c.fail(w, r, http.StatusConflict, "answer", id, "no question is asked here")
		return
	}
	var tool string
	for _, q := range c.questionsFor(sessionOf(r).viewer) {
		if q.ID == id {
			tool = q.Tool
		}
	}
	if tool == "" {
		// Not waiting, or another principal's: the same answer for both.
		c.fail(w, r, http.StatusConflict, "answer", id, ErrAnswered.Error())
		return
	}
	where, err := c.o.Asks.Answer(id, ans)
	if errors.Is(err, ErrAnswered) {
		c.fail(w, r, http.StatusConflict, "answer", id, err.Error())
		return
	} else if err != nil {
		c.fail(w, r, http.StatusBadRequest, "answer", tool, err.Error())
		return
	}
	out := string(ans)
	if where != "" {
		out += ", allow rule written to " + where
	}
	c.audit(r, sessionOf(r), "answer", tool, out)
	c.done(w, r, "/calls", fmt.Sprintf("%s: %s.", tool, out))
}

package config

import (
	"bytes"
	"cmp"
	"encoding/json"
	"errors"
	"fmt"
	"net/url"
	"path/filepath"
	"slices"
	"strconv"
	"strings"

	"github.com/tailscale/hujson"
)

// Sandbox is a server's "sandbox" field as written (docs/security.md,
// Sandbox):
//
//	"sandbox": false                  // run unconfined
//	"sandbox": true                   // the default sandbox
//	"sandbox": {"fs": {"read": ["docs"], "write": ["~/.cache/x"]},
//	            "network": false | true | ["127.0.0.1:8080", …]}
//
// A nil *Sandbox is an absent field: the scope's default applies (see
// [EffectiveSandbox]).
type Sandbox struct {
	// Off is "sandbox": false: the server runs with all of the user's rights.
	Off bool
	// FS, when set, replaces the default filesystem view (the workspace
	// and the server's cwd, read-write) with exactly these paths.
	FS *SandboxFS
	// Network is what the server may reach; the zero value is nothing.
	Network SandboxNetwork
}

// SandboxFS lists the paths a sandboxed server sees besides the system
// directories: Read read-only, Write read-write. A path is absolute, "~"
// or "~/…" (the home directory), or relative to the workspace root.
type SandboxFS struct {
	Read  []string `json:"read,omitempty"`
	Write []string `json:"write,omitempty"`
}

// SandboxNetwork is "network": false (the zero value: none), true (the
// host's network, unconfined) or a list of "host:port" the server may
// connect to.
type SandboxNetwork struct {
	All   bool
	Allow []string
}

// MarshalJSON writes false, true or the list.
func (n SandboxNetwork) MarshalJSON() ([]byte, error) {
	if n.All {
		return []byte("true"), nil
	}
	if len(n.Allow) == 0 {
		return []byte("false"), nil
	}
	return json.Marshal(n.Allow)
}

// UnmarshalJSON reads false, true, null or a list of "host:port".
func (n *SandboxNetwork) UnmarshalJSON(b []byte) error {
	*n = SandboxNetwork{}
	switch s := string(bytes.TrimSpace(b)); s {
	case "false", "null":
		return nil
	case "true":
		n.All = true
		return nil
	}
	var l []string
	if err := json.Unmarshal(b, &l); err != nil {
		return errors.New(`"network" must be false, true or a list of "host:port"`)
	}
	for _, hp := range l {
		if why := checkHostPort(hp); why != "" {
			return fmt.Errorf(`"network": %s %s`, strconv.Quote(hp), why)
		}
	}
	n.Allow = l
	return nil
}

// checkHostPort says why hp is not "host:port", or "".
func checkHostPort(hp string) string {
	// Split by hand: config is pure and does not import net (archtest).
	// "[::1]:8080" and "host:443"; a bare IPv6 address without brackets
	// has more than one ':' and is refused.
	i := strings.LastIndexByte(hp, ':')
	if i < 0 {
		return `is not "host:port"`
	}
	h, p := hp[:i], hp[i+1:]
	if strings.HasPrefix(h, "[") && strings.HasSuffix(h, "]") {
		h = h[1 : len(h)-1]
	} else if strings.ContainsAny(h, ":[]") {
		return `is not "host:port"`
	}
	if h == "" {
		return `is not "host:port"`
	}
	if n, err := strconv.Atoi(p); err != nil || n < 1 || n > 65535 {
		return "has no port number between 1 and 65535"
	}
	return ""
}

// MarshalJSON writes false, true (the default sandbox, as read) or the object.
func (s Sandbox) MarshalJSON() ([]byte, error) {
	if s.Off {
		return []byte("false"), nil
	}
	if s.FS == nil && !s.Network.All && len(s.Network.Allow) == 0 {
		return []byte("true"), nil
	}
	return json.Marshal(struct {
		FS      *SandboxFS     `json:"fs,omitempty"`
		Network SandboxNetwork `json:"network"`
	}{s.FS, s.Network})
}

// UnmarshalJSON reads false, true or {"fs": …, "network": …}; unknown
// keys are errors (a misspelt "netwrok" must not silently mean "none").
func (s *Sandbox) UnmarshalJSON(b []byte) error {
	*s = Sandbox{}
	switch string(bytes.TrimSpace(b)) {
	case "false":
		s.Off = true
		return nil
	case "true", "null":
		return nil
	}
	var raw struct {
		FS      *SandboxFS     `json:"fs"`
		Network SandboxNetwork `json:"network"`
	}
	dec := json.NewDecoder(bytes.NewReader(b))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&raw); err != nil {
		var te *json.UnmarshalTypeError
		if errors.As(err, &te) {
			return errors.New(`must be false, true or {"fs": {"read": […], "write": […]}, "network": false | […]}`)
		}
		return errors.New(strings.TrimPrefix(err.Error(), "json: "))
	}
	s.FS, s.Network = raw.FS, raw.Network
	return nil
}

// sandbox parses a "sandbox" member.
func (d *jsoncDoc) sandbox(v *hujson.Value, server string, diags *[]Diagnostic) *Sandbox {
	c := v.Clone()
	c.Standardize()
	var s Sandbox
	if err := json.Unmarshal(c.Pack(), &s); err != nil {
		*diags = append(*diags, Diagnostic{
			Severity: SeverityError, Position: d.pos(v.StartOffset), Server: server, Field: "sandbox",
			Message: err.Error(),
			Fix:     `write "sandbox": {"fs": {"read": ["docs"], "write": ["."]}, "network": false}, or false to run it unconfined`,
		})
		return nil
	}
	return &s
}

// SandboxDefaults are the per-scope defaults of servers whose definition
// has no "sandbox" field, from the "sandbox" key of user or managed
// settings: {"project": true, "user": false, "local": {…}}. A scope not
// listed keeps the built-in default: project-scope servers sandboxed,
// every other scope not.
type SandboxDefaults map[Scope]*Sandbox

// SandboxDefaults reads the settings' "sandbox" key (nil when absent).
func (s Settings) SandboxDefaults() (SandboxDefaults, error) {
	v, ok := s["sandbox"]
	if !ok || v == nil {
		return nil, nil
	}
	m, ok := v.(map[string]any)
	if !ok {
		return nil, errors.New(`"sandbox" must be an object such as {"project": true, "user": false}`)
	}
	out := SandboxDefaults{}
	for k, sv := range m {
		sc := Scope(k)
		if sc != ScopeProject && sc != ScopeUser && sc != ScopeLocal {
			return nil, fmt.Errorf(`"sandbox": unknown scope %q (use "project", "user" or "local")`, k)
		}
		b, _ := json.Marshal(sv)
		var sb Sandbox
		if err := json.Unmarshal(b, &sb); err != nil {
			return nil, fmt.Errorf(`"sandbox.%s": %v`, k, err)
		}
		out[sc] = &sb
	}
	return out, nil
}

// Merge returns d with over's scopes replacing d's (managed over user).
func (d SandboxDefaults) Merge(over SandboxDefaults) SandboxDefaults {
	out := SandboxDefaults{}
	for k, v := range d {
		out[k] = v
	}
	for k, v := range over {
		out[k] = v
	}
	return out
}

// SandboxPolicy is the effective sandbox of one server: absolute, cleaned
// paths, in the order given, without duplicates. The system directories
// (read-only) and a private /tmp are the platform's to add.
type SandboxPolicy struct {
	Read  []string `json:"read,omitempty"`
	Write []string `json:"write,omitempty"`
	// Protected are paths inside Write that the server sees read-only:
	// the git metadata and the settings of Switchboard and of the agents
	// and editors that run commands from a folder (ProtectedNames), below
	// each writable path, but one the user named writable themselves.
	// EffectiveSandbox names the candidates; the runtime keeps those that
	// exist, and a git pointer file's directory (host.SandboxOf).
	Protected []string `json:"protected,omitempty"`
	// NetworkAll: the host's network, unconfined. Otherwise only Allow
	// ("host:port"), and nothing when it is empty.
	NetworkAll bool `json:"networkAll,omitempty"`
	// AbstractSockets: with NetworkAll, the server can also connect to
	// the abstract Unix sockets of the user's session (an X server's:
	// keystrokes into any window), as before Linux 6.12 (the runtime's to
	// fill, host.SandboxOf).
	AbstractSockets bool     `json:"abstractSockets,omitempty"`
	Allow           []string `json:"allow,omitempty"`
	// Workspace is the workspace root: every path below it is the
	// repository's to change, so it is resolved beneath it at every start,
	// links included (the runtime refuses a path that leads out).
	Workspace string `json:"-"`
	// Home is the user's home directory, which the words say is hidden
	// unless a path shows it.
	Home string `json:"-"`
	// Refused says why the server will not start in this sandbox: a path
	// a repository names outside its workspace (left out of Read and
	// Write), or, as the runtime finds it, one that leads out through a
	// link. Empty when it may start.
	Refused []string `json:"refused,omitempty"`
	// Links maps a path of Read or Write that is, or goes through, a link
	// to what it resolves to (the runtime's to fill).
	Links map[string]string `json:"links,omitempty"`
	// Files are files outside the workspace that the server's command
	// line names, shown read-only; Unshown are those it names that are
	// not shown, being in a hidden folder of the home directory (the
	// runtime's to fill).
	Files   []string `json:"files,omitempty"`
	Unshown []string `json:"unshown,omitempty"`
	// Caches are package runners' caches the server sees as private
	// copies, and Downloads where its package runner downloads from
	// (their destinations are in Allow too); Env is what the runner is
	// told in the server's environment (its registry, its cache). The
	// runtime's to fill (host.SandboxOf).
	Caches    []SandboxCache    `json:"caches,omitempty"`
	Downloads []SandboxDownload `json:"downloads,omitempty"`
	Env       map[string]string `json:"-"`
	// Proxy is the user's own HTTP proxy, through which its allowed
	// destinations are reached (the runtime's to fill from the user's
	// environment), nil for none.
	Proxy *SandboxProxy `json:"-"`
}

// SandboxProxy is the user's HTTP proxy: URLs for http:// and https://
// destinations, and what goes direct (NO_PROXY's syntax).
type SandboxProxy struct {
	HTTP, HTTPS, NoProxy string
}

// SandboxCache is a package runner's cache (Path) that a sandboxed server
// sees with the user's contents, its own writes kept in Private: an
// unsandboxed server never runs what a sandboxed one wrote.
type SandboxCache struct {
	Runner  string `json:"runner"`
	Path    string `json:"path"`
	Private string `json:"private"`
}

// SandboxDownload is where a package runner downloads packages from, as
// the user configured it: What in words ("the npm registry"), the URL,
// and the destination ("host:port") the sandbox allows for it.
type SandboxDownload struct {
	Runner string `json:"runner"`
	What   string `json:"what"`
	URL    string `json:"url"`
	Dest   string `json:"dest"`
}

// ProtectedNames are the entries of a writable folder that a sandboxed
// server may not write (SandboxPolicy.Protected): what would run a
// command, or decide what runs, outside its sandbox, at no change a user
// reviews. .git holds
// hooks and a config (core.fsmonitor, core.hooksPath, aliases) that git
// runs from on the user's next commit or status, and none of it shows in
// `git status`; .mcp.json and .switchboard are Switchboard's own (which
// servers a repository offers, and its rules); .claude, .codex, .cursor
// and .vscode are the settings of the agents and editors that start MCP
// servers, hooks and tasks from the folder.
var ProtectedNames = []string{".git", ".mcp.json", ".switchboard", ".claude", ".codex", ".cursor", ".vscode"}

// rootProtectedNames are ProtectedNames for the workspace root itself,
// with mcp.json: the other name Switchboard reads the repository's
// servers from there (projectFiles). Elsewhere a file of that name is
// data like any other (a server of the user's that writes ~/.cursor
// writes .cursor/mcp.json).
var rootProtectedNames = slices.Insert(slices.Clone(ProtectedNames), slices.Index(ProtectedNames, ".mcp.json")+1, "mcp.json")

// EffectiveSandbox is the sandbox rs runs in for a workspace root (""
// when none) and a home directory, or nil when it runs unconfined: its
// written "sandbox" field, else defaults[its scope], else the built-in
// default (project scope sandboxed, others not). The default filesystem
// view is the workspace and the server's cwd, read-write; an explicit one
// gets the cwd read-only when it does not cover it (the server starts
// there).
//
// A project-scope (repository-written) server may name only paths in its
// workspace, its cwd included: one outside (absolute, "~", or climbing out
// with "..") is left out and named in Refused, and the server does not
// start. A server the user wrote keeps its paths as written, and so do
// the paths of the user's per-scope default.
//
// Below each writable path, ProtectedNames stay read-only (Protected; at
// the workspace root, mcp.json too), but for a path the user named
// writable themselves (a server of theirs whose "sandbox.fs.write" lists
// ".git", say). A repository's server may not
// name one of them, or a path inside one, writable: that is Refused too.
func EffectiveSandbox(rs *ResolvedServer, workspace, home string, defaults SandboxDefaults) *SandboxPolicy {
	sb := rs.Written.Sandbox
	if sb == nil {
		sb = defaults[rs.Scope]
	}
	if sb == nil && rs.Scope == ScopeProject {
		sb = &Sandbox{}
	}
	if sb == nil || sb.Off || InferType(rs.Effective) != TypeStdio {
		return nil
	}
	def := rs.Effective
	p := &SandboxPolicy{NetworkAll: sb.Network.All, Allow: slices.Clone(sb.Network.Allow), Workspace: workspace, Home: home}
	// path is a written path made absolute, "" when it is not to be used:
	// a repository's outside its workspace is refused (paths of the
	// user's per-scope default are the user's own).
	fromRepo := rs.Scope == ScopeProject && rs.Written.Sandbox != nil
	path := func(field, written string) string {
		abs := sandboxPath(written, workspace, home)
		if abs != "" && (fromRepo || field == `"cwd"` && rs.Scope == ScopeProject) && !within(abs, workspace) {
			p.Refused = append(p.Refused, fmt.Sprintf("%s names %s, outside the workspace (a repository's server may name only paths in its workspace)", field, strconv.Quote(written)))
			return ""
		}
		return abs
	}
	// named are the writable paths written in the definition or the
	// user's default, and by whom (protectNames).
	var named []writablePath
	cwd := ""
	if def.Cwd != "" {
		cwd = path(`"cwd"`, def.Cwd)
	}
	if sb.FS == nil {
		p.Write = appendPaths(p.Write, workspace, cwd)
		if cwd != "" {
			named = append(named, writablePath{`"cwd"`, def.Cwd, cwd, rs.Scope == ScopeProject})
		}
	} else {
		for _, r := range sb.FS.Read {
			p.Read = appendPaths(p.Read, path(`"sandbox.fs.read"`, r))
		}
		for _, w := range sb.FS.Write {
			abs := path(`"sandbox.fs.write"`, w)
			p.Write = appendPaths(p.Write, abs)
			if abs != "" {
				named = append(named, writablePath{`"sandbox.fs.write"`, w, abs, fromRepo})
			}
		}
		if cwd != "" && !p.Covers(cwd) {
			p.Read = appendPaths(p.Read, cwd)
		}
	}
	protectNames(p, named)
	return p
}

// writablePath is a writable path as a definition or the user's default
// wrote it (field and written), made absolute, and whether a repository
// wrote it.
type writablePath struct {
	field, written, abs string
	repo                bool
}

// protectNames fills p.Protected with ProtectedNames below each writable
// path (rootProtectedNames below the workspace root), but those the user
// named writable, and refuses each writable path
// a repository named that is, or is inside, one of them (taking it out of
// Write: it would give the server what Protected keeps from it).
func protectNames(p *SandboxPolicy, named []writablePath) {
	userNamed := func(c string) bool {
		return slices.ContainsFunc(named, func(n writablePath) bool { return !n.repo && n.abs == c })
	}
	kept := func() []string {
		var l []string
		for _, w := range p.Write {
			names := ProtectedNames
			if p.Workspace != "" && w == filepath.Clean(p.Workspace) {
				names = rootProtectedNames
			}
			for _, n := range names {
				if c := filepath.Join(w, n); !userNamed(c) {
					l = appendPaths(l, c)
				}
			}
		}
		return l
	}
	p.Protected = kept()
	refused := false
	for _, n := range named {
		if !n.repo {
			continue
		}
		for _, c := range p.Protected {
			if within(n.abs, c) {
				shown := c
				if rel, err := filepath.Rel(p.Workspace, c); err == nil && within(c, p.Workspace) {
					shown = filepath.ToSlash(rel)
				}
				p.Refused = append(p.Refused, fmt.Sprintf("%s names %s: a repository's server may not write %s (%s)", n.field, strconv.Quote(n.written), shown, ProtectedWhy(filepath.Base(c))))
				p.Write = slices.DeleteFunc(p.Write, func(w string) bool { return w == n.abs })
				refused = true
				break
			}
		}
	}
	if refused {
		p.Protected = kept()
	}
}

// ProtectedWhy says in a few words why a name of ProtectedNames is kept.
func ProtectedWhy(name string) string {
	switch name {
	case ".git":
		return "git runs its hooks and config outside any sandbox"
	case ".mcp.json", "mcp.json", ".switchboard":
		return "it decides which servers run and how"
	}
	return "an agent or editor runs commands from its settings"
}

// protectedWords names Protected in a few words: "its .git and
// .mcp.json" below the one writable path, else by folder (".git and
// .mcp.json in /ws").
func (p *SandboxPolicy) protectedWords(tilde func(string) string) string {
	var dirs []string
	names := map[string][]string{}
	for _, c := range p.Protected {
		d := filepath.Dir(c)
		if _, ok := names[d]; !ok {
			dirs = append(dirs, d)
		}
		names[d] = append(names[d], filepath.Base(c))
	}
	and := func(l []string) string {
		if len(l) == 1 {
			return l[0]
		}
		return strings.Join(l[:len(l)-1], ", ") + " and " + l[len(l)-1]
	}
	if shown := p.shownWrite(); len(shown) == 1 && len(dirs) == 1 && dirs[0] == shown[0] {
		return "its " + and(names[dirs[0]])
	}
	parts := make([]string, len(dirs))
	for i, d := range dirs {
		parts[i] = and(names[d]) + " in " + tilde(d)
	}
	return strings.Join(parts, ", ")
}

// shownWrite is Write as the words say it: without a path inside another
// one of Write (the cwd of a server whose workspace is writable), which
// adds nothing the reader does not see already, but for one that is or
// goes through a link (Links says where it leads) and one in or below a
// name ProtectedNames keeps (the user named it writable: the words say
// so).
// The policy itself keeps every path: each has its Protected names.
func (p *SandboxPolicy) shownWrite() []string {
	redundant := func(w string) bool {
		if _, link := p.Links[w]; link {
			return false
		}
		return slices.ContainsFunc(p.Write, func(o string) bool {
			if o == w || !within(w, o) {
				return false
			}
			rel, err := filepath.Rel(o, w)
			return err == nil && !slices.ContainsFunc(strings.Split(filepath.ToSlash(rel), "/"), func(e string) bool {
				return slices.Contains(rootProtectedNames, e)
			})
		})
	}
	var out []string
	for _, w := range p.Write {
		if !redundant(w) {
			out = append(out, w)
		}
	}
	return out
}

// within reports whether path is dir or below it ("" is never).
func within(path, dir string) bool {
	if dir == "" {
		return false
	}
	rel, err := filepath.Rel(dir, path)
	return err == nil && rel != ".." && !strings.HasPrefix(rel, ".."+string(filepath.Separator))
}

// ProtectedBy is the path of Protected that path is, or is below; "" if
// none.
func (p *SandboxPolicy) ProtectedBy(path string) string {
	for _, k := range p.Protected {
		if within(path, k) {
			return k
		}
	}
	return ""
}

// Covers reports whether path is one of the policy's paths or below one.
func (p *SandboxPolicy) Covers(path string) bool {
	for _, l := range [][]string{p.Write, p.Read} {
		for _, q := range l {
			if within(path, q) {
				return true
			}
		}
	}
	return false
}

func appendPaths(l []string, paths ...string) []string {
	for _, p := range paths {
		if p != "" && !slices.Contains(l, p) {
			l = append(l, p)
		}
	}
	return l
}

// sandboxPath makes a written path absolute: "~" is home, a relative path
// is below the workspace ("" when there is neither to resolve it).
func sandboxPath(p, workspace, home string) string {
	switch {
	case p == "~" || strings.HasPrefix(p, "~/"):
		if home == "" {
			return ""
		}
		return filepath.Join(home, p[1:])
	case filepath.IsAbs(p):
		return filepath.Clean(p)
	case workspace == "":
		return ""
	}
	return filepath.Join(workspace, p)
}

// DescribeSandbox says in plain words what a server can reach: "can read
// and write /repo; no network", what each path that is a link resolves
// to, the files of its command line it is shown, the caches it gets a
// private copy of, where its package runner downloads from, and first,
// when the server will not start in it, why. tilde shortens paths for
// display (nil: as they are).
func DescribeSandbox(p *SandboxPolicy, tilde func(string) string) string {
	if p == nil {
		return "not sandboxed: it can read and write everything you can, and use the network"
	}
	if tilde == nil {
		tilde = func(s string) string { return s }
	}
	list := func(l []string) string {
		out := make([]string, len(l))
		for i, s := range l {
			out[i] = tilde(s)
			if to, ok := p.Links[s]; ok {
				out[i] += " (a link to " + tilde(to) + ")"
			}
		}
		return strings.Join(out, ", ")
	}
	var parts []string
	if len(p.Refused) > 0 {
		parts = append(parts, "WILL NOT START: "+strings.Join(p.Refused, "; "))
	}
	if len(p.Write) > 0 {
		s := "can read and write " + list(p.shownWrite())
		if len(p.Protected) > 0 {
			s += " but not " + p.protectedWords(tilde)
		}
		parts = append(parts, s)
	}
	if len(p.Read) > 0 {
		parts = append(parts, "can read "+list(p.Read))
	}
	// The rest of the filesystem view is said after what it may read and
	// write, not after a cache's private copy (which it is no part of).
	view := len(parts) - 1
	if len(p.Refused) > 0 && view == 0 {
		view = -1
	}
	if len(p.Files) > 0 {
		parts = append(parts, "can read the files its command names: "+list(p.Files))
		if view < 0 {
			view = len(parts) - 1
		}
	}
	if len(p.Unshown) > 0 {
		parts = append(parts, "is not shown what its command names in a hidden folder of your home: "+list(p.Unshown))
	}
	for _, c := range p.Caches {
		parts = append(parts, fmt.Sprintf("sees %s's cache %s, writing only to a private copy", c.Runner, tilde(c.Path)))
	}
	if len(p.Write) == 0 && len(p.Read) == 0 && len(p.Files) == 0 && len(p.Caches) == 0 {
		parts = append(parts, "sees none of your files")
	}
	if view < 0 {
		view = len(parts) - 1
	}
	home := "the rest of your home is hidden"
	if p.Home != "" && p.Covers(p.Home) {
		home = "your whole home directory is visible"
	}
	parts[view] += " (and the system directories, read-only; " + home + "; a private /tmp)"
	var other []string
	for _, a := range p.Allow {
		if !slices.ContainsFunc(p.Downloads, func(d SandboxDownload) bool { return d.Dest == a }) {
			other = append(other, a)
		}
	}
	for _, d := range p.Downloads {
		if !p.NetworkAll {
			parts = append(parts, fmt.Sprintf("may download packages from %s (%s)", d.What, d.Dest))
		}
	}
	switch {
	case p.NetworkAll && p.AbstractSockets:
		parts = append(parts, "full network and your session's abstract sockets (your X server's: it can type into any window; Linux before 6.12)")
	case p.NetworkAll:
		parts = append(parts, "full network")
	case len(other) > 0 && len(p.Downloads) > 0:
		parts = append(parts, "otherwise network only to "+strings.Join(other, ", "))
	case len(other) > 0:
		parts = append(parts, "network only to "+strings.Join(other, ", "))
	case len(p.Downloads) > 0:
		parts = append(parts, "no other network")
	default:
		parts = append(parts, "no network")
	}
	if p.Proxy != nil && !p.NetworkAll && len(p.Allow) > 0 {
		via := cmp.Or(p.Proxy.HTTPS, p.Proxy.HTTP)
		if u, err := url.Parse(via); err == nil && u.Host != "" {
			via = u.Host // never its credentials
		}
		parts = append(parts, "through your proxy "+via+" (loopback, and what your NO_PROXY names, directly)")
	}
	return strings.Join(parts, "; ")
}

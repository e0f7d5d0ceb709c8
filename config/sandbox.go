package config

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"path"
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
	// NetworkAll: the host's network, unconfined. Otherwise only Allow
	// ("host:port"), and nothing when it is empty.
	NetworkAll bool     `json:"networkAll,omitempty"`
	Allow      []string `json:"allow,omitempty"`
}

// EffectiveSandbox is the sandbox rs runs in for a workspace root (""
// when none) and a home directory, or nil when it runs unconfined: its
// written "sandbox" field, else defaults[its scope], else the built-in
// default (project scope sandboxed, others not). The default filesystem
// view is the workspace and the server's cwd, read-write; a package
// runner's cache (~/.npm for npx and npm, ~/.cache/uv for uvx and uv) is
// added read-write to every view, and the cwd read-only to an explicit one
// that does not cover it (the server starts there).
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
	cwd := def.Cwd
	if cwd != "" {
		cwd = sandboxPath(cwd, workspace, home)
	}
	p := &SandboxPolicy{NetworkAll: sb.Network.All, Allow: slices.Clone(sb.Network.Allow)}
	if sb.FS == nil {
		p.Write = appendPaths(p.Write, workspace, cwd)
	} else {
		for _, r := range sb.FS.Read {
			p.Read = appendPaths(p.Read, sandboxPath(r, workspace, home))
		}
		for _, w := range sb.FS.Write {
			p.Write = appendPaths(p.Write, sandboxPath(w, workspace, home))
		}
		if cwd != "" && !p.Covers(cwd) {
			p.Read = appendPaths(p.Read, cwd)
		}
	}
	if home != "" {
		switch strings.TrimSuffix(path.Base(filepath.ToSlash(def.Command)), ".cmd") {
		case "npx", "npm":
			p.Write = appendPaths(p.Write, filepath.Join(home, ".npm"))
		case "uvx", "uv":
			p.Write = appendPaths(p.Write, filepath.Join(home, ".cache", "uv"))
		}
	}
	return p
}

// Covers reports whether path is one of the policy's paths or below one.
func (p *SandboxPolicy) Covers(path string) bool {
	for _, l := range [][]string{p.Write, p.Read} {
		for _, q := range l {
			if rel, err := filepath.Rel(q, path); err == nil && rel != ".." && !strings.HasPrefix(rel, ".."+string(filepath.Separator)) {
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
// and write /repo, ~/.npm; no network". tilde shortens paths for display
// (nil: as they are).
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
		}
		return strings.Join(out, ", ")
	}
	var parts []string
	if len(p.Write) > 0 {
		parts = append(parts, "can read and write "+list(p.Write))
	}
	if len(p.Read) > 0 {
		parts = append(parts, "can read "+list(p.Read))
	}
	if len(parts) == 0 {
		parts = append(parts, "sees none of your files")
	}
	parts[len(parts)-1] += " (and the system directories, read-only; the rest of your home is hidden; a private /tmp)"
	switch {
	case p.NetworkAll:
		parts = append(parts, "full network")
	case len(p.Allow) > 0:
		parts = append(parts, "network only to "+strings.Join(p.Allow, ", "))
	default:
		parts = append(parts, "no network")
	}
	return strings.Join(parts, "; ")
}

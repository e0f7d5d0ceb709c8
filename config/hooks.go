package config

import (
	"encoding/json"
	"fmt"
	"net/netip"
	"net/url"
	"path/filepath"
	"strings"

	"github.com/tailscale/hujson"
)

// The settings keys of what the model reads (docs/security.md, What the
// model reads): read from the layers a repository cannot write only.
const (
	// ToolChangesKey says what happens when a tool of a server the user
	// wrote changes its definition: "ask", "notify" or "accept".
	ToolChangesKey = "toolChanges"
	// CallHooksKey lists the user's own checks run before and after calls.
	CallHooksKey = "callHooks"
)

// ToolChangeMode is the "toolChanges" setting.
type ToolChangeMode string

const (
	// ToolChangesAsk holds a changed tool until the person accepts it (a
	// terminal asks; elsewhere `switchboard tools accept`).
	ToolChangesAsk ToolChangeMode = "ask"
	// ToolChangesNotify serves the changed tool and keeps reporting the
	// change until it is accepted.
	ToolChangesNotify ToolChangeMode = "notify"
	// ToolChangesAccept serves the changed tool and pins it at once,
	// reporting the change once.
	ToolChangesAccept ToolChangeMode = "accept"
)

// validToolChanges checks a "toolChanges" value.
func validToolChanges(v any) bool {
	s, ok := v.(string)
	switch ToolChangeMode(s) {
	case ToolChangesAsk, ToolChangesNotify, ToolChangesAccept:
		return ok
	}
	return false
}

// ToolChanges returns the "toolChanges" setting of the layers a repository
// cannot write (managed first, then --settings, local, user: an
// administrator's choice wins), and the label of the layer that set it;
// "" when none does (the caller's default applies).
func (st *SettingsStack) ToolChanges() (ToolChangeMode, string) {
	for _, l := range st.Trusted() {
		if v, ok := l.Settings[ToolChangesKey]; ok && validToolChanges(v) {
			return ToolChangeMode(v.(string)), l.Label()
		}
	}
	return "", ""
}

// Hook timeouts, in milliseconds.
const (
	DefaultHookTimeoutMs = 5000
	MaxHookTimeoutMs     = 120000
)

// CallHook is one entry of "callHooks": the user's own check of tool
// calls, an executable or an HTTP endpoint on loopback, run before a call
// (it may deny it) and after it (it may redact or deny the result).
type CallHook struct {
	// Name labels the hook in status, the audit log and messages: the
	// "name" written, else the program's base name or the URL's host.
	Name string `json:"name"`
	// Command is the program and its arguments (run without a shell), or
	// URL the endpoint; exactly one is set.
	Command []string `json:"command,omitempty"`
	URL     string   `json:"url,omitempty"`
	// Before and After say when it runs ("on"; both by default).
	Before bool `json:"before"`
	After  bool `json:"after"`
	// TimeoutMs bounds one run (default DefaultHookTimeoutMs).
	TimeoutMs int `json:"timeoutMs"`
	// Tools are the permission-rule patterns of the tools it checks
	// (mcp__server, mcp__server__tool, mcp__*); empty: every tool.
	Tools []string `json:"tools,omitempty"`
	// FailOpen lets a call go on when the hook fails (times out, crashes,
	// answers garbage): "onError": "allow". By default it is denied.
	FailOpen bool `json:"failOpen,omitempty"`
	// Source is the label of the settings layer it is written in, and
	// Position where.
	Source   string   `json:"source"`
	Position Position `json:"position"`
}

// CallHooks returns the "callHooks" of the layers a repository cannot
// write, in precedence order (managed first), and the problems of those
// it could not read, each naming file:line:col. A layer that cannot be
// used at all is reported by [SettingsStack.Problems]. Hooks written in
// project settings are never run: they are reported as a warning.
//
// A hook with a problem is left out, and the problem is an error: a
// caller should refuse calls while any is left (a check the user asked
// for must not silently not run).
func (st *SettingsStack) CallHooks() ([]CallHook, []Diagnostic) {
	var hooks []CallHook
	var diags []Diagnostic
	for _, l := range st.Layers {
		v, ok := l.Settings[CallHooksKey]
		if !ok || v == nil {
			continue
		}
		if !l.Scope.Trusted() {
			diags = append(diags, Diagnostic{Severity: SeverityWarning, Position: l.position(nil), Field: CallHooksKey,
				Message: "callHooks in " + l.Label() + " are ignored: a repository may not run programs on your calls",
				Fix:     "write them in your user settings (~/.switchboard/settings.json)"})
			continue
		}
		list, ok := v.([]any)
		if !ok {
			diags = append(diags, l.hookProblem(nil, `"callHooks" must be an array of hooks such as {"command": ["/path/to/check"]}`))
			continue
		}
		for i, e := range list {
			h, problem, at := parseHook(e)
			if problem != "" {
				diags = append(diags, l.hookProblem(append([]any{i}, at...), problem))
				continue
			}
			h.Source, h.Position = l.Label(), l.position([]any{CallHooksKey, i})
			hooks = append(hooks, h)
		}
	}
	return hooks, diags
}

// hookProblem is the error of the hook at path (below "callHooks").
func (l SettingsLayer) hookProblem(path []any, msg string) Diagnostic {
	return Diagnostic{Severity: SeverityError, Position: l.position(append([]any{CallHooksKey}, path...)), Field: CallHooksKey,
		Message: fmt.Sprintf("%s: %s; until it is fixed every tool call is refused", l.Label(), msg),
		Fix:     "fix the hook, or remove it"}
}

// position finds path (keys and indexes below the layer's document: its
// "projects" entry for a local layer) in the layer's file; the file alone
// when it cannot.
func (l SettingsLayer) position(path []any) Position {
	p := Position{File: l.File}
	if l.data == nil {
		return p
	}
	var ptr strings.Builder
	if l.Scope == SettingsLocal {
		ptr.WriteString("/projects/" + pointerEscape(l.Key))
	}
	for _, e := range path {
		ptr.WriteString("/" + pointerEscape(fmt.Sprint(e)))
	}
	text, _ := StripBOM(l.data)
	v, err := hujson.Parse(text)
	if err != nil {
		return p
	}
	found := v.Find(ptr.String())
	if found == nil {
		return p
	}
	return posAt(l.File, text, found.StartOffset)
}

func pointerEscape(s string) string {
	return strings.ReplaceAll(strings.ReplaceAll(s, "~", "~0"), "/", "~1")
}

// parseHook reads one hook; a problem comes with the path (below the
// hook) where it is.
func parseHook(v any) (CallHook, string, []any) {
	m, ok := v.(map[string]any)
	if !ok {
		return CallHook{}, `a hook must be an object such as {"command": ["/path/to/check"], "on": ["before"]}`, nil
	}
	h := CallHook{Before: true, After: true, TimeoutMs: DefaultHookTimeoutMs}
	for k, val := range m {
		switch k {
		case "name":
			s, ok := val.(string)
			if !ok {
				return h, `"name" must be a string`, []any{k}
			}
			h.Name = s
		case "command":
			switch c := val.(type) {
			case string:
				h.Command = []string{c}
			case []any:
				for _, a := range c {
					s, ok := a.(string)
					if !ok {
						return h, `"command" must be a program path, or an array of strings (the program and its arguments)`, []any{k}
					}
					h.Command = append(h.Command, s)
				}
			default:
				return h, `"command" must be a program path, or an array of strings (the program and its arguments)`, []any{k}
			}
			if len(h.Command) == 0 || h.Command[0] == "" {
				return h, `"command" names no program`, []any{k}
			}
			if !filepath.IsAbs(h.Command[0]) && !strings.HasPrefix(h.Command[0], "~/") {
				return h, fmt.Sprintf(`"command" must name the program by its absolute path (or ~/…), not %q: a relative name would be looked up wherever a command runs`, h.Command[0]), []any{k}
			}
		case "url":
			s, ok := val.(string)
			if !ok {
				return h, `"url" must be a string`, []any{k}
			}
			if why := loopbackURL(s); why != "" {
				return h, why, []any{k}
			}
			h.URL = s
		case "on":
			list, ok := val.([]any)
			if !ok || len(list) == 0 {
				return h, `"on" must be a non-empty array of "before" and "after"`, []any{k}
			}
			h.Before, h.After = false, false
			for _, e := range list {
				switch e {
				case "before":
					h.Before = true
				case "after":
					h.After = true
				default:
					return h, fmt.Sprintf(`"on" may hold "before" and "after", not %v`, jsonText(e)), []any{k}
				}
			}
		case "timeout":
			n, ok := val.(float64)
			if !ok || n != float64(int(n)) || n <= 0 || n > MaxHookTimeoutMs {
				return h, fmt.Sprintf(`"timeout" must be a whole number of milliseconds from 1 to %d`, MaxHookTimeoutMs), []any{k}
			}
			h.TimeoutMs = int(n)
		case "tools":
			list, ok := stringList(val)
			if !ok {
				return h, `"tools" must be an array of tool patterns such as "mcp__github" or "mcp__fs__write_file"`, []any{k}
			}
			for _, t := range list {
				if !strings.HasPrefix(t, "mcp__") {
					return h, fmt.Sprintf(`"tools" entry %q is not a tool pattern (mcp__server, mcp__server__tool or mcp__*)`, t), []any{k}
				}
			}
			h.Tools = list
		case "onError":
			switch val {
			case "deny":
			case "allow":
				h.FailOpen = true
			default:
				return h, `"onError" must be "deny" (the default: a hook that fails refuses the call) or "allow"`, []any{k}
			}
		default:
			return h, fmt.Sprintf("unknown field %q (a hook has name, command or url, on, timeout, tools and onError)", k), []any{k}
		}
	}
	switch {
	case len(h.Command) == 0 && h.URL == "":
		return h, `a hook needs "command" (a program) or "url" (an endpoint on loopback)`, nil
	case len(h.Command) > 0 && h.URL != "":
		return h, `a hook has either "command" or "url", not both`, nil
	}
	if h.Name == "" {
		if len(h.Command) > 0 {
			h.Name = filepath.Base(h.Command[0])
		} else if u, err := url.Parse(h.URL); err == nil {
			h.Name = u.Host
		}
	}
	return h, "", nil
}

// loopbackURL says why u is not an http(s) URL on loopback ("" when it
// is): a hook receives every call's arguments, which must not leave the
// machine.
func loopbackURL(u string) string {
	p, err := url.Parse(u)
	if err != nil || p.Host == "" || (p.Scheme != "http" && p.Scheme != "https") {
		return fmt.Sprintf(`"url" must be an http:// or https:// URL on loopback, not %q`, u)
	}
	if p.User != nil {
		return `"url" must not hold a user name or password`
	}
	host := p.Hostname()
	if host == "localhost" {
		return ""
	}
	if a, err := netip.ParseAddr(host); err == nil && a.Unmap().IsLoopback() {
		return ""
	}
	return fmt.Sprintf(`"url" must be on loopback (localhost, 127.0.0.1 or [::1]), not %s: a hook receives every call's arguments`, host)
}

func jsonText(v any) string {
	b, _ := json.Marshal(v)
	return string(b)
}

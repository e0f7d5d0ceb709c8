package config

import (
	"fmt"
	"math"
	"net/url"
	"slices"
	"sort"
	"strconv"
	"strings"
	"unicode/utf8"

	"github.com/tailscale/hujson"
)

// ValidName reports whether name is a legal server name:
// 1 to 64 of A-Z, a-z, 0-9, '_', '.' and '-'.
func ValidName(name string) bool {
	if len(name) == 0 || len(name) > 64 {
		return false
	}
	for i := 0; i < len(name); i++ {
		c := name[i]
		switch {
		case 'a' <= c && c <= 'z', 'A' <= c && c <= 'Z', '0' <= c && c <= '9',
			c == '_', c == '.', c == '-':
		default:
			return false
		}
	}
	return true
}

// NormalizeType maps a written "type" (or "transport") to its [Type]:
// "streamable_http" and "streamable-http" are [TypeHTTP]. ok is false for
// a transport Switchboard does not know; t is then the input unchanged.
func NormalizeType(s string) (t Type, ok bool) {
	switch s {
	case "stdio":
		return TypeStdio, true
	case "sse":
		return TypeSSE, true
	case "http", "streamable_http", "streamable-http":
		return TypeHTTP, true
	}
	return Type(s), false
}

// InferType returns the transport a definition runs with: its own type
// when written, else stdio when it has a command, else http when it has a
// url, else "".
func InferType(s Server) Type {
	switch {
	case s.Type != "":
		return s.Type
	case s.Command != "":
		return TypeStdio
	case s.URL != "":
		return TypeHTTP
	}
	return ""
}

// knownFields are the server definition fields (docs/configuration.md,
// Server definition), for the unknown
// field warning's suggestion.
var knownFields = []string{
	"type", "transport", "command", "args", "env", "cwd", "url", "headers",
	"enabled", "description", "timeout", "startup_timeout", "defer_loading",
	"tools", "headersHelper", "env_passthrough", "sandbox",
	"enabledTools", "disabledTools", "secrets", "tasks",
}

// IsServerField reports whether name is a field of a server definition
// that Switchboard reads ("command", "disabledTools", "sandbox", …): what
// a tool importing another's definitions may keep.
func IsServerField(name string) bool {
	return slices.Contains(knownFields, name)
}

// serverDef is one parsed definition with its place and problems.
type serverDef struct {
	Name   string
	Server Server // as written; Type has aliases normalized but is not inferred
	Pos    Position
	// hasCommand/hasURL record that the key was present, even if empty.
	hasCommand, hasURL bool
	// urlOff and urlValuePos point at the url's value, for checks after
	// expansion.
	urlOff      int
	urlValuePos Position
	Diags       []Diagnostic
}

// ParseServers parses a JSONC document of the form {"mcpServers": {…}} (a
// config file, an --mcp-config value). It returns every definition found,
// including invalid ones, as written (type aliases normalized, nothing
// inferred or expanded), where each definition's entry starts, and every
// problem found. A definition is invalid exactly when an error diagnostic
// names it (Diagnostic.Server). Diagnostics that name no server are about
// the document itself. file labels positions; it is not read.
//
// The maps are never nil. ParseServers never panics, whatever data holds.
func ParseServers(file string, data []byte) (map[string]Server, map[string]Position, []Diagnostic) {
	doc, diags := parseJSONC(file, data)
	servers := make(map[string]Server)
	positions := make(map[string]Position)
	defs, more := doc.servers(doc.obj)
	diags = append(diags, more...)
	for _, d := range defs {
		servers[d.Name] = d.Server
		positions[d.Name] = d.Pos
		diags = append(diags, d.Diags...)
	}
	return servers, positions, diags
}

// ParseServer parses one server definition (the object that would sit
// under "mcpServers"; JSONC) and validates it and its name, as `mcp
// add-json` needs. Diagnostic positions are line:col within raw and carry
// no file name.
func ParseServer(name string, raw []byte) (Server, []Diagnostic) {
	doc, diags := parseJSONC("", raw)
	if doc.obj == nil {
		return Server{}, diags
	}
	v := hujson.Value{Value: doc.obj}
	// The top-level object starts at the first non-space byte.
	for v.StartOffset < len(raw) && strings.ContainsRune(" \t\r\n", rune(raw[v.StartOffset])) {
		v.StartOffset++
	}
	def := doc.server(name, v.StartOffset, &v)
	diags = append(diags, def.Diags...)
	// A malformed ${secret:…}, or one where it does not expand, makes the
	// server invalid once it sits in a file (Load), so it is refused here
	// too rather than written.
	_, problems := serverSecretRefs(def.Server)
	for _, p := range problems {
		diags = append(diags, Diagnostic{
			Severity: SeverityError, Position: def.Pos, Server: name, Field: p.field,
			Message: p.msg, Fix: p.fix,
		})
	}
	return def.Server, diags
}

// servers reads the "mcpServers" member of obj. A missing member is no
// servers and no problem.
func (d *jsoncDoc) servers(obj *hujson.Object) ([]serverDef, []Diagnostic) {
	m := lookupMember(obj, "mcpServers")
	misses := append(d.serversMisspelt(obj, m != nil), d.profilesMisplaced(obj)...)
	if m == nil || isNull(&m.Value) {
		return nil, misses
	}
	so, ok := m.Value.Value.(*hujson.Object)
	if !ok {
		return nil, []Diagnostic{{
			Severity: SeverityError,
			Position: d.pos(m.Value.StartOffset),
			Field:    "mcpServers",
			Message:  "must be an object mapping server names to definitions, not " + kindName(&m.Value),
			Fix:      `write "mcpServers": { "name": { "command": "…" } }`,
		}}
	}
	defs, diags := d.serverDefs(so)
	return defs, append(misses, diags...)
}

// serversMisspelt warns of each object in obj whose name is a near miss
// of "mcpServers" ("mcpservers", "mcp_servers", VS Code's "servers"): it
// is not read, and without a word the user sees no servers and no reason.
// has says that obj has "mcpServers" too.
func (d *jsoncDoc) serversMisspelt(obj *hujson.Object, has bool) []Diagnostic {
	if obj == nil {
		return nil
	}
	var diags []Diagnostic
	for i := range obj.Members {
		m := &obj.Members[i]
		name := memberName(m)
		folded := strings.ToLower(strings.NewReplacer("_", "", "-", "", " ", "").Replace(name))
		if name == "mcpServers" || (folded != "mcpservers" && folded != "mcpserver" && name != "servers") {
			continue
		}
		if _, ok := m.Value.Value.(*hujson.Object); !ok {
			continue
		}
		fix := fmt.Sprintf("rename %q to \"mcpServers\"", name)
		if has {
			fix = `move its entries into "mcpServers"`
		}
		diags = append(diags, Diagnostic{
			Severity: SeverityWarning, Position: d.pos(m.Name.StartOffset), Field: name,
			Message: `is not read: servers go under "mcpServers"`, Fix: fix,
		})
	}
	return diags
}

// profilesMisplaced warns of a "profiles" object in obj, a servers file:
// profiles are read from settings files only, so --profile would say
// the name is unknown and nothing would say why.
func (d *jsoncDoc) profilesMisplaced(obj *hujson.Object) []Diagnostic {
	m := lookupMember(obj, "profiles")
	if m == nil {
		return nil
	}
	if _, ok := m.Value.Value.(*hujson.Object); !ok {
		return nil
	}
	return []Diagnostic{{
		Severity: SeverityWarning, Position: d.pos(m.Name.StartOffset), Field: "profiles",
		Message: "is not read: profiles go in a settings file, not beside the servers",
		Fix:     `move "profiles" to ~/.switchboard/settings.json, or the repository's .switchboard/settings.json (docs/configuration.md, Profiles)`,
	}}
}

// serverDefs reads the definitions of the "mcpServers" object so.
func (d *jsoncDoc) serverDefs(so *hujson.Object) ([]serverDef, []Diagnostic) {
	var defs []serverDef
	index := make(map[string]int)
	for i := range so.Members {
		mem := &so.Members[i]
		name := memberName(mem)
		def := d.server(name, mem.Name.StartOffset, &mem.Value)
		if j, dup := index[name]; dup {
			// The last definition wins, as in any JSON decoder; say so at
			// the one that is dropped.
			prev := defs[j]
			defs[j] = def
			defs[j].Diags = append([]Diagnostic{{
				Severity: SeverityWarning,
				Position: prev.Pos,
				Server:   name,
				Message:  fmt.Sprintf("defined more than once in this file; the definition at line %d is used", def.Pos.Line),
				Fix:      "remove the duplicate entry",
			}}, def.Diags...)
			continue
		}
		index[name] = len(defs)
		defs = append(defs, def)
	}
	return defs, nil
}

// server parses and validates one definition. nameOff is where its entry
// (the name) starts.
func (d *jsoncDoc) server(name string, nameOff int, v *hujson.Value) serverDef {
	def := serverDef{Name: name, Pos: d.pos(nameOff)}
	errAt := func(off int, field, msg, fix string) {
		def.Diags = append(def.Diags, Diagnostic{
			Severity: SeverityError, Position: d.pos(off),
			Server: name, Field: field, Message: msg, Fix: fix,
		})
	}
	warnAt := func(off int, field, msg, fix string) {
		def.Diags = append(def.Diags, Diagnostic{
			Severity: SeverityWarning, Position: d.pos(off),
			Server: name, Field: field, Message: msg, Fix: fix,
		})
	}
	if !ValidName(name) {
		errAt(nameOff, "", "illegal server name: use 1 to 64 letters, digits, '_', '.' or '-'",
			"rename the server, e.g. "+strconv.Quote(suggestName(name)))
	}
	obj, ok := v.Value.(*hujson.Object)
	if !ok {
		errAt(v.StartOffset, "", "a server definition must be a JSON object, not "+kindName(v),
			`write { "command": "…", "args": […] } or { "type": "http", "url": "https://…" }`)
		return def
	}

	s := &def.Server
	var typeSeen string // which of "type"/"transport" set s.Type
	seen := make(map[string]bool)
	for i := range obj.Members {
		m := &obj.Members[i]
		key := memberName(m)
		val := &m.Value
		off := val.StartOffset
		if seen[key] {
			warnAt(m.Name.StartOffset, key, "field written more than once; the last one is used", "remove the duplicate")
		}
		seen[key] = true
		if isNull(val) {
			continue // null reads as "not set"
		}
		wantString := func() (string, bool) {
			str, ok := stringValue(val)
			if !ok {
				errAt(off, key, "must be a string, not "+kindName(val), fmt.Sprintf(`write "%s": "…"`, key))
			}
			return str, ok
		}
		wantBool := func() (*bool, bool) {
			lit, ok := val.Value.(hujson.Literal)
			if !ok || (lit.Kind() != 't' && lit.Kind() != 'f') {
				errAt(off, key, "must be true or false, not "+kindName(val), fmt.Sprintf(`write "%s": true or false`, key))
				return nil, false
			}
			b := lit.Bool()
			return &b, true
		}
		switch key {
		case "type", "transport":
			str, ok := wantString()
			if !ok {
				break
			}
			t, known := NormalizeType(str)
			if !known {
				errAt(off, key, fmt.Sprintf("unknown transport %q", str), `use "stdio", "sse" or "http"`)
			}
			if typeSeen != "" && s.Type != t {
				errAt(off, key, fmt.Sprintf("%q says %q but %q says %q", key, str, typeSeen, s.Type),
					`keep only one of "type" and "transport"`)
			}
			if typeSeen == "" || s.Type == t {
				s.Type, typeSeen = t, key
			}
		case "command":
			s.Command, def.hasCommand = wantString()
		case "url":
			s.URL, def.hasURL = wantString()
			def.urlOff, def.urlValuePos = off, d.pos(off)
		case "cwd":
			s.Cwd, _ = wantString()
		case "description":
			s.Description, _ = wantString()
		case "headersHelper":
			s.HeadersHelper, _ = wantString()
		case "args":
			s.Args = d.stringArray(val, name, key, &def.Diags)
		case "env_passthrough":
			s.EnvPassthrough = d.stringArray(val, name, key, &def.Diags)
		case "env":
			s.Env = d.stringMap(val, name, key, &def.Diags)
		case "headers":
			s.Headers = d.stringMap(val, name, key, &def.Diags)
		case "enabled":
			s.Enabled, _ = wantBool()
		case "defer_loading":
			s.DeferLoading, _ = wantBool()
		case "timeout":
			s.Timeout = d.millis(val, name, key, &def.Diags)
		case "startup_timeout":
			s.StartupTimeout = d.millis(val, name, key, &def.Diags)
		case "tools":
			s.Tools = d.tools(val, name, &def.Diags)
		case "sandbox":
			s.Sandbox = d.sandbox(val, name, &def.Diags)
		case "enabledTools":
			s.EnabledTools = d.globList(val, name, key, &def.Diags)
		case "disabledTools":
			s.DisabledTools = d.globList(val, name, key, &def.Diags)
		case "secrets":
			str, ok := wantString()
			switch m := SecretsMode(str); {
			case !ok:
			case m == SecretsBlock || m == SecretsRedact || m == SecretsOff:
				s.Secrets = m
			default:
				errAt(off, key, fmt.Sprintf("unknown mode %q", str), `write "secrets": "block", "redact" or "off"`)
			}
		case "tasks":
			if str, ok := wantString(); ok {
				if str != TasksRequired && str != TasksOptional {
					errAt(off, key, fmt.Sprintf("unknown value %q", str),
						`write "tasks": "optional" (also call tools that allow a task as tasks) or "required" (the default)`)
					break
				}
				s.Tasks = str
			}
		default:
			fix := "remove it"
			if near := nearestField(key); near != "" {
				fix = fmt.Sprintf("did you mean %q?", near)
			}
			warnAt(m.Name.StartOffset, key, "unknown field; it is ignored", fix)
			def.Diags[len(def.Diags)-1].UnknownField = true
		}
	}

	// Whole-definition checks, on the written values.
	for _, p := range checkDefinition(*s, def.hasCommand, def.hasURL) {
		off := nameOff
		if p.atURL {
			off = def.urlOff
		}
		def.Diags = append(def.Diags, Diagnostic{
			Severity: p.sev, Position: d.pos(off),
			Server: name, Field: p.field, Message: p.msg, Fix: p.fix,
		})
	}
	return def
}

// problem is a diagnostic before it has a place.
type problem struct {
	sev             Severity
	field, msg, fix string
	atURL           bool // points at the url's value rather than the entry
}

// checkDefinition validates the parts of a definition that depend on each
// other (stdio needs a command, sse and http an http(s) url; a type is
// inferred from which was written). hasCommand/hasURL say the keys were
// written, even empty.
// Field types and the transport name are checked by the parser; a url
// holding ${VAR} is checked after expansion instead.
func checkDefinition(s Server, hasCommand, hasURL bool) []problem {
	var out []problem
	add := func(sev Severity, field, msg, fix string) {
		out = append(out, problem{sev: sev, field: field, msg: msg, fix: fix})
	}
	for _, k := range sortedKeys(s.Env) {
		if why := EnvKeyProblem(k); why != "" {
			add(SeverityError, "env", fmt.Sprintf("the variable name %s %s", quoteKey(k), why),
				"use a plain variable name (letters, digits and '_'); the value goes after the ':'")
		}
	}
	for _, k := range s.EnvPassthrough {
		if why := EnvKeyProblem(k); why != "" {
			add(SeverityError, "env_passthrough", fmt.Sprintf("the variable name %s %s", quoteKey(k), why),
				"list plain variable names (letters, digits and '_')")
		}
	}
	seenHeader := map[string]string{}
	for _, k := range sortedKeys(s.Headers) {
		if prev, ok := seenHeader[strings.ToLower(k)]; ok {
			// A request carries one value per name, and which of the two
			// was set last depends on map order: fail closed.
			add(SeverityError, "headers", fmt.Sprintf("%s and %s are one HTTP header (its name ignores case): only one of them would be sent", quoteKey(prev), quoteKey(k)),
				"keep one of them")
		}
		seenHeader[strings.ToLower(k)] = k
		if !validHeaderName(k) {
			add(SeverityError, "headers", fmt.Sprintf("%s is not a valid HTTP header name", quoteKey(k)),
				`write the name alone ("Authorization"), the value after the ':'`)
		} else if strings.ContainsFunc(s.Headers[k], func(r rune) bool { return r < ' ' && r != '\t' || r == 0x7f }) {
			// HTTP refuses such a value at every request; a line break
			// would start another header where it did not.
			add(SeverityError, "headers", fmt.Sprintf("the value of header %s holds a control character (a line break, say)", quoteKey(k)),
				"write the value on one line, without control characters")
		}
	}
	switch t := InferType(s); t {
	case "":
		switch {
		case hasCommand:
			add(SeverityError, "command", "command is empty", `set "command" to the program to run`)
		case hasURL:
			add(SeverityError, "url", "url is empty", `set "url" to the server's http(s) address`)
		default:
			add(SeverityError, "", `neither "command" nor "url" is set`,
				`add "command" (and "args") for a local server, or "url" for a remote one`)
		}
	case TypeStdio:
		if s.Command == "" {
			add(SeverityError, "command", "a stdio server needs a command", `add "command": the program to run`)
		}
		if s.URL != "" {
			add(SeverityWarning, "url", "ignored: a stdio server is started from its command, not reached by url",
				`remove "url", or set "type": "http" for a remote server`)
		}
	case TypeSSE, TypeHTTP:
		if s.URL == "" {
			add(SeverityError, "url", fmt.Sprintf("an %s server needs a url", t), `add "url": "https://…"`)
		} else if !strings.Contains(s.URL, "${") {
			if msg := checkURL(s.URL); msg != "" {
				out = append(out, problem{sev: SeverityError, field: "url", msg: msg, fix: fixURL, atURL: true})
			}
		}
		if s.Command != "" {
			add(SeverityWarning, "command", fmt.Sprintf("ignored: an %s server is reached by its url, not started", t),
				`remove "command", or drop "type" for a local server`)
		}
	}
	return out
}

// EnvKeyProblem says why k cannot be the name of an environment variable,
// or returns "". A name holding '=' would reach the process as another
// variable ("NODE_OPTIONS=--require x" is NODE_OPTIONS), hiding a
// dangerous one from the approval prompt; NUL and other control bytes are
// refused by every platform or cut the entry short. Embedders handing
// servers in directly are held to the same rule by the host.
func EnvKeyProblem(k string) string {
	switch {
	case k == "":
		return "is empty"
	case strings.ContainsRune(k, '='):
		return "contains '=', which would make it another variable"
	}
	for _, r := range k {
		if r < 0x20 || r == 0x7f {
			return "contains a control character"
		}
	}
	if !utf8.ValidString(k) {
		return "is not valid UTF-8"
	}
	return ""
}

// validHeaderName reports whether k is an HTTP field name (RFC 9110 token).
func validHeaderName(k string) bool {
	if k == "" {
		return false
	}
	for i := 0; i < len(k); i++ {
		c := k[i]
		switch {
		case 'a' <= c && c <= 'z', 'A' <= c && c <= 'Z', '0' <= c && c <= '9':
		case strings.IndexByte("!#$%&'*+-.^_`|~", c) >= 0:
		default:
			return false
		}
	}
	return true
}

// quoteKey quotes a written key for a message, escaping what a terminal
// would act on.
func quoteKey(k string) string { return strconv.QuoteToASCII(k) }

const fixURL = `write a full address such as "https://example.com/mcp"`

// checkURL returns why u is not a usable http(s) URL, or "".
func checkURL(u string) string {
	p, err := url.Parse(u)
	if err != nil {
		return "not a valid URL: " + strings.TrimPrefix(err.Error(), "parse "+strconv.Quote(u)+": ")
	}
	if s := strings.ToLower(p.Scheme); s != "http" && s != "https" {
		if p.Scheme == "" {
			return "the url must start with http:// or https://"
		}
		return fmt.Sprintf("the url scheme must be http or https, not %q", p.Scheme)
	}
	if p.Host == "" {
		return "the url has no host"
	}
	return ""
}

func (d *jsoncDoc) stringArray(v *hujson.Value, server, key string, diags *[]Diagnostic) []string {
	arr, ok := v.Value.(*hujson.Array)
	if !ok {
		*diags = append(*diags, Diagnostic{
			Severity: SeverityError, Position: d.pos(v.StartOffset),
			Server: server, Field: key,
			Message: "must be an array of strings, not " + kindName(v),
			Fix:     fmt.Sprintf(`write "%s": ["…", "…"]`, key),
		})
		return nil
	}
	out := make([]string, 0, len(arr.Elements))
	for i := range arr.Elements {
		e := &arr.Elements[i]
		s, ok := stringValue(e)
		if !ok {
			*diags = append(*diags, Diagnostic{
				Severity: SeverityError, Position: d.pos(e.StartOffset),
				Server: server, Field: key,
				Message: fmt.Sprintf("item %d must be a string, not %s", i, kindName(e)),
				Fix:     "quote it: every item is passed as a string",
			})
			continue
		}
		out = append(out, s)
	}
	return out
}

func (d *jsoncDoc) stringMap(v *hujson.Value, server, key string, diags *[]Diagnostic) map[string]string {
	obj, ok := v.Value.(*hujson.Object)
	if !ok {
		*diags = append(*diags, Diagnostic{
			Severity: SeverityError, Position: d.pos(v.StartOffset),
			Server: server, Field: key,
			Message: "must be an object of string values, not " + kindName(v),
			Fix:     fmt.Sprintf(`write "%s": { "NAME": "value" }`, key),
		})
		return nil
	}
	out := make(map[string]string, len(obj.Members))
	for i := range obj.Members {
		m := &obj.Members[i]
		k := memberName(m)
		s, ok := stringValue(&m.Value)
		if !ok {
			// The value is never quoted: env and header values hold secrets.
			*diags = append(*diags, Diagnostic{
				Severity: SeverityError, Position: d.pos(m.Value.StartOffset),
				Server: server, Field: key + "." + k,
				Message: "must be a string, not " + kindName(&m.Value),
				Fix:     "quote the value",
			})
			continue
		}
		out[k] = s
	}
	return out
}

// millis reads a non-negative whole number of milliseconds.
func (d *jsoncDoc) millis(v *hujson.Value, server, key string, diags *[]Diagnostic) int {
	bad := func(msg string) int {
		*diags = append(*diags, Diagnostic{
			Severity: SeverityError, Position: d.pos(v.StartOffset),
			Server: server, Field: key, Message: msg,
			Fix: fmt.Sprintf(`write "%s": 30000 (milliseconds)`, key),
		})
		return 0
	}
	lit, ok := v.Value.(hujson.Literal)
	if !ok || lit.Kind() != '0' {
		return bad("must be a number of milliseconds, not " + kindName(v))
	}
	f, err := strconv.ParseFloat(string(lit), 64)
	switch {
	case err != nil && !strings.Contains(err.Error(), "range"):
		return bad("must be a number of milliseconds")
	case f < 0:
		return bad("must not be negative")
	case f != math.Trunc(f):
		return bad("must be a whole number of milliseconds")
	case err != nil || f > math.MaxInt32:
		return bad(fmt.Sprintf("is too large (at most %d ms)", math.MaxInt32))
	}
	return int(f)
}

func (d *jsoncDoc) tools(v *hujson.Value, server string, diags *[]Diagnostic) map[string]ToolConfig {
	obj, ok := v.Value.(*hujson.Object)
	if !ok {
		*diags = append(*diags, Diagnostic{
			Severity: SeverityError, Position: d.pos(v.StartOffset),
			Server: server, Field: "tools",
			Message: "must be an object keyed by tool name, not " + kindName(v),
			Fix:     `write "tools": { "tool_name": { "defer_loading": true } }`,
		})
		return nil
	}
	out := make(map[string]ToolConfig, len(obj.Members))
	for i := range obj.Members {
		m := &obj.Members[i]
		tool := memberName(m)
		field := "tools." + tool
		to, ok := m.Value.Value.(*hujson.Object)
		if !ok {
			*diags = append(*diags, Diagnostic{
				Severity: SeverityError, Position: d.pos(m.Value.StartOffset),
				Server: server, Field: field,
				Message: "must be an object, not " + kindName(&m.Value),
				Fix:     `write { "defer_loading": true }`,
			})
			continue
		}
		var tc ToolConfig
		for j := range to.Members {
			tm := &to.Members[j]
			if memberName(tm) != "defer_loading" {
				*diags = append(*diags, Diagnostic{
					Severity: SeverityWarning, Position: d.pos(tm.Name.StartOffset),
					Server: server, Field: field + "." + memberName(tm),
					Message: "unknown field; it is ignored", Fix: `the only per-tool field is "defer_loading"`,
				})
				continue
			}
			if isNull(&tm.Value) {
				continue
			}
			lit, ok := tm.Value.Value.(hujson.Literal)
			if !ok || (lit.Kind() != 't' && lit.Kind() != 'f') {
				*diags = append(*diags, Diagnostic{
					Severity: SeverityError, Position: d.pos(tm.Value.StartOffset),
					Server: server, Field: field + ".defer_loading",
					Message: "must be true or false, not " + kindName(&tm.Value),
					Fix:     `write "defer_loading": true or false`,
				})
				continue
			}
			b := lit.Bool()
			tc.DeferLoading = &b
		}
		out[tool] = tc
	}
	return out
}

// nearestField suggests the known field closest to a misspelt one, or "".
func nearestField(key string) string {
	best, bestDist := "", 3 // suggest only within two edits
	lk := strings.ToLower(key)
	for _, f := range knownFields {
		if strings.ToLower(f) == lk || strings.ReplaceAll(strings.ToLower(f), "_", "") == strings.ReplaceAll(lk, "_", "") {
			return f
		}
		if dist := editDistance(lk, strings.ToLower(f)); dist < bestDist {
			best, bestDist = f, dist
		}
	}
	return best
}

func editDistance(a, b string) int {
	if len(a) > 64 || len(b) > 64 {
		return math.MaxInt
	}
	prev := make([]int, len(b)+1)
	cur := make([]int, len(b)+1)
	for j := range prev {
		prev[j] = j
	}
	for i := 1; i <= len(a); i++ {
		cur[0] = i
		for j := 1; j <= len(b); j++ {
			cost := 1
			if a[i-1] == b[j-1] {
				cost = 0
			}
			cur[j] = min(prev[j]+1, cur[j-1]+1, prev[j-1]+cost)
		}
		prev, cur = cur, prev
	}
	return prev[len(b)]
}

// suggestName turns an illegal name into a legal one for the fix line.
func suggestName(name string) string {
	var b strings.Builder
	for _, r := range name {
		if r < 128 && ValidName(string(r)) {
			b.WriteRune(r)
		} else {
			b.WriteByte('_')
		}
		if b.Len() == 64 {
			break
		}
	}
	if b.Len() == 0 {
		return "server"
	}
	return b.String()
}

// sortedKeys returns m's keys in order.
func sortedKeys[V any](m map[string]V) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	return keys
}

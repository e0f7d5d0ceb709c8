package config

import (
	"fmt"
	"sort"
)

// Type is a server's transport, normalized: "stdio", "sse" or "http".
type Type string

// The transports a server definition may name. "streamable_http" and
// "streamable-http" are read as TypeHTTP.
const (
	TypeStdio Type = "stdio"
	TypeSSE   Type = "sse"
	TypeHTTP  Type = "http"
)

// Scope says where a server definition came from (docs/configuration.md,
// Files and scopes, and Precedence).
type Scope string

// Scopes, lowest to highest precedence among the everyday three
// (user < project < local); managed servers override all of them.
const (
	ScopeUser    Scope = "user"
	ScopeProject Scope = "project"
	ScopeLocal   Scope = "local"
	ScopeManaged Scope = "managed"
	// ScopeFlag marks servers given with --mcp-config for one run.
	ScopeFlag Scope = "flag"
	// ScopeSession marks servers an embedder handed to a session directly.
	ScopeSession Scope = "session"
)

// Trust is the launch-trust level a server's provenance earns (see package
// trust). Load sets it ([TrustFor] of the server's scope). There is
// no default: a ResolvedServer built by hand must set it, and one whose
// Trust is empty (the zero value) or any other value is not started: the
// host puts it in state error, its reason naming this field, rather than
// guess that nobody's definition is the user's own.
type Trust string

const (
	// TrustUser: the user typed (or an administrator or embedder supplied)
	// the definition; it starts without asking.
	TrustUser Trust = "user"
	// TrustRepo: the repository wrote the definition (project scope); it
	// never starts before the user approves its fingerprint.
	TrustRepo Trust = "repo"
)

// TrustFor returns the trust level of a scope: project scope is
// repo-authored, everything else was put there by a person or program the
// user already trusts.
func TrustFor(s Scope) Trust {
	if s == ScopeProject {
		return TrustRepo
	}
	return TrustUser
}

// ToolConfig is the per-tool part of a server definition.
type ToolConfig struct {
	// DeferLoading overrides the server's DeferLoading for this tool.
	DeferLoading *bool `json:"defer_loading,omitempty"`
}

// Server is one MCP server definition (docs/configuration.md, Server
// definition). Field values are as written
// unless the Server came from [ResolvedServer.Effective], where the fields
// that expansion names (command, args, env values, url, header values)
// have had ${VAR} expanded.
type Server struct {
	Type           Type                  `json:"type,omitempty"`
	Command        string                `json:"command,omitempty"`
	Args           []string              `json:"args,omitempty"`
	Env            map[string]string     `json:"env,omitempty"`
	Cwd            string                `json:"cwd,omitempty"`
	URL            string                `json:"url,omitempty"`
	Headers        map[string]string     `json:"headers,omitempty"`
	Enabled        *bool                 `json:"enabled,omitempty"`
	Description    string                `json:"description,omitempty"`
	Timeout        int                   `json:"timeout,omitempty"`         // per call, ms
	StartupTimeout int                   `json:"startup_timeout,omitempty"` // ms
	DeferLoading   *bool                 `json:"defer_loading,omitempty"`
	Tools          map[string]ToolConfig `json:"tools,omitempty"`
	HeadersHelper  string                `json:"headersHelper,omitempty"`
	EnvPassthrough []string              `json:"env_passthrough,omitempty"`
	// Sandbox confines a stdio server (docs/security.md, Sandbox); nil: the
	// scope's default.
	Sandbox *Sandbox `json:"sandbox,omitempty"`
	// EnabledTools and DisabledTools filter the tools the model sees
	// (globs of tool names, '*' any run of characters); see [ToolFilter].
	// They hide tools and change nothing about what runs, so launch trust
	// does not fingerprint them.
	EnabledTools  []string `json:"enabledTools,omitempty"`
	DisabledTools []string `json:"disabledTools,omitempty"`
	// Secrets is what happens to credentials of a known shape in the
	// server's results and in the arguments of its calls
	// (docs/security.md, What the model reads): "block", "redact" or
	// "off" ("" is off). The secret values Switchboard gave any server are
	// replaced in every result whatever it says. It changes nothing about
	// what runs, so launch trust does not fingerprint it.
	Secrets SecretsMode `json:"secrets,omitempty"`
	// Tasks says which tools are called as MCP tasks (protocol
	// 2025-11-25, where the client chooses): [TasksRequired] (the
	// default, also for "") only those whose execution.taskSupport is
	// "required", [TasksOptional] also those for which it is "optional".
	// On 2026-07-28 the server decides.
	Tasks string `json:"tasks,omitempty"`
}

// SecretsMode is a server's "secrets" field.
type SecretsMode string

const (
	// SecretsOff: only the secret values Switchboard gave servers are
	// replaced in results.
	SecretsOff SecretsMode = "off"
	// SecretsRedact: credentials of a known shape in results are replaced
	// too.
	SecretsRedact SecretsMode = "redact"
	// SecretsBlock: a call whose arguments hold a credential of a known
	// shape, or a secret value Switchboard gave a server, is refused, and
	// so is a result holding a credential of a known shape.
	SecretsBlock SecretsMode = "block"
)

// The values of [Server].Tasks.
const (
	TasksRequired = "required"
	TasksOptional = "optional"
)

// IsEnabled reports the definition's own "enabled" field (default true).
func (s Server) IsEnabled() bool { return s.Enabled == nil || *s.Enabled }

// Severity of a [Diagnostic].
type Severity string

const (
	SeverityError   Severity = "error"
	SeverityWarning Severity = "warning"
)

// Position is a place in a config file. Line and Col are 1-based; zero
// means unknown.
type Position struct {
	File string `json:"file,omitempty"`
	Line int    `json:"line,omitempty"`
	Col  int    `json:"col,omitempty"`
}

// String renders "file:line:col", dropping what is unknown.
func (p Position) String() string {
	switch {
	case p.File == "":
		return ""
	case p.Line == 0:
		return p.File
	case p.Col == 0:
		return fmt.Sprintf("%s:%d", p.File, p.Line)
	}
	return fmt.Sprintf("%s:%d:%d", p.File, p.Line, p.Col)
}

// Diagnostic is one problem found while loading configuration. Errors make
// the server they name unusable (state "error"); they never hide other
// servers.
type Diagnostic struct {
	Severity Severity `json:"severity"`
	Position
	Server  string `json:"server,omitempty"`
	Field   string `json:"field,omitempty"`
	Message string `json:"message"`
	// Fix says, in one line, what the user can do about it, in terms of
	// the files (it names no command of any front end).
	Fix string `json:"fix,omitempty"`
	// Undefined marks the warning for a name enabledMcpServers lists that
	// no configuration defines, so a front end can offer its own way to
	// define it. It is not part of the JSON form.
	Undefined bool `json:"-"`
	// UnknownField marks the warning for a field of a server definition
	// that Switchboard does not read (a typo such as "comand" is the usual
	// reason; Fix then suggests the field meant), so that a front end
	// writing a new definition can refuse it. It is not part of the JSON
	// form.
	UnknownField bool `json:"-"`
}

// Error renders the diagnostic as one line: "file:line:col: server "x":
// field "y": message (fix: …)".
func (d Diagnostic) Error() string {
	s := ""
	if p := d.Position.String(); p != "" {
		s = p + ": "
	}
	if d.Server != "" {
		s += fmt.Sprintf("server %q: ", d.Server)
	}
	if d.Field != "" {
		s += fmt.Sprintf("field %q: ", d.Field)
	}
	s += d.Message
	if d.Fix != "" {
		s += " (fix: " + d.Fix + ")"
	}
	return s
}

// Availability is why a resolved server will or will not be started,
// before any runtime state: the workspace layer and managed policy
// (docs/configuration.md, Workspace enablement and availability). Load
// always sets it. The zero value, of a ResolvedServer built by hand, is
// taken as Available: nothing switched the server off, and launch trust
// still decides whether it starts (Trust has no such default). Any other
// value does not start.
type Availability string

const (
	// Available: enabled, valid, to be started (subject to launch trust).
	Available Availability = "available"
	// Disabled: switched off by its "enabled" field, the workspace layer,
	// "disabledMcpServers", or managed policy; see DisabledReason.
	Disabled Availability = "disabled"
	// Missing: the workspace enables a name no scope defines.
	Missing Availability = "missing"
	// Invalid: the definition has an error diagnostic.
	Invalid Availability = "invalid"
)

// ResolvedServer is the effective definition of one server name after
// scopes, workspace enablement and managed policy have been applied.
type ResolvedServer struct {
	Name string `json:"name"`
	// Written is the definition exactly as the file holds it (before ${VAR}
	// expansion): what launch trust fingerprints.
	Written Server `json:"written"`
	// Effective is Written with ${VAR} expanded where expansion applies and
	// Type inferred: what the runtime starts, once it has replaced the
	// ${secret:NAME} references Effective keeps as written (see Secrets).
	Effective Server `json:"effective"`
	Scope     Scope  `json:"scope"`
	// File holds the definition ("" for servers handed in by an embedder
	// or given as inline --mcp-config JSON).
	File string `json:"file,omitempty"`
	// Trust must be TrustUser or TrustRepo (see [Trust]): a server of
	// any other trust, the empty one included, does not start.
	Trust Trust `json:"trust"`
	// Pos is where the server's entry starts in File.
	Pos            Position     `json:"pos"`
	Availability   Availability `json:"availability"`
	DisabledReason string       `json:"disabledReason,omitempty"`
	// Shadows lists lower-precedence scopes that also define this name.
	Shadows     []Scope      `json:"shadows,omitempty"`
	Diagnostics []Diagnostic `json:"diagnostics,omitempty"`
	// MissingEnv lists the ${VAR} names that were unset with no default.
	MissingEnv []string `json:"missingEnv,omitempty"`
	// Secrets lists the names of the secrets Written refers to as
	// ${secret:NAME} in env values, header values and url, sorted: what
	// the runtime looks up ([ResolveSecrets]) when the server may start,
	// and never before. Effective keeps those references as written.
	Secrets []string `json:"secrets,omitempty"`
	// Tools is every tool filter that applies to this server: its own
	// definition's, then the managed, local and workspace layers' (see
	// [ToolFilter]). A tool is shown only if every layer lets it through.
	Tools ToolFilter `json:"toolFilter,omitempty"`
}

// Err returns the first error diagnostic, or nil.
func (r *ResolvedServer) Err() error {
	for _, d := range r.Diagnostics {
		if d.Severity == SeverityError {
			return d
		}
	}
	return nil
}

// Files records which configuration files a resolution read (or would
// write), for the status footer and doctor.
type Files struct {
	User      string   `json:"user"`
	Project   string   `json:"project,omitempty"`
	Local     string   `json:"local"` // the user file; local servers live under "projects"
	Managed   string   `json:"managed"`
	Workspace string   `json:"workspace,omitempty"` // .switchboard/workspace.json
	Flags     []string `json:"flags,omitempty"`     // --mcp-config sources
	// Searched lists every file Load looked for, whether it was there or
	// not: the files it read and, in each scope, the files before them
	// that it found missing (~/.switchboard/mcp.json while the legacy
	// ~/.switchboard.json is in use, or both while neither exists). A file
	// appearing, changing or going away at one of these paths can change
	// what Load returns; at any other path it cannot (settings files
	// aside: they are the policy package's). A long-running host watches
	// them and reloads (docs/gateway.md, Live reload).
	Searched []string `json:"-"`
	// Unsettled lists the files that read empty while the LoadOptions'
	// LastGood held contents for them: their last good contents are in
	// effect, since a writer may be half-way through (most truncate a
	// file first). A reloader reads again once they have stopped
	// changing, and calls LastGood.Forget for one still empty then: an
	// empty file that stays empty is a real edit.
	Unsettled []string `json:"-"`
}

// Resolved is the whole configuration view for one workspace: what the
// runtime consumes. It is built from data only: no process, socket or clock.
type Resolved struct {
	// Workspace is the absolute project root ("" when none was found).
	Workspace string           `json:"workspace"`
	Servers   []ResolvedServer `json:"servers"` // sorted by name
	Files     Files            `json:"files"`
	// Diagnostics holds file-level problems (a file that does not parse,
	// is a directory, cannot be read) and every server diagnostic too.
	Diagnostics []Diagnostic `json:"diagnostics,omitempty"`
}

// Server returns the resolved server with that name, or nil.
func (r *Resolved) Server(name string) *ResolvedServer {
	i := sort.Search(len(r.Servers), func(i int) bool { return r.Servers[i].Name >= name })
	if i < len(r.Servers) && r.Servers[i].Name == name {
		return &r.Servers[i]
	}
	for i := range r.Servers { // tolerate an unsorted slice built by hand
		if r.Servers[i].Name == name {
			return &r.Servers[i]
		}
	}
	return nil
}

// HasErrors reports whether any error diagnostic was found.
func (r *Resolved) HasErrors() bool {
	for _, d := range r.Diagnostics {
		if d.Severity == SeverityError {
			return true
		}
	}
	return false
}

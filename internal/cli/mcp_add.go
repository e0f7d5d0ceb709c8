package cli

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"net/url"
	"os"
	"runtime"
	"slices"
	"strconv"
	"strings"

	"github.com/spf13/cobra"
	"github.com/tailscale/hujson"

	"github.com/switchboard-mcp/switchboard/config"
	"github.com/switchboard-mcp/switchboard/internal/filelock"
	"github.com/switchboard-mcp/switchboard/internal/redact"
	"github.com/switchboard-mcp/switchboard/internal/termsafe"
	"github.com/switchboard-mcp/switchboard/policy"
)

// MCPAddOptions are the inputs of `mcp add`.
type MCPAddOptions struct {
	IO      *IOStreams
	Factory *Factory

	Scope     string   // --scope: user, project or local (default)
	ScopeSet  bool     // --scope was given (else no workspace means user)
	Transport string   // --transport: stdio, sse or http ("" infers)
	Env       []string // -e K=V, repeatable
	Headers   []string // -H "K: V", repeatable
	Force     bool     // --force: replace an existing entry of that name

	// FromRegistry is --from-registry NAME[@VERSION]: the definition comes
	// from the MCP Registry (mcp_registry.go); Registry is --registry URL.
	FromRegistry string
	Registry     string
	// Yes is --yes: write a registry definition's runner options without
	// asking (for scripts; they are shown first).
	Yes bool

	Name string
	// Rest is the command and its arguments, or the URL.
	Rest []string
	// DashAt is how many arguments came before "--" (-1: no "--").
	DashAt int
}

// NewMCPAddCmd returns `mcp add`; runF, if not nil, replaces mcpAddRun.
func NewMCPAddCmd(f *Factory, runF func(context.Context, *MCPAddOptions) error) *cobra.Command {
	opts := &MCPAddOptions{IO: f.IO, Factory: f}
	cmd := &cobra.Command{
		Use:   "add [flags] NAME -- CMD [ARG...] | add --transport http|sse NAME URL",
		Short: "Add a server (a local command, or a remote URL)",
		Long: `Add a server to a scope's configuration file.

A local (stdio) server runs a command; put it after "--" so that its own flags
are not read as switchboard's:
  switchboard mcp add time -- uvx mcp-server-time --local-timezone=UTC
  switchboard mcp add -e GITHUB_TOKEN='${GITHUB_TOKEN}' gh -- github-mcp-server stdio

A remote server has a URL (a single URL argument means --transport http).
Quote a header in single quotes, so that the shell leaves ${TOKEN} for
Switchboard to expand when it connects (and the secret out of the file):
  switchboard mcp add --transport http -H 'Authorization: Bearer ${TOKEN}' api https://api.example.com/mcp

The scope is local (this workspace, private to you) unless --scope says user
or project; outside any workspace it is user. The project file (.mcp.json) is
shared through the repository: a credential given with -e or -H is written
there as ${VAR} (an auth scheme such as "Bearer " kept), and the note says
which variable to set.`,
		Example: `  switchboard mcp add fs -- npx -y @modelcontextprotocol/server-filesystem ~/src
  switchboard mcp add --scope user --transport sse events https://example.com/sse
  switchboard mcp add --from-registry io.github.owner/weather -e 'API_KEY=${API_KEY}'`,
		Args: func(cmd *cobra.Command, args []string) error {
			if len(args) == 0 && !cmd.Flags().Changed("from-registry") {
				return Usagef("usage: switchboard mcp add NAME -- CMD [ARG...]", "mcp add needs a server name")
			}
			return nil
		},
		ValidArgsFunction: cobra.NoFileCompletions,
		RunE: func(cmd *cobra.Command, args []string) error {
			if len(args) > 0 {
				opts.Name, opts.Rest = args[0], args[1:]
			}
			opts.ScopeSet = cmd.Flags().Changed("scope")
			opts.DashAt = cmd.ArgsLenAtDash()
			if opts.DashAt == 0 {
				// "mcp add -- NAME CMD…": the name came after the dash.
				opts.DashAt = -1
			}
			if opts.Yes && opts.FromRegistry == "" {
				return Usagef("--yes confirms what --from-registry shows; a server you type needs no confirming", "--yes without --from-registry")
			}
			if runF != nil {
				return runF(cmd.Context(), opts)
			}
			if opts.FromRegistry != "" {
				return mcpAddFromRegistryRun(cmd.Context(), opts)
			}
			return mcpAddRun(cmd.Context(), opts)
		},
	}
	fl := cmd.Flags()
	fl.StringVarP(&opts.Scope, "scope", "s", "local", "where to write: user, project or local")
	fl.StringVarP(&opts.Transport, "transport", "t", "", "stdio, sse or http (default: http for a URL, else stdio)")
	fl.StringArrayVarP(&opts.Env, "env", "e", nil, "environment variable `KEY=value` for a stdio server (repeatable)")
	fl.StringArrayVarP(&opts.Headers, "header", "H", nil, "HTTP header `\"Name: value\"` for an http or sse server (repeatable)")
	fl.BoolVar(&opts.Force, "force", false, "replace an existing server of that name in the scope")
	fl.StringVar(&opts.FromRegistry, "from-registry", "", "install `NAME[@VERSION]` from the MCP Registry (see mcp search); -e gives its values")
	fl.BoolVarP(&opts.Yes, "yes", "y", false, "with --from-registry: write without asking, the runner options it shows included")
	fl.StringVar(&opts.Registry, "registry", "", "the registry's `URL` for --from-registry (default $SWITCHBOARD_REGISTRY_URL, settings' \"registry\", else the official one)")
	registerScopeCompletion(cmd)
	_ = cmd.RegisterFlagCompletionFunc("transport", cobra.FixedCompletions([]string{"stdio", "sse", "http"}, cobra.ShellCompDirectiveNoFileComp))
	return cmd
}

func registerScopeCompletion(cmd *cobra.Command) {
	_ = cmd.RegisterFlagCompletionFunc("scope", cobra.FixedCompletions([]string{"local", "project", "user"}, cobra.ShellCompDirectiveNoFileComp))
}

// addDef is the definition `mcp add` writes, in the key order people
// expect to read.
type addDef struct {
	Type    config.Type       `json:"type"`
	Command string            `json:"command,omitempty"`
	Args    []string          `json:"args,omitempty"`
	Env     map[string]string `json:"env,omitempty"`
	URL     string            `json:"url,omitempty"`
	Headers map[string]string `json:"headers,omitempty"`
}

func mcpAddRun(ctx context.Context, opts *MCPAddOptions) error {
	scope, err := defaultScope(opts.Factory, opts.Scope, opts.ScopeSet)
	if err != nil {
		return err
	}
	if err := checkNewName(opts.Name); err != nil {
		return err
	}
	def, err := opts.definition(scope == config.ScopeProject)
	if err != nil {
		return err
	}
	raw, err := marshalNoEscape(def)
	if err != nil {
		return err
	}
	// The same validation the loader applies (URL scheme and the like).
	if _, diags := config.ParseServer(opts.Name, raw); hasError(diags) {
		d := firstError(diags)
		return Usagef(d.Fix, "server %q: %s", opts.Name, d.Message)
	}
	return writeServer(opts.Factory, scope, opts.Name, raw, opts.Force, string(def.Type))
}

// definition builds the server definition from the flags and arguments.
// shared says it goes to the repository's file, where writeServer puts
// ${VAR} in place of a credential (so -H's warning about one is not due).
func (opts *MCPAddOptions) definition(shared bool) (addDef, error) {
	var def addDef
	transport := opts.Transport
	if transport == "" {
		transport = "stdio"
		if len(opts.Rest) == 1 && looksLikeURL(opts.Rest[0]) && opts.DashAt < 1 {
			transport = "http"
		}
	}
	t, ok := config.NormalizeType(transport)
	if !ok {
		return def, Usagef("use --transport stdio, sse or http", "unknown transport %q", transport)
	}
	def.Type = t
	switch t {
	case config.TypeStdio:
		if len(opts.Rest) == 0 {
			return def, Usagef(fmt.Sprintf("usage: switchboard mcp add %s -- CMD [ARG...]", opts.Name),
				"server %q has no command to run", opts.Name)
		}
		if len(opts.Headers) > 0 {
			return def, Usagef("headers are for http and sse servers; give a stdio server its secrets with -e KEY=value",
				"-H given for stdio server %q", opts.Name)
		}
		if err := oneWordCommand(opts.Name, opts.Rest[0]); err != nil {
			return def, err
		}
		def.Command, def.Args = opts.Rest[0], opts.Rest[1:]
		env, err := parsePairs(opts.Env, "=", "-e", "write -e KEY=value")
		if err != nil {
			return def, err
		}
		def.Env = env
	default:
		if len(opts.Rest) == 0 {
			return def, Usagef(fmt.Sprintf("usage: switchboard mcp add --transport %s %s URL", t, opts.Name),
				"%s server %q has no URL", t, opts.Name)
		}
		if len(opts.Rest) > 1 {
			return def, Usagef(fmt.Sprintf("usage: switchboard mcp add --transport %s %s URL (for a local command use --transport stdio)", t, opts.Name),
				"%s server %q takes one URL, got %d arguments", t, opts.Name, len(opts.Rest))
		}
		if len(opts.Env) > 0 {
			return def, Usagef(`environment variables are for stdio servers; send values to a remote server with -H "Name: value"`,
				"-e given for %s server %q", t, opts.Name)
		}
		def.URL = opts.Rest[0]
		headers, err := parsePairs(opts.Headers, ":", "-H", `write -H "Name: value"`)
		if err != nil {
			return def, err
		}
		def.Headers = headers
		for _, k := range sortedKeys(headers) {
			if _, v := splitScheme(strings.TrimSpace(headers[k])); shared && isLiteralCredential(k, v) {
				continue // written as ${VAR} (writeServer says so)
			}
			if w := headerWarning(k, headers[k]); w != "" {
				fmt.Fprintf(opts.IO.ErrOut, "warning: %s\n", w)
			}
		}
	}
	return def, nil
}

// oneWordCommand refuses a command given as one quoted word holding spaces
// (`mcp add x -- "npx -y pkg"`): the server is started without a shell, so
// that is a program named "npx -y pkg", which does not exist. A program
// whose path has spaces, and that exists, is fine.
func oneWordCommand(name, command string) error {
	words := strings.Fields(command)
	if len(words) < 2 || pathExists(command) {
		return nil
	}
	return Usagef(fmt.Sprintf("give the command and its arguments as separate words, unquoted: switchboard mcp add %s -- %s", name, shellJoin(words[0], words[1:])),
		"%q is one word holding spaces: the server is started without a shell, so it would look for a program of that name", command)
}

// headerWarning says what is likely wrong with a header given to -H: an
// empty value (the shell expanded "$TOKEN" in double quotes to nothing),
// or one that looks like a credential written out in full (the shell
// expanded it, and the file would hold it in clear).
func headerWarning(name, value string) string {
	v := strings.TrimSpace(value)
	if strings.Contains(v, "${") {
		return ""
	}
	if f := strings.Fields(v); len(f) == 2 && strings.EqualFold(f[0], "bearer") {
		v = f[1]
	} else if len(f) == 1 && strings.EqualFold(f[0], "bearer") {
		v = ""
	}
	switch {
	case v == "":
		return fmt.Sprintf("header %s has an empty value; if you wrote \"$VAR\" in double quotes, the shell replaced it (with nothing): write -H '%s: ${VAR}' in single quotes so that Switchboard expands it when it connects", termsafe.Line(name), termsafe.Line(name))
	case redact.LooksSecret(v):
		return fmt.Sprintf("header %s holds what looks like a credential, written into the file in clear; to keep it out, write -H '%s: ${VAR}' in single quotes and set VAR in the environment", termsafe.Line(name), termsafe.Line(name))
	}
	return ""
}

// defaultScope is the scope to write: --scope when given; else local in a
// workspace, and user outside any (said in one line), so that a first
// `mcp add` in the home directory works instead of asking for a flag.
func defaultScope(f *Factory, flag string, set bool) (config.Scope, error) {
	return defaultScopeFor(f, flag, set, "the server goes")
}

// defaultScopeFor is defaultScope, its note saying what goes to user
// scope ("the servers go").
func defaultScopeFor(f *Factory, flag string, set bool, what string) (config.Scope, error) {
	scope, say, err := defaultScopeNote(f, flag, set, what)
	say()
	return scope, err
}

// defaultScopeNote is defaultScopeFor, its note said by say (a no-op when
// there is none) when the caller is sure to write something.
func defaultScopeNote(f *Factory, flag string, set bool, what string) (_ config.Scope, say func(), _ error) {
	say = func() {}
	scope, err := parseScope(flag)
	if err != nil || set || scope != config.ScopeLocal {
		return scope, say, err
	}
	if _, ok := f.WorkspaceRoot(); !ok {
		say = func() {
			fmt.Fprintf(f.IO.ErrOut, "note: no workspace here (no .mcp.json, .switchboard/ or .git above %s), so %s to user scope, for every workspace\n", termsafe.Line(f.tilde(f.Cwd)), what)
		}
		return config.ScopeUser, say, nil
	}
	return scope, say, nil
}

// writeServer writes the definition raw under name in scope, refusing to
// replace an existing entry unless force, and says what it did.
func writeServer(f *Factory, scope config.Scope, name string, raw []byte, force bool, kind string) error {
	t, err := f.target(scope)
	if err != nil {
		return err
	}
	// A name already in another spelling's entry of this workspace is
	// replaced there, not defined twice.
	var exists bool
	t.ObjPath, exists, err = t.holder(name)
	if err != nil {
		return configFileErr(err)
	}
	if exists && !force {
		return Usagef(fmt.Sprintf("pass --force to replace it, or remove it first: switchboard mcp remove %s --scope %s", name, scope),
			"server %q already exists in %s", name, t.describe(f))
	}
	if r, err := f.LoadConfig(); err == nil {
		if other := sameNameAs(r, name); other != nil {
			return Usagef(fmt.Sprintf("pick another name, or replace that server: switchboard mcp remove %s --scope %s", other.Name, other.Scope),
				"server name %q is %s-scope server %q's to tool names and permission rules (case is ignored, - and . count as _): neither would run", name, other.Scope, other.Name)
		}
	}
	// The repository's file never holds a credential: ${VAR} does, read
	// from the environment when the server starts. The user's own file
	// keeps what was typed unless, asked on a terminal, the person keeps
	// it in the credential store.
	raw, creds, own, err := f.credentialRefs(context.Background(), name, raw, scope, t.File)
	if err != nil {
		var ee *ExitError
		if errors.As(err, &ee) {
			return err
		}
		return Failuref("", "%v", err)
	}
	if err := setServer(t, name, raw); err != nil {
		return err
	}
	verb := "Added"
	if exists {
		verb = "Replaced"
	}
	prep := "to"
	if exists {
		prep = "in"
	}
	if kind != "" {
		kind += " "
	}
	out := f.IO.Out
	fmt.Fprintf(out, "%s %sserver %q %s %s\n", verb, kind, name, prep, t.describe(f))
	if scope == config.ScopeProject {
		fmt.Fprintf(out, "Project servers ask for approval before they first start: switchboard mcp approve %s\n", name)
	}
	printCredentialNotes(f.IO.ErrOut, creds, f.tilde(t.File), own)
	if w := clearTextHeaders(raw); w != "" {
		fmt.Fprintf(f.IO.ErrOut, "warning: %s\n", termsafe.Line(w))
	}
	// Say what will keep the new definition from being used as written.
	r, err := f.LoadConfig()
	if err != nil {
		return nil
	}
	s := r.Server(name)
	switch {
	case s == nil:
	case s.Scope != scope:
		fmt.Fprintf(f.IO.ErrOut, "warning: %s\n", placement(s, scope))
	case len(s.Shadows) > 0:
		fmt.Fprintf(f.IO.ErrOut, "note: %s\n", placement(s, scope))
	case s.Availability == config.Disabled:
		fmt.Fprintf(f.IO.ErrOut, "warning: %q is disabled here: %s\n", name, termsafe.Line(s.DisabledReason))
	default:
		for _, d := range s.Diagnostics {
			if d.Severity == config.SeverityWarning {
				msg := d.Message
				if d.Field != "" {
					msg = fmt.Sprintf("field %q: %s", d.Field, msg)
				}
				if d.Fix != "" {
					msg += " (fix: " + d.Fix + ")"
				}
				fmt.Fprintf(f.IO.ErrOut, "warning: %s\n", termsafe.Line(msg))
			}
		}
		if prog := missingProgram(f, s); prog != "" {
			fmt.Fprintf(f.IO.ErrOut, "warning: %q is not on your PATH, so the server will not start until it is: %s\n", prog, notFoundHint(prog))
		}
	}
	return nil
}

// missingProgram is the program of stdio server s when it is a bare name
// that no folder of the user's PATH holds as an executable, "" otherwise
// (a path, a ${VAR}, a definition that sets its own PATH, Windows' own
// lookup rules).
func missingProgram(f *Factory, s *config.ResolvedServer) string {
	def := s.Effective
	prog := def.Command
	if config.InferType(def) != config.TypeStdio || prog == "" || runtime.GOOS == "windows" ||
		strings.ContainsAny(prog, `/\$`) || def.Env["PATH"] != "" {
		return ""
	}
	if onPath(f, prog) != "" {
		return ""
	}
	return prog
}

// sameNameAs returns the configured server whose name is name's to tool
// names and permission rules in another spelling (policy.SameServerName),
// or nil. A host runs neither of two such servers, so adding the second
// would stop the first, which works.
func sameNameAs(r *config.Resolved, name string) *config.ResolvedServer {
	for i := range r.Servers {
		if s := &r.Servers[i]; s.Name != name && policy.SameServerName(s.Name, name) {
			return s
		}
	}
	return nil
}

// placement says how a definition just written in scope sits among those
// of the same name, when it does not simply stand alone: overridden by one
// in a higher scope, or hiding those in lower ones ("" otherwise).
func placement(s *config.ResolvedServer, scope config.Scope) string {
	if s.Scope != scope {
		return fmt.Sprintf("the %s-scope definition of %q overrides this one in this workspace", s.Scope, s.Name)
	}
	if len(s.Shadows) == 0 {
		return ""
	}
	var hidden []string
	for _, sc := range s.Shadows {
		hidden = append(hidden, string(sc))
	}
	return fmt.Sprintf("in this workspace it takes the place of the %s-scope definition of %q", strings.Join(hidden, " and "), s.Name)
}

// setServer writes one entry to a scope's file. A project file is shared
// through the repository and holds no secrets of the user's, so a new one
// gets the usual 0644 rather than SetServer's private 0600.
func setServer(t scopeTarget, name string, raw []byte) error {
	created := false
	if t.Scope == config.ScopeProject {
		if fh, err := os.OpenFile(t.File, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o644); err == nil {
			fh.Close()
			created = true
		}
	}
	if err := config.SetServer(t.File, t.ObjPath, name, raw); err != nil {
		if created {
			removeIfEmpty(t.File)
		}
		return configFileErr(err)
	}
	return nil
}

// removeIfEmpty removes the empty file setServer created for an edit that
// failed, unless another process has written its own entry there since.
func removeIfEmpty(path string) {
	unlock, err := filelock.Lock(path, filelock.DefaultTimeout)
	if err != nil {
		return
	}
	defer unlock()
	if fi, err := os.Stat(path); err == nil && fi.Size() == 0 {
		os.Remove(path)
	}
}

// parsePairs reads KEY<sep>VALUE flag values into a map.
func parsePairs(values []string, sep, flag, hint string) (map[string]string, error) {
	if len(values) == 0 {
		return nil, nil
	}
	m := make(map[string]string, len(values))
	for _, v := range values {
		k, val, ok := strings.Cut(v, sep)
		k = strings.TrimSpace(k)
		if !ok || k == "" || strings.ContainsAny(k, " \t") {
			return nil, Usagef(hint, "invalid %s %q", flag, v)
		}
		if sep == ":" {
			val = strings.TrimSpace(val)
		}
		m[k] = val
	}
	return m, nil
}

func looksLikeURL(s string) bool {
	return strings.HasPrefix(s, "http://") || strings.HasPrefix(s, "https://")
}

func hasError(diags []config.Diagnostic) bool {
	for _, d := range diags {
		if d.Severity == config.SeverityError {
			return true
		}
	}
	return false
}

func firstError(diags []config.Diagnostic) config.Diagnostic {
	for _, d := range diags {
		if d.Severity == config.SeverityError {
			return d
		}
	}
	return config.Diagnostic{}
}

// marshalNoEscape is json.Marshal without HTML escaping: URLs keep their
// "&".
func marshalNoEscape(v any) ([]byte, error) {
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(v); err != nil {
		return nil, err
	}
	return bytes.TrimSpace(b.Bytes()), nil
}

// MCPAddJSONOptions are the inputs of `mcp add-json`.
type MCPAddJSONOptions struct {
	IO      *IOStreams
	Factory *Factory

	Scope    string
	ScopeSet bool // --scope was given (else no workspace means user)
	Force    bool
	Name     string
	JSON     string
}

// NewMCPAddJSONCmd returns `mcp add-json`; runF, if not nil, replaces
// mcpAddJSONRun.
func NewMCPAddJSONCmd(f *Factory, runF func(context.Context, *MCPAddJSONOptions) error) *cobra.Command {
	opts := &MCPAddJSONOptions{IO: f.IO, Factory: f}
	cmd := &cobra.Command{
		Use:   "add-json [flags] NAME JSON",
		Short: "Add a server from its JSON definition",
		Long: `Add a server from the JSON object that would sit under "mcpServers".
It is validated exactly as the configuration loader validates files.`,
		Example: `  switchboard mcp add-json time '{"command":"uvx","args":["mcp-server-time"]}'
  switchboard mcp add-json --scope user api '{"type":"http","url":"https://api.example.com/mcp"}'`,
		Args:              exactArgs(2, "a server name and its JSON definition"),
		ValidArgsFunction: cobra.NoFileCompletions,
		RunE: func(cmd *cobra.Command, args []string) error {
			opts.Name, opts.JSON = args[0], args[1]
			opts.ScopeSet = cmd.Flags().Changed("scope")
			if runF != nil {
				return runF(cmd.Context(), opts)
			}
			return mcpAddJSONRun(cmd.Context(), opts)
		},
	}
	cmd.Flags().StringVarP(&opts.Scope, "scope", "s", "local", "where to write: user, project or local")
	cmd.Flags().BoolVar(&opts.Force, "force", false, "replace an existing server of that name in the scope")
	registerScopeCompletion(cmd)
	return cmd
}

func mcpAddJSONRun(ctx context.Context, opts *MCPAddJSONOptions) error {
	scope, err := defaultScope(opts.Factory, opts.Scope, opts.ScopeSet)
	if err != nil {
		return err
	}
	if err := checkNewName(opts.Name); err != nil {
		return err
	}
	s, diags := config.ParseServer(opts.Name, []byte(opts.JSON))
	// A field Switchboard does not read is refused before anything else:
	// "comand" would otherwise be reported as a missing command, and a
	// misspelt "evn" written and silently ignored.
	var unknown []string
	for _, d := range diags {
		if d.UnknownField {
			u := strconv.Quote(d.Field)
			if strings.HasPrefix(d.Fix, "did you mean") {
				u += " (" + d.Fix + ")"
			}
			unknown = append(unknown, u)
		}
	}
	if len(unknown) > 0 {
		noun := "field"
		if len(unknown) > 1 {
			noun = "fields"
		}
		return Usagef("correct or remove it; nothing was written (docs/configuration.md lists the fields)",
			"invalid definition for %q: unknown %s %s", opts.Name, noun, strings.Join(unknown, ", "))
	}
	for _, d := range diags {
		if d.Severity == config.SeverityError {
			msg := d.Message
			if p := d.Position; p.Line > 0 {
				msg = fmt.Sprintf("line %d, column %d: %s", p.Line, p.Col, msg)
			}
			if d.Field != "" {
				msg = fmt.Sprintf("field %q: %s", d.Field, msg)
			}
			return Usagef(d.Fix, "invalid definition for %q: %s", opts.Name, msg)
		}
	}
	if words := strings.Fields(s.Command); len(words) > 1 && len(s.Args) == 0 && !pathExists(s.Command) {
		split, _ := marshalNoEscape(struct {
			Command string   `json:"command"`
			Args    []string `json:"args"`
		}{words[0], words[1:]})
		return Usagef(fmt.Sprintf("put the arguments in \"args\": %s", split),
			"invalid definition for %q: \"command\" %q is one word holding spaces: the server is started without a shell, so it would look for a program of that name", opts.Name, s.Command)
	}
	// Its warnings (unset variables…) are said once, by writeServer, as
	// the definition now stands in the configuration.
	// JSONC in, JSON written: comments in a shell argument are unusual and
	// the entry is re-laid-out anyway.
	raw, err := hujson.Standardize([]byte(opts.JSON))
	if err != nil {
		return Usagef("", "invalid definition for %q: %v", opts.Name, err)
	}
	return writeServer(opts.Factory, scope, opts.Name, raw, opts.Force, string(config.InferType(s)))
}

// clearTextHeaders says, for a remote server's definition raw, that its
// headers (credentials, most often) will cross the network unencrypted:
// its url is plain http to a host that is not this machine. "" when they
// will not (https, loopback, no headers, a host written as ${VAR}).
// Written once, when the server is added: the user may mean it (a
// server on a trusted network), and a warning at every command would
// be one to ignore.
func clearTextHeaders(raw []byte) string {
	var d struct {
		URL     string            `json:"url"`
		Headers map[string]string `json:"headers"`
	}
	if json.Unmarshal(raw, &d) != nil || len(d.Headers) == 0 {
		return ""
	}
	u, err := url.Parse(d.URL)
	if err != nil || !strings.EqualFold(u.Scheme, "http") || strings.Contains(u.Host, "${") {
		return ""
	}
	if host := u.Hostname(); loopbackHost(host) || strings.HasSuffix(strings.ToLower(host), ".localhost") {
		return ""
	}
	names := slices.Sorted(maps.Keys(d.Headers))
	return fmt.Sprintf("the url is plain http to %s, so its headers (%s) cross the network unencrypted, readable and replayable on the way; use https:// if the server offers it",
		u.Host, strings.Join(names, ", "))
}

package cli

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"os"
	"sort"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/spf13/cobra"
	"golang.org/x/term"

	"github.com/switchboard-mcp/switchboard/config"
	"github.com/switchboard-mcp/switchboard/internal/netguard"
	"github.com/switchboard-mcp/switchboard/internal/registry"
	"github.com/switchboard-mcp/switchboard/internal/termsafe"
)

func init() { registerMCPCommand(func(f *Factory) *cobra.Command { return NewMCPSearchCmd(f, nil) }) }

// registryEnv names the registry when --registry does not.
const registryEnv = "SWITCHBOARD_REGISTRY_URL"

// registrySettingKey is the settings key that names the registry.
const registrySettingKey = "registry"

// registryURL is the registry to use: --registry, else
// $SWITCHBOARD_REGISTRY_URL, else "registry" in --settings, the user
// settings or the managed settings, else the official one. Never from the
// repository's settings: the registry decides what programs get
// installed, so a repository does not get to choose it.
func (f *Factory) registryURL(flag string) string {
	if flag != "" {
		return flag
	}
	if v, ok := f.Getenv(registryEnv); ok && v != "" {
		return v
	}
	if st, err := f.settingsStack(nil); err == nil {
		if v := st.Preference(registrySettingKey); v != "" {
			return v
		}
	}
	return registry.DefaultURL
}

// registryClient returns a client for the registry flag names (see
// registryURL). Its connections follow the outbound address checks
// (docs/security.md, Outbound URL safety) as for a URL the user
// typed: loopback and private addresses are allowed (a private
// sub-registry on the company network), cloud metadata and link-local
// ones never, checked at dial time and on every redirect.
func (f *Factory) registryClient(flag string) (*registry.Client, error) {
	u := f.registryURL(flag)
	if err := netguard.CheckURL(u); err != nil {
		return nil, Usagef("pass --registry https://HOST (or set "+registryEnv+")", "registry URL: %v", err)
	}
	hc := netguard.Client(netguard.Policy{AllowPrivate: true}, nil)
	hc.Timeout = registryTimeout
	c, err := registry.New(u, &registry.Options{HTTPClient: hc, UserAgent: "switchboard/" + Version})
	if err != nil {
		return nil, Usagef("pass --registry https://HOST (or set "+registryEnv+")", "%v", err)
	}
	return c, nil
}

// registryErr is a failed registry request as a one-line error (exit 1).
func registryErr(c *registry.Client, err error) error {
	if errors.Is(err, context.Canceled) {
		return err
	}
	where := fmt.Sprintf("the registry is %s (--registry, $%s, or %q in ~/.switchboard/settings.json)", c.URL(), registryEnv, registrySettingKey)
	if why := unreachable(err); why != "" {
		return Failuref("check your network connection; "+where, "cannot reach the registry at %s: %s", termsafe.Line(c.URL()), termsafe.Line(why))
	}
	return Failuref("check the registry URL: "+where, "%s", termsafe.Line(err.Error()))
}

// unreachable says in words why a request reached no server at all (a
// name that does not resolve, a refused connection, no answer in time),
// or "" for any other error (the server answered something).
func unreachable(err error) string {
	var dns *net.DNSError
	var op *net.OpError
	var ne net.Error
	switch {
	case errors.As(err, &dns):
		if dns.IsNotFound {
			return "its name " + dns.Name + " does not resolve"
		}
		return "looking up " + dns.Name + " failed: " + dns.Err
	case errors.Is(err, syscall.ECONNREFUSED):
		return "the connection was refused"
	case errors.Is(err, syscall.ENETUNREACH), errors.Is(err, syscall.EHOSTUNREACH):
		return "no route to it"
	case errors.As(err, &ne) && ne.Timeout():
		return "no answer within " + registryTimeout.String()
	case errors.As(err, &op) && op.Op == "dial":
		return op.Err.Error()
	}
	return ""
}

// MCPSearchOptions are the inputs of `mcp search`.
type MCPSearchOptions struct {
	IO      *IOStreams
	Factory *Factory

	Text     string
	Registry string // --registry URL
	Limit    int    // --limit
}

// NewMCPSearchCmd returns `mcp search`; runF, if not nil, replaces
// mcpSearchRun.
func NewMCPSearchCmd(f *Factory, runF func(context.Context, *MCPSearchOptions) error) *cobra.Command {
	opts := &MCPSearchOptions{IO: f.IO, Factory: f}
	cmd := &cobra.Command{
		Use:   "search [flags] TEXT",
		Short: "Search the MCP Registry for servers",
		Long: `Search the MCP Registry for servers whose name contains TEXT (at least 3
characters), showing the latest version of each: its name, version, how it
runs (npm:stdio, pypi:stdio, oci:stdio, a streamable-http or sse remote…)
and description. Install one with:
  switchboard mcp add --from-registry NAME[@VERSION]

Piped, the first line is the header (NAME VERSION TRANSPORTS DESCRIPTION,
tab-separated), then one tab-separated row per server with those four
columns, its transports comma-separated. Skip the header with tail -n +2, or
use --json.

The registry is https://registry.modelcontextprotocol.io unless --registry,
$SWITCHBOARD_REGISTRY_URL or "registry" in ~/.switchboard/settings.json names
another (a private registry implementing the same API).`,
		Example: `  switchboard mcp search filesystem
  switchboard mcp search --json github`,
		Args:              exactArgs(1, "the text to search for"),
		ValidArgsFunction: cobra.NoFileCompletions,
		RunE: func(cmd *cobra.Command, args []string) error {
			opts.Text = args[0]
			if runF != nil {
				return runF(cmd.Context(), opts)
			}
			return mcpSearchRun(cmd.Context(), opts)
		},
	}
	cmd.Flags().StringVar(&opts.Registry, "registry", "", "the registry's `URL` (default $"+registryEnv+", settings' \"registry\", else "+registry.DefaultURL+")")
	cmd.Flags().IntVar(&opts.Limit, "limit", 30, "at most this many servers (1 to 100)")
	return cmd
}

// searchRow is one server of `mcp search --json`.
type searchRow struct {
	Name        string          `json:"name"`
	Title       string          `json:"title,omitempty"`
	Description string          `json:"description"`
	Version     string          `json:"version"`
	Transports  []string        `json:"transports"`
	Status      string          `json:"status,omitempty"`
	Packages    []searchPackage `json:"packages"`
	Remotes     []searchRemote  `json:"remotes"`
}

type searchPackage struct {
	RegistryType string `json:"registryType"`
	Identifier   string `json:"identifier"`
	Version      string `json:"version,omitempty"`
	Transport    string `json:"transport"`
}

type searchRemote struct {
	Type string `json:"type"`
	URL  string `json:"url"`
}

func mcpSearchRun(ctx context.Context, opts *MCPSearchOptions) error {
	f := opts.Factory
	if len(strings.TrimSpace(opts.Text)) < 3 {
		return Usagef("the registry matches names by substring: give 3 characters or more", "search text %q is too short", opts.Text)
	}
	if opts.Limit < 1 || opts.Limit > 100 {
		return Usagef("use --limit 1 to 100", "invalid --limit %d", opts.Limit)
	}
	c, err := f.registryClient(opts.Registry)
	if err != nil {
		return err
	}
	list, err := c.Search(ctx, opts.Text, &registry.SearchOptions{Limit: opts.Limit})
	if err != nil {
		return registryErr(c, err)
	}
	rows := make([]searchRow, 0, len(list.Servers))
	for _, sr := range list.Servers {
		s := sr.Server
		r := searchRow{Name: s.Name, Title: s.Title, Description: s.Description, Version: s.Version,
			Transports: s.Transports(), Packages: []searchPackage{}, Remotes: []searchRemote{}}
		if r.Transports == nil {
			r.Transports = []string{}
		}
		if o := sr.Meta.Official; o != nil {
			r.Status = o.Status
		}
		for _, p := range s.Packages {
			t := p.Transport.Type
			if t == "" {
				t = "stdio"
			}
			r.Packages = append(r.Packages, searchPackage{p.RegistryType, p.Identifier, p.Version, t})
		}
		for _, rm := range s.Remotes {
			r.Remotes = append(r.Remotes, searchRemote{rm.Type, rm.URL})
		}
		rows = append(rows, r)
	}
	if f.global().JSON {
		return printJSON(opts.IO.Out, rows)
	}
	if len(rows) == 0 {
		fmt.Fprintf(opts.IO.ErrOut, "No servers in %s have %q in their name.\n", termsafe.Line(c.URL()), termsafe.Line(opts.Text))
		return nil
	}
	t := newTablePrinter(opts.IO, "NAME", "VERSION", "TRANSPORTS", "DESCRIPTION")
	t.Shrink(3)
	for _, r := range rows {
		desc := r.Description
		if r.Status != "" && r.Status != "active" {
			desc = "(" + r.Status + ") " + desc
		}
		t.AddRow(r.Name, r.Version, strings.Join(r.Transports, ","), desc)
	}
	if err := t.Render(); err != nil {
		return err
	}
	if list.Metadata.NextCursor != "" && opts.IO.IsTTY {
		fmt.Fprintf(opts.IO.ErrOut, "More servers match; narrow the search or raise --limit.\n")
	}
	return nil
}

// splitRegistryRef splits NAME[@VERSION] (registry names hold no "@").
func splitRegistryRef(ref string) (name, version string) {
	name, version, _ = strings.Cut(ref, "@")
	return name, version
}

// registryDefaultName is the server name a registry entry gets when none
// is given: the part after the "/" (io.github.user/weather → weather),
// made legal.
func registryDefaultName(name string) string {
	if i := strings.LastIndexByte(name, '/'); i >= 0 {
		name = name[i+1:]
	}
	name = suggestName(name)
	if len(name) > 64 {
		name = name[:64]
	}
	return name
}

// mcpAddFromRegistryRun is `mcp add --from-registry NAME[@VERSION] [SERVER]`:
// fetch the server.json, pick a package or remote, gather its values,
// show what would run, and write it as `mcp add` does.
func mcpAddFromRegistryRun(ctx context.Context, opts *MCPAddOptions) error {
	f := opts.Factory
	scope, err := defaultScope(f, opts.Scope, opts.ScopeSet)
	if err != nil {
		return err
	}
	regName, version := splitRegistryRef(opts.FromRegistry)
	if regName == "" || strings.Count(regName, "/") != 1 {
		return Usagef("registry names look like io.github.owner/server; find one with: switchboard mcp search TEXT",
			"invalid registry name %q", opts.FromRegistry)
	}
	if len(opts.Rest) > 0 {
		return Usagef("usage: switchboard mcp add --from-registry NAME[@VERSION] [SERVER-NAME]",
			"--from-registry takes no command or URL (the registry says how the server runs), got %q", strings.Join(opts.Rest, " "))
	}
	if len(opts.Headers) > 0 {
		return Usagef("give a registry server's header values with -e NAME=VALUE (the names `mcp add --from-registry` lists)",
			"-H cannot be used with --from-registry")
	}
	sel := registry.Selection{}
	switch opts.Transport {
	case "":
	case "stdio":
		sel.Kind = "package"
	case "http", "streamable-http", "streamable_http":
		sel.Transport = "streamable-http"
	case "sse":
		sel.Transport = "sse"
	default:
		return Usagef("use --transport stdio (a package), http or sse (a remote)", "unknown transport %q", opts.Transport)
	}
	name := opts.Name
	if name == "" {
		name = registryDefaultName(regName)
	}
	if err := checkNewName(name); err != nil {
		return err
	}
	values, err := parsePairs(opts.Env, "=", "-e", "write -e NAME=value")
	if err != nil {
		return err
	}

	c, err := f.registryClient(opts.Registry)
	if err != nil {
		return err
	}
	sr, err := c.Get(ctx, regName, version)
	if errors.Is(err, registry.ErrNotFound) {
		v := version
		if v == "" {
			v = "latest"
		}
		return Failuref("find the name with: switchboard mcp search "+shellQuote(registryDefaultName(regName)),
			"%s (version %s) is not in the registry at %s", termsafe.Line(regName), termsafe.Line(v), termsafe.Line(c.URL()))
	}
	if err != nil {
		return registryErr(c, err)
	}
	srv := &sr.Server
	// The entry is installed under the name the person typed (and shown
	// under the one it holds): an answer about another server, or another
	// version than the one asked for, is the registry's mistake or its lie.
	if !strings.EqualFold(srv.Name, regName) || version != "" && version != "latest" && srv.Version != version {
		asked := regName
		if version != "" && version != "latest" {
			asked += " " + version
		}
		return Failuref("check the registry URL: the registry is "+termsafe.Line(c.URL()),
			"asked the registry for %s, it answered with %s %s; nothing written", termsafe.Line(asked), termsafe.Line(srv.Name), termsafe.Line(srv.Version))
	}
	if o := sr.Meta.Official; o != nil {
		switch o.Status {
		case "deleted":
			return Failuref("choose another server or version", "%s %s was deleted from the registry", termsafe.Line(srv.Name), termsafe.Line(srv.Version))
		case "deprecated":
			fmt.Fprintf(opts.IO.ErrOut, "warning: %s %s is deprecated in the registry\n", termsafe.Line(srv.Name), termsafe.Line(srv.Version))
		}
	}
	plan, err := registry.NewPlan(srv, sel)
	if err != nil {
		return Failuref("pick another with --transport stdio|http|sse, or add the server by hand with mcp add", "%s", termsafe.Line(err.Error()))
	}
	if err := checkKnownValues(plan, values); err != nil {
		return err
	}
	secretRefs := scope == config.ScopeProject
	bo := &registry.BuildOptions{Values: values, SecretRefs: secretRefs}
	def, err := plan.Build(bo)
	var missing *registry.MissingError
	if errors.As(err, &missing) && opts.IO.CanPrompt {
		if err := askRegistryValues(ctx, opts.IO, missing.Vars, values); err != nil {
			return err
		}
		def, err = plan.Build(bo)
	}
	if errors.As(err, &missing) {
		return missingValuesErr(opts.IO.ErrOut, plan, missing.Vars, opts.FromRegistry)
	}
	if err != nil {
		return Usagef("", "%s", termsafe.Line(err.Error()))
	}
	if secretRefs && opts.IO.CanPrompt {
		// A secret given for a shared file: on a terminal, offered to the
		// user's store, and referred to as ${secret:REF}.
		for _, v := range plan.Inputs {
			val := values[v.Key]
			if !v.Secret || val == "" || strings.Contains(val, "${") {
				continue
			}
			name, err := f.offerSecret(ctx, "secret "+v.Key, v.Ref, val, "")
			if err != nil {
				return err
			}
			if name != "" {
				if bo.Stored == nil {
					bo.Stored = map[string]string{}
				}
				bo.Stored[v.Key] = name
			}
		}
		if def, err = plan.Build(bo); err != nil {
			return Usagef("", "%s", termsafe.Line(err.Error()))
		}
	}
	if where, val := unshowable(def); where != "" {
		return Failuref("ask the publisher to fix the entry, or add the server by hand with mcp add",
			"the registry's definition of %s has a control or invisible character in its %s: %s; it cannot be shown as it would be written, so nothing written",
			termsafe.Line(srv.Name), termsafe.Line(where), termsafe.Line(strconv.Quote(secretHider(plan, values)(val))))
	}
	raw, err := marshalNoEscape(def)
	if err != nil {
		return err
	}
	// The same validation the loader applies (URL scheme and the like).
	if _, diags := config.ParseServer(name, raw); hasError(diags) {
		d := firstError(diags)
		return Failuref(d.Fix, "the registry's definition of %s does not make a valid server %q: %s", termsafe.Line(srv.Name), name, termsafe.Line(d.Message))
	}

	// The runner's own options are the publisher's choice of what runs:
	// what changes it is refused, anything else is written only once
	// confirmed (docs/security.md, Registry servers).
	review := plan.ReviewDefinition(def)

	// A shared file never holds a credential: writeServer would write a
	// reference to the environment instead. That is done here, before the
	// definition is shown, so that what is shown is what is written. A
	// credential the publisher wrote is refused: its reference would hand
	// the person's own variable (GITHUB_TOKEN, for a server named github)
	// to the publisher's server.
	var creds []credential
	var credFile string
	if scope == config.ScopeProject {
		parsed, _ := config.ParseServer(name, raw)
		for _, c := range literalCredentials(name, parsed) {
			if !givenByPerson(c.value, values) {
				what := c.what()
				return Failuref("add it to your own file instead (--scope user or local), or by hand with mcp add",
					"%s of %s holds a credential of the publisher's: a repository's file never holds one, and a reference to your environment instead would hand the server your own $%s; nothing written",
					termsafe.Line(what), termsafe.Line(srv.Name), c.Var)
			}
		}
		t, err := f.target(scope)
		if err != nil {
			return err
		}
		credFile = f.tilde(t.File)
		if raw, creds, _, err = f.credentialRefs(ctx, name, raw, scope, t.File); err != nil {
			var ee *ExitError
			if errors.As(err, &ee) {
				return err
			}
			return Failuref("", "%v", err)
		}
		if len(creds) > 0 {
			shown := &registry.Definition{RuntimeArgs: def.RuntimeArgs}
			if err := json.Unmarshal(raw, shown); err != nil {
				return err
			}
			def = shown
		}
	}
	if len(review.Refused) > 0 {
		showRegistryDefinition(opts.IO.Out, srv, plan, def, values, secretRefs, bo.Stored)
		writeFindings(opts.IO.ErrOut, "refused", review.Refused, secretHider(plan, values))
		if plan.Remote != nil {
			return RefusedErr(fmt.Errorf("%s's remote is at an address no server may reach; nothing written", termsafe.Line(srv.Name)),
				"choose another server, or another remote with --transport http|sse")
		}
		return RefusedErr(fmt.Errorf("%s asks its runner to run something other than the package it names, or to unconfine it; nothing written", termsafe.Line(srv.Name)),
			"if you trust exactly that command, add it by hand: switchboard mcp add NAME -- COMMAND ARGS…")
	}
	showRegistryDefinition(opts.IO.Out, srv, plan, def, values, secretRefs, bo.Stored)
	writeFindings(opts.IO.ErrOut, "to confirm", review.Confirm, secretHider(plan, values))
	if len(review.Confirm) > 0 && !opts.IO.CanPrompt && !opts.Yes {
		what := "runner options"
		if plan.Remote != nil {
			what = "remote URL"
		}
		return Usagef("review the "+what+" above, then run the same command with --yes",
			"cannot ask for confirmation of the registry's %s: no terminal; nothing written", what)
	}
	if opts.IO.CanPrompt && !opts.Yes {
		t, err := f.target(scope)
		if err != nil {
			return err
		}
		ok, err := askYesNo(ctx, opts.IO, fmt.Sprintf("Add it as %q to %s? [y/N] ", name, t.describe(f)))
		if err != nil {
			return err
		}
		if !ok {
			fmt.Fprintln(opts.IO.ErrOut, "Nothing written.")
			return silentExit(1)
		}
	}
	if err := writeServer(f, scope, name, raw, opts.Force, def.Type); err != nil {
		return err
	}
	printCredentialNotes(opts.IO.ErrOut, creds, credFile, false)
	return nil
}

// givenByPerson reports whether the credential cred is (or holds) a value
// the person gave, rather than the publisher's text.
func givenByPerson(cred string, values map[string]string) bool {
	for _, v := range values {
		if v != "" && (v == cred || len(v) >= 8 && strings.Contains(cred, v)) {
			return true
		}
	}
	return false
}

// unshowable names the first part of def (and its text) holding a
// character a terminal cannot show as itself: a control or invisible
// character, or bytes that are not UTF-8. Shown escaped (\n, \u202e) it
// reads the same as those characters typed, so the person could not tell
// what is about to be written; where is "" when there is none.
func unshowable(def *registry.Definition) (where, val string) {
	bad := func(s string) bool { return termsafe.Line(s) != s }
	if bad(def.Command) {
		return "command", def.Command
	}
	for _, a := range def.Args {
		if bad(a) {
			return "args", a
		}
	}
	for _, k := range sortedKeys(def.Env) {
		if bad(k) {
			return "env name", k
		}
		if bad(def.Env[k]) {
			return "env " + k, def.Env[k]
		}
	}
	if bad(def.URL) {
		return "url", def.URL
	}
	for _, k := range sortedKeys(def.Headers) {
		if bad(k) {
			return "header name", k
		}
		if bad(def.Headers[k]) {
			return "header " + k, def.Headers[k]
		}
	}
	return "", ""
}

// checkKnownValues refuses -e names the server does not take (a typo
// would otherwise be dropped without a word).
func checkKnownValues(plan *registry.Plan, values map[string]string) error {
	known := map[string]bool{}
	var keys []string
	for _, v := range plan.Inputs {
		known[v.Key] = true
		keys = append(keys, v.Key)
	}
	for k := range values {
		if !known[k] {
			hint := "this server takes no values"
			if len(keys) > 0 {
				hint = "it takes: " + strings.Join(keys, ", ")
			}
			return Usagef(hint, "-e %s: %s has no value of that name", termsafe.Line(k), termsafe.Line(plan.Server.Name))
		}
	}
	return nil
}

// missingValuesErr lists what a piped `mcp add --from-registry` needs and
// refuses (exit 2): nothing is written with a placeholder the user did not
// choose.
func missingValuesErr(w io.Writer, plan *registry.Plan, vars []registry.Var, ref string) error {
	fmt.Fprintf(w, "%s needs these values (give each with -e NAME=VALUE):\n", termsafe.Line(plan.Server.Name))
	var example []string
	for _, v := range vars {
		line := fmt.Sprintf("  %s  %s", v.Key, v.Where)
		if v.Secret {
			line += ", secret"
		}
		if v.Description != "" {
			line += ": " + truncate(strings.Join(strings.Fields(v.Description), " "), maxRegistryText)
		}
		if len(v.Choices) > 0 {
			line += " (one of " + truncate(strings.Join(v.Choices, ", "), maxRegistryText) + ")"
		}
		fmt.Fprintln(w, termsafe.Line(line))
		if v.Secret {
			example = append(example, shellQuote("-e")+" '"+v.Key+"=${"+v.Ref+"}'")
		} else {
			example = append(example, "-e "+shellQuote(v.Key+"=VALUE"))
		}
	}
	hint := "switchboard mcp add --from-registry " + shellQuote(ref) + " " + strings.Join(example, " ")
	if len(vars) > 0 && anySecret(vars) {
		hint += " (a secret as '${VAR}' in single quotes is read from the environment when the server starts, and stays out of the file)"
	}
	return Usagef(hint, "%d required value(s) not given, and no terminal to ask on", len(vars))
}

func anySecret(vars []registry.Var) bool {
	for _, v := range vars {
		if v.Secret {
			return true
		}
	}
	return false
}

// askRegistryValues asks for each missing value on the terminal. A secret
// is read without echo; an empty answer to it means "read it from the
// environment": the definition gets ${REF}.
func askRegistryValues(ctx context.Context, s *IOStreams, vars []registry.Var, values map[string]string) error {
	for _, v := range vars {
		fmt.Fprintf(s.ErrOut, "%s (%s)", termsafe.Line(v.Key), termsafe.Line(v.Where))
		if v.Description != "" {
			fmt.Fprintf(s.ErrOut, ": %s", truncate(oneLineText(v.Description), maxRegistryText))
		}
		fmt.Fprintln(s.ErrOut)
		for {
			q := "  value: "
			if len(v.Choices) > 0 {
				q = "  value (" + truncate(strings.Join(v.Choices, ", "), maxRegistryText) + "): "
			}
			if v.Secret {
				q = fmt.Sprintf("  secret value (not shown; empty: read $%s from the environment at start): ", v.Ref)
			}
			fmt.Fprint(s.ErrOut, termsafe.Line(q))
			ans, err := readAnswer(ctx, s, v.Secret)
			if err != nil {
				fmt.Fprintln(s.ErrOut)
				return err
			}
			if v.Secret && ans == "" {
				ans = "${" + v.Ref + "}"
			}
			if ans != "" {
				values[v.Key] = ans
				break
			}
		}
	}
	return nil
}

// askYesNo asks a question; only an explicit yes is yes.
func askYesNo(ctx context.Context, s *IOStreams, question string) (bool, error) {
	for {
		fmt.Fprint(s.ErrOut, termsafe.Line(question))
		ans, err := readAnswer(ctx, s, false)
		if err != nil {
			fmt.Fprintln(s.ErrOut)
			return false, err
		}
		switch strings.ToLower(strings.TrimSpace(ans)) {
		case "y", "yes":
			return true, nil
		case "", "n", "no":
			return false, nil
		}
		fmt.Fprintln(s.ErrOut, "  type y or n")
	}
}

// readAnswer reads one line from the terminal, without echo when hidden
// (and In is a terminal), giving up when ctx ends (the terminal's echo is
// restored then too).
func readAnswer(ctx context.Context, s *IOStreams, hidden bool) (string, error) {
	type result struct {
		s   string
		err error
	}
	ch := make(chan result, 1)
	fh, isFile := s.In.(*os.File)
	hidden = hidden && isFile && term.IsTerminal(int(fh.Fd()))
	var state *term.State
	if hidden {
		state, _ = term.GetState(int(fh.Fd()))
	}
	go func() {
		if hidden {
			b, err := term.ReadPassword(int(fh.Fd()))
			fmt.Fprintln(s.ErrOut)
			ch <- result{string(b), err}
			return
		}
		// Byte by byte: nothing past the line is taken from the input.
		var b strings.Builder
		one := make([]byte, 1)
		for {
			n, err := s.In.Read(one)
			if n == 1 {
				if one[0] == '\n' {
					break
				}
				b.WriteByte(one[0])
				continue
			}
			if err != nil {
				if b.Len() == 0 {
					ch <- result{"", errEOF}
					return
				}
				break
			}
		}
		ch <- result{strings.TrimRight(b.String(), "\r"), nil}
	}()
	select {
	case <-ctx.Done():
		if state != nil {
			_ = term.Restore(int(fh.Fd()), state)
		}
		return "", ctx.Err()
	case r := <-ch:
		return r.s, r.err
	}
}

// showRegistryDefinition prints what will be written: where it comes
// from, the literal command line or URL, every env pair and header, the
// secrets' values hidden. Everything the registry sent is made safe to
// print.
func showRegistryDefinition(w io.Writer, srv *registry.ServerJSON, plan *registry.Plan, def *registry.Definition, values map[string]string, secretRefs bool, stored map[string]string) {
	hidden := secretHider(plan, values)
	hide := func(s string) string { return termsafe.Line(hidden(s)) }
	out := bufio.NewWriter(w)
	defer out.Flush()
	fmt.Fprintf(out, "From the registry: %s %s (%s)\n", termsafe.Line(srv.Name), termsafe.Line(srv.Version), termsafe.Line(plan.Source()))
	if def.Type == "stdio" {
		fmt.Fprintf(out, "  command: %s\n", hide(shellJoin(def.Command, def.Args)))
		for _, k := range sortedKeys(def.Env) {
			fmt.Fprintf(out, "  env:     %s=%s\n", termsafe.Line(k), hide(def.Env[k]))
		}
	} else {
		fmt.Fprintf(out, "  url:     %s (%s)\n", hide(def.URL), def.Type)
		for _, k := range sortedKeys(def.Headers) {
			fmt.Fprintf(out, "  header:  %s: %s\n", termsafe.Line(k), hide(def.Headers[k]))
		}
	}
	var refs, kept []string
	for _, v := range plan.Inputs {
		switch {
		case v.Secret && secretRefs && stored[v.Key] != "":
			kept = append(kept, stored[v.Key])
		case v.Secret && (secretRefs || strings.Contains(values[v.Key], "${"+v.Ref+"}")):
			refs = append(refs, v.Ref)
		}
	}
	sort.Strings(refs)
	sort.Strings(kept)
	if len(kept) > 0 {
		fmt.Fprintf(out, "  secrets kept in your credential store, read from it when the server starts: %s\n", strings.Join(kept, ", "))
	}
	if len(refs) > 0 {
		why := ""
		if secretRefs {
			why = " (a repository file never holds secrets)"
		}
		fmt.Fprintf(out, "  secrets are read from the environment when the server starts%s: set %s\n", why, strings.Join(refs, ", "))
	}
}

// secretHider returns a function that replaces, in s, the secret values
// the person gave with "<secret>".
func secretHider(plan *registry.Plan, values map[string]string) func(s string) string {
	var secrets []string
	for _, v := range plan.Inputs {
		if val, ok := values[v.Key]; ok && v.Secret && val != "" && !strings.Contains(val, "${") {
			secrets = append(secrets, val)
		}
	}
	return func(s string) string {
		for _, sec := range secrets {
			s = strings.ReplaceAll(s, sec, "<secret>")
		}
		return s
	}
}

// writeFindings lists a registry definition's runner options (or remote
// URL) that are refused or need confirming, each with what it does, the
// person's secrets hidden.
func writeFindings(w io.Writer, verdict string, fs []registry.Finding, hide func(string) string) {
	for _, f := range fs {
		fmt.Fprintf(w, "  ⚠ %s: %s — %s\n", verdict, termsafe.Line(hide(f.What)), termsafe.Line(hide(f.Why)))
	}
}

// maxRegistryText bounds, in characters, a description or list of
// choices from the registry as shown: a server.json may hold megabytes.
const maxRegistryText = 300

// registryTimeout bounds one registry request.
const registryTimeout = 30 * time.Second

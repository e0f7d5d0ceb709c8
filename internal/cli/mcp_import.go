package cli

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"regexp"
	"runtime"
	"strings"
	"sync"

	"github.com/spf13/cobra"
	"github.com/tailscale/hujson"

	"github.com/switchboard-mcp/switchboard/config"
	"github.com/switchboard-mcp/switchboard/internal/termsafe"
)

// importSources are the tools `mcp import --from` reads (§1.8).
var importSources = map[string]string{
	"claude-desktop": "Claude Desktop",
	"vscode":         "VS Code",
	"cursor":         "Cursor",
}

// MCPImportOptions are the inputs of `mcp import`.
type MCPImportOptions struct {
	IO      *IOStreams
	Factory *Factory
	JSON    bool

	From  string // claude-desktop, vscode or cursor
	Scope string
	// File, if set, is read instead of the tool's usual files.
	File  string
	Force bool // overwrite servers that already exist in the scope
}

// NewMCPImportCmd returns `mcp import`; runF, if not nil, replaces
// mcpImportRun.
func NewMCPImportCmd(f *Factory, runF func(context.Context, *MCPImportOptions) error) *cobra.Command {
	opts := &MCPImportOptions{IO: f.IO, Factory: f}
	cmd := &cobra.Command{
		Use:   "import --from claude-desktop|vscode|cursor [--scope S]",
		Short: "Import servers from Claude Desktop, VS Code or Cursor",
		Long: `Copy server definitions from another tool's configuration into a scope.

  claude-desktop  claude_desktop_config.json ("mcpServers"): ~/.config/Claude on
                  Linux, ~/Library/Application Support/Claude on macOS,
                  %APPDATA%\Claude on Windows
  vscode          <workspace>/.vscode/mcp.json ("servers" and "inputs")
  cursor          ~/.cursor/mcp.json and <workspace>/.cursor/mcp.json

VS Code and Cursor variables are translated: ${env:NAME} becomes ${NAME},
${workspaceFolder} the workspace path and ${userHome} the home directory.
Servers that need an ${input:…} prompt, or another variable Switchboard cannot
know, are skipped with the reason. An existing server of the same name is
never overwritten without --force.`,
		Args:              noArgs,
		ValidArgsFunction: cobra.NoFileCompletions,
		RunE: func(cmd *cobra.Command, args []string) error {
			opts.JSON = f.Global.JSON
			if runF != nil {
				return runF(cmd.Context(), opts)
			}
			return mcpImportRun(cmd.Context(), opts)
		},
	}
	fl := cmd.Flags()
	fl.StringVar(&opts.From, "from", "", "the tool to import from: claude-desktop, vscode or cursor")
	fl.StringVarP(&opts.Scope, "scope", "s", "local", "where to write: user, project or local")
	fl.StringVar(&opts.File, "file", "", "read this `FILE` instead of the tool's usual location")
	fl.BoolVar(&opts.Force, "force", false, "overwrite servers that already exist in the scope")
	registerScopeCompletion(cmd)
	_ = cmd.RegisterFlagCompletionFunc("from", cobra.FixedCompletions([]string{"claude-desktop", "vscode", "cursor"}, cobra.ShellCompDirectiveNoFileComp))
	return cmd
}

// importEntry is one server found in a source file.
type importEntry struct {
	Name string `json:"name"`
	File string `json:"file"`
	// Reason is why it was skipped; Notes what was changed on the way.
	Reason string   `json:"reason,omitempty"`
	Notes  []string `json:"notes,omitempty"`
	def    []byte
}

type importReport struct {
	From     string        `json:"from"`
	Scope    string        `json:"scope"`
	File     string        `json:"file"`
	Imported []importEntry `json:"imported"`
	Skipped  []importEntry `json:"skipped"`
}

func mcpImportRun(ctx context.Context, opts *MCPImportOptions) error {
	f := opts.Factory
	label, ok := importSources[opts.From]
	if !ok {
		if opts.From == "" {
			return Usagef("e.g. switchboard mcp import --from claude-desktop", "mcp import needs --from claude-desktop, vscode or cursor")
		}
		return Usagef("use --from claude-desktop, vscode or cursor", "cannot import from %q", opts.From)
	}
	scope, err := parseScope(opts.Scope)
	if err != nil {
		return err
	}
	t, err := f.target(scope)
	if err != nil {
		return err
	}
	root, ok := f.WorkspaceRoot()
	if !ok {
		root = f.Cwd
	}

	var files []string
	if opts.File != "" {
		files = []string{f.abs(opts.File)}
	} else {
		files = importPaths(f, opts.From, root)
	}
	var found []string
	for _, p := range files {
		if _, err := os.Stat(p); err == nil {
			found = append(found, p)
		}
	}
	if len(found) == 0 {
		return Failuref("pass the file with --file PATH",
			"no %s configuration found (looked for %s)", label, strings.Join(tildeAll(f, files), ", "))
	}

	// Later files win for the same name (Cursor: the workspace file).
	var entries []importEntry
	index := map[string]int{}
	for _, p := range found {
		es, err := readImportFile(p, opts.From)
		if err != nil {
			return err
		}
		for _, e := range es {
			if i, dup := index[e.Name]; dup {
				old := entries[i]
				old.Reason = "overridden by the definition in " + f.tilde(e.File)
				old.def = nil
				entries = append(entries, old)
				entries[i] = e
				index[e.Name] = i
				continue
			}
			index[e.Name] = len(entries)
			entries = append(entries, e)
		}
	}

	rep := importReport{From: opts.From, Scope: string(scope), File: t.File, Imported: []importEntry{}, Skipped: []importEntry{}}
	for _, e := range entries {
		if e.Reason == "" {
			e.def, e.Notes, e.Reason = translateImport(f, e.def, root)
		}
		if e.Reason == "" {
			e.Reason = checkImport(e.Name, e.def)
		}
		dest := t
		if e.Reason == "" {
			var exists bool
			var err error
			dest.ObjPath, exists, err = t.holder(e.Name)
			if err != nil {
				return configFileErr(err)
			}
			if exists && !opts.Force {
				e.Reason = fmt.Sprintf("already exists in %s scope (pass --force to overwrite)", scope)
			}
		}
		if e.Reason != "" {
			rep.Skipped = append(rep.Skipped, e)
			continue
		}
		if err := setServer(dest, e.Name, e.def); err != nil {
			return err
		}
		rep.Imported = append(rep.Imported, e)
	}

	// Say where an imported definition stands among those of the same name.
	if len(rep.Imported) > 0 {
		if r, err := f.LoadConfig(); err == nil {
			for i, e := range rep.Imported {
				if s := r.Server(e.Name); s != nil {
					if p := placement(s, scope); p != "" {
						rep.Imported[i].Notes = append(rep.Imported[i].Notes, p)
					}
				}
			}
		}
	}
	if opts.JSON {
		return printJSON(opts.IO.Out, rep)
	}
	out := opts.IO.Out
	if len(entries) == 0 {
		fmt.Fprintf(out, "No servers found in %s\n", termsafe.Line(strings.Join(tildeAll(f, found), ", ")))
		return nil
	}
	fmt.Fprintf(out, "Imported %d of %d %s servers into %s\n", len(rep.Imported), len(entries), label, t.describe(f))
	for _, e := range rep.Imported {
		// Names, notes and reasons quote another program's config file.
		fmt.Fprintf(out, "  + %s\n", termsafe.Line(e.Name))
		for _, n := range e.Notes {
			fmt.Fprintf(out, "      %s\n", termsafe.Line(n))
		}
	}
	if len(rep.Skipped) > 0 {
		fmt.Fprintf(out, "Skipped %d:\n", len(rep.Skipped))
		for _, e := range rep.Skipped {
			fmt.Fprintf(out, "  - %s: %s\n", termsafe.Line(e.Name), termsafe.Line(e.Reason))
		}
	}
	return nil
}

// importPaths are the files a tool keeps its servers in, lowest priority
// first.
func importPaths(f *Factory, from, root string) []string {
	switch from {
	case "claude-desktop":
		return []string{claudeDesktopPath(f, runtime.GOOS)}
	case "vscode":
		return []string{filepath.Join(root, ".vscode", "mcp.json")}
	case "cursor":
		return []string{
			filepath.Join(f.HomeDir, ".cursor", "mcp.json"),
			filepath.Join(root, ".cursor", "mcp.json"),
		}
	}
	return nil
}

// claudeDesktopPath is where Claude Desktop keeps its configuration on goos.
func claudeDesktopPath(f *Factory, goos string) string {
	const name = "claude_desktop_config.json"
	getenv := func(k string) string {
		if f.Getenv == nil {
			return ""
		}
		v, _ := f.Getenv(k)
		return v
	}
	switch goos {
	case "darwin":
		return filepath.Join(f.HomeDir, "Library", "Application Support", "Claude", name)
	case "windows":
		if appData := getenv("APPDATA"); appData != "" {
			return filepath.Join(appData, "Claude", name)
		}
		return filepath.Join(f.HomeDir, "AppData", "Roaming", "Claude", name)
	}
	if xdg := getenv("XDG_CONFIG_HOME"); xdg != "" {
		return filepath.Join(xdg, "Claude", name)
	}
	return filepath.Join(f.HomeDir, ".config", "Claude", name)
}

// readImportFile returns the server entries of a source file in file
// order. VS Code keeps them under "servers", the others under
// "mcpServers"; either is accepted.
func readImportFile(path, from string) ([]importEntry, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		var pe *fs.PathError
		if errors.As(err, &pe) {
			err = pe.Err
		}
		return nil, FailureErr(fmt.Errorf("reading %s: %w", path, err), "")
	}
	data, _ = config.StripBOM(data)
	v, err := hujson.Parse(data)
	if err != nil {
		msg := path + ": " + err.Error()
		if d := config.ParseDiagnostic(path, err); d.Line > 0 {
			msg = d.Position.String() + ": " + d.Message
		}
		return nil, ConfigErr(errors.New(msg), "fix the file, or point --file at a good copy")
	}
	if _, ok := v.Value.(*hujson.Object); !ok {
		return nil, Configf("the file must be a JSON object", "%s: the top level is not a JSON object", path)
	}
	keys := []string{"mcpServers", "servers"}
	if from == "vscode" {
		keys = []string{"servers", "mcpServers"}
	}
	var servers *hujson.Object
	for _, k := range keys {
		if sv := v.Find("/" + k); sv != nil {
			if so, ok := sv.Value.(*hujson.Object); ok {
				servers = so
				break
			}
			return nil, Configf(fmt.Sprintf("write %q: { \"name\": { … } }", k), "%s: %q is not an object", path, k)
		}
	}
	if servers == nil {
		return nil, nil
	}
	var out []importEntry
	for _, m := range servers.Members {
		name := m.Name.Value.(hujson.Literal).String()
		val := m.Value.Clone()
		val.BeforeExtra, val.AfterExtra = nil, nil
		val.Standardize()
		out = append(out, importEntry{Name: name, File: path, def: val.Pack()})
	}
	return out, nil
}

// Compiled on first use: every run of the binary (supervisors and test
// servers too) links this package, few of them import anything.
var (
	// placeholderRE matches ${…} in JSON text.
	placeholderRE = lazyRegexp(`\$\{([^}]*)\}`)
	ourVarRE      = lazyRegexp(`^[A-Z_][A-Z0-9_]*(:-.*)?$`)
)

func lazyRegexp(expr string) func() *regexp.Regexp {
	return sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(expr) })
}

// importFields are the definition fields Switchboard reads (§1.1); others
// are dropped with a note.
var importFields = map[string]bool{
	"type": true, "transport": true, "command": true, "args": true, "env": true, "cwd": true,
	"url": true, "headers": true, "enabled": true, "description": true, "timeout": true,
	"startup_timeout": true, "defer_loading": true, "tools": true, "headersHelper": true,
	"env_passthrough": true,
}

// translateImport rewrites one definition from the other tool's dialect.
// It returns the new definition and notes on what changed, or why the
// server cannot be imported.
func translateImport(f *Factory, def []byte, root string) (out []byte, notes []string, skip string) {
	var inputs, unknown []string
	text := placeholderRE().ReplaceAllStringFunc(string(def), func(m string) string {
		inner := m[2 : len(m)-1]
		switch {
		case ourVarRE().MatchString(inner):
			return m
		case strings.HasPrefix(inner, "env:"):
			return "${" + strings.TrimPrefix(inner, "env:") + "}"
		case inner == "workspaceFolder" || inner == "workspaceRoot":
			return jsonStringBody(root)
		case inner == "userHome":
			return jsonStringBody(f.HomeDir)
		case strings.HasPrefix(inner, "input:"):
			inputs = append(inputs, m)
		default:
			unknown = append(unknown, m)
		}
		return m
	})
	if len(inputs) > 0 {
		return nil, nil, fmt.Sprintf("uses %s, which only VS Code can prompt for; add it with switchboard mcp add, giving the value or a ${VAR}", strings.Join(dedupe(inputs), ", "))
	}
	if len(unknown) > 0 {
		return nil, nil, fmt.Sprintf("uses %s, which Switchboard does not expand; add it by hand", strings.Join(dedupe(unknown), ", "))
	}
	if text != string(def) {
		notes = append(notes, "translated ${…} variables")
	}

	v, err := hujson.Parse([]byte(text))
	if err != nil {
		return nil, nil, "cannot parse the definition: " + err.Error()
	}
	obj, ok := v.Value.(*hujson.Object)
	if !ok {
		return nil, nil, "the definition is not a JSON object"
	}
	var drop []string
	disabled := false
	for _, m := range obj.Members {
		key := m.Name.Value.(hujson.Literal).String()
		if key == "disabled" {
			lit, ok := m.Value.Value.(hujson.Literal)
			disabled = ok && lit.Bool()
		}
		if !importFields[key] {
			drop = append(drop, key)
		}
	}
	for _, key := range drop {
		ptr, _ := json.Marshal("/" + strings.ReplaceAll(strings.ReplaceAll(key, "~", "~0"), "/", "~1"))
		if err := v.Patch([]byte(`[{"op":"remove","path":` + string(ptr) + `}]`)); err != nil {
			return nil, nil, "cannot translate the definition: " + err.Error()
		}
		if key == "disabled" {
			continue
		}
		notes = append(notes, fmt.Sprintf("dropped %q, which Switchboard does not read", key))
	}
	// Cursor and Claude Desktop try Streamable HTTP, then SSE, for a bare
	// url; Switchboard infers http. A legacy /sse endpoint says which.
	if v.Find("/type") == nil && v.Find("/transport") == nil {
		if u := v.Find("/url"); u != nil {
			if lit, ok := u.Value.(hujson.Literal); ok && strings.HasSuffix(strings.TrimRight(lit.String(), "/"), "/sse") {
				if err := v.Patch([]byte(`[{"op":"add","path":"/type","value":"sse"}]`)); err == nil {
					notes = append(notes, `the url ends in /sse: imported as "type": "sse"`)
				}
			}
		}
	}
	if disabled && v.Find("/enabled") == nil {
		if err := v.Patch([]byte(`[{"op":"add","path":"/enabled","value":false}]`)); err != nil {
			return nil, nil, "cannot translate the definition: " + err.Error()
		}
		notes = append(notes, `"disabled": true became "enabled": false`)
	}
	v.Minimize()
	return v.Pack(), notes, ""
}

// checkImport validates a translated definition as the loader would.
func checkImport(name string, def []byte) string {
	if !config.ValidName(name) {
		return fmt.Sprintf("illegal server name; add it by hand under a legal one such as %q", suggestName(name))
	}
	_, diags := config.ParseServer(name, def)
	if d := firstError(diags); hasError(diags) {
		msg := d.Message
		if d.Field != "" {
			msg = fmt.Sprintf("field %q: %s", d.Field, msg)
		}
		return msg
	}
	return ""
}

// jsonStringBody escapes s for use inside a JSON string.
func jsonStringBody(s string) string {
	b, _ := json.Marshal(s)
	return string(b[1 : len(b)-1])
}

func dedupe(ss []string) []string {
	seen := map[string]bool{}
	var out []string
	for _, s := range ss {
		if !seen[s] {
			seen[s] = true
			out = append(out, s)
		}
	}
	return out
}

func tildeAll(f *Factory, paths []string) []string {
	out := make([]string, len(paths))
	for i, p := range paths {
		out[i] = f.tilde(p)
	}
	return out
}

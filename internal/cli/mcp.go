package cli

import (
	"errors"
	"fmt"
	"io"
	"path/filepath"
	"strings"

	"github.com/spf13/cobra"

	"github.com/switchboard-mcp/switchboard/config"
	"github.com/switchboard-mcp/switchboard/internal/termsafe"
	"github.com/switchboard-mcp/switchboard/policy"
)

// newMCPCmd returns `switchboard mcp`, the server-management commands.
func newMCPCmd(f *Factory) *cobra.Command {
	cmd := &cobra.Command{
		Use:   "mcp",
		Short: "Manage MCP server configuration",
		Long: `Add, list, inspect, remove, enable and disable MCP servers.

Servers live in three everyday scopes; for the same name the effective one is
local > project > user:
  user     ~/.switchboard/mcp.json (every workspace)
  project  <root>/.mcp.json (shared with the repository; needs approval to start)
  local    ~/.switchboard/mcp.json under "projects"[<root>] (this workspace, private)
Edits keep the comments and layout of the files they change.`,
		Args: cobra.ArbitraryArgs,
		RunE: groupRunE,
	}
	cmd.AddCommand(
		NewMCPAddCmd(f, nil),
		NewMCPAddJSONCmd(f, nil),
		NewMCPListCmd(f, nil),
		NewMCPGetCmd(f, nil),
		NewMCPRemoveCmd(f, nil),
		NewMCPEnableCmd(f, true, nil),
		NewMCPEnableCmd(f, false, nil),
		NewMCPImportCmd(f, nil),
		newMCPToolsCmd(f),
	)
	for _, newCmd := range extraMCPCommands {
		cmd.AddCommand(newCmd(f))
	}
	return cmd
}

// writableScopes are the scopes the mcp commands write, in precedence
// order, highest first.
var writableScopes = []config.Scope{config.ScopeLocal, config.ScopeProject, config.ScopeUser}

const scopeHint = "use --scope user, project or local"

// parseScope reads a --scope value.
func parseScope(s string) (config.Scope, error) {
	switch sc := config.Scope(strings.ToLower(s)); sc {
	case config.ScopeUser, config.ScopeProject, config.ScopeLocal:
		return sc, nil
	}
	return "", Usagef(scopeHint, "invalid scope %q", s)
}

// scopeTarget says where a scope's servers are written.
type scopeTarget struct {
	Scope config.Scope
	// File is the JSONC file and ObjPath the object in it that holds the
	// servers (keyed by name).
	File    string
	ObjPath []string
	// Others are further objects of File holding this scope's servers:
	// the other "projects" entries of the same workspace spelled another
	// way (config.LocalKeys), read too and cleaned by remove.
	Others [][]string
	// Root is the workspace root ("" for user scope).
	Root string
}

// holder returns the object of t that holds name (ObjPath first, then
// Others), and whether one does.
func (t scopeTarget) holder(name string) ([]string, bool, error) {
	for _, p := range append([][]string{t.ObjPath}, t.Others...) {
		ok, err := config.HasServer(t.File, p, name)
		if err != nil || ok {
			return p, ok, err
		}
	}
	return t.ObjPath, false, nil
}

// describe is "local scope (workspace /w) in FILE" and the like.
// The paths are made safe to print: a checkout's directory name is
// whatever the repository (or whoever named it) chose.
func (t scopeTarget) describe(f *Factory) string {
	if t.Scope == config.ScopeLocal {
		return termsafe.Line(fmt.Sprintf("local scope (workspace %s) in %s", f.tilde(t.Root), f.tilde(t.File)))
	}
	return termsafe.Line(fmt.Sprintf("%s scope in %s", t.Scope, f.tilde(t.File)))
}

// target returns where servers of scope are written: the first
// existing file of the scope, else the one to create.
func (f *Factory) target(scope config.Scope) (scopeTarget, error) {
	t := scopeTarget{Scope: scope, ObjPath: []string{"mcpServers"}}
	if scope == config.ScopeUser {
		t.File = config.UserFile(f.Home(), f.HomeDir)
		return t, nil
	}
	root, ok := f.WorkspaceRoot()
	if !ok {
		return t, Usagef("run it inside a project, pass --workspace DIR, or use --scope user",
			"%s scope needs a workspace, and none was found from %s (no .mcp.json, .switchboard/ or .git above it)", scope, f.Cwd)
	}
	t.Root = root
	switch scope {
	case config.ScopeProject:
		t.File = config.ProjectFile(root)
		if err := config.CheckRepoFile(root, t.File); err != nil {
			return t, linkOutErr(f, err)
		}
	case config.ScopeLocal:
		t.File = config.UserFile(f.Home(), f.HomeDir)
		keys := localKeys(t.File, root)
		t.ObjPath = config.LocalObjPath(keys[0])
		for _, k := range keys[1:] {
			t.Others = append(t.Others, config.LocalObjPath(k))
		}
	}
	return t, nil
}

// localKeys returns the "projects" keys of file for the workspace root,
// the one to edit first: the entry this directory already has, however
// it is spelled (a symlink, a trailing slash), else the resolved path a
// new entry is filed under (config.ProjectKey, as launch trust files
// approvals). A file that does not parse is reported by the edit itself.
func localKeys(file, root string) []string {
	keys, _ := config.LocalKeys(file, root)
	if len(keys) == 0 {
		return []string{config.ProjectKey(root)}
	}
	return keys
}

// definedIn returns the writable scopes whose file defines name, highest
// first, and the first error reading one.
func (f *Factory) definedIn(name string) ([]scopeTarget, error) {
	var found []scopeTarget
	for _, sc := range writableScopes {
		t, err := f.target(sc)
		if err != nil {
			continue // no workspace: project and local cannot define it
		}
		_, ok, err := t.holder(name)
		if err != nil {
			return found, configFileErr(err)
		}
		if ok {
			found = append(found, t)
		}
	}
	return found, nil
}

// configFileErr turns an error from a config edit into an exit error:
// a Diagnostic (file:line:col) is a config error (exit 2), anything else
// (permissions, a full disk) a failure.
func configFileErr(err error) error {
	var lo *config.LinkOutError
	if errors.As(err, &lo) {
		return linkOutErr(nil, err)
	}
	if d, ok := asDiagnostic(err); ok {
		fix := d.Fix
		d.Fix = ""
		return ConfigErr(d, fix)
	}
	return FailureErr(err, "")
}

func asDiagnostic(err error) (config.Diagnostic, bool) {
	var d config.Diagnostic
	if errors.As(err, &d) {
		return d, true
	}
	var p *config.Diagnostic
	if errors.As(err, &p) && p != nil {
		return *p, true
	}
	return d, false
}

// checkName refuses an illegal server name (config.ValidName).
func checkName(name string) error {
	if !config.ValidName(name) {
		return Usagef("use 1 to 64 letters, digits, '_', '.' or '-', e.g. "+suggestName(name),
			"invalid server name %q", name)
	}
	return nil
}

// checkNewName is checkName for a server about to be written: also a name
// the runtime would refuse, because its tools' names and permission rules
// could be read as another server's (a__b, x_), is refused here, before
// it is written, rather than left to show as an error later.
func checkNewName(name string) error {
	if err := checkName(name); err != nil {
		return err
	}
	if why := policy.ServerNameProblem(name); why != "" {
		return Usagef("rename it, e.g. "+suggestName(strings.TrimRight(strings.ReplaceAll(name, "__", "_"), "_.-")),
			"server name %q cannot be used: %s", name, why)
	}
	return nil
}

// suggestName turns name into a legal one for the hint.
func suggestName(name string) string {
	var b strings.Builder
	for _, r := range name {
		switch {
		case r >= 'a' && r <= 'z', r >= 'A' && r <= 'Z', r >= '0' && r <= '9', r == '_', r == '.', r == '-':
			b.WriteRune(r)
		default:
			b.WriteByte('-')
		}
	}
	s := strings.Trim(b.String(), "-")
	if len(s) > 64 {
		s = s[:64]
	}
	if s == "" {
		s = "my-server"
	}
	return s
}

// reportDiagnostics prints the configuration problems on stderr, one line
// each ("error: file:line:col: …" with its fix), after the command has
// shown what is valid. only, if not nil, keeps the file-level problems and
// those of the servers it accepts. It returns the exit error (code 2) when
// there was any error.
func reportDiagnostics(w io.Writer, diags []config.Diagnostic, only func(server string) bool) error {
	errs, fileErrs := 0, 0
	for _, d := range diags {
		if only != nil && d.Server != "" && !only(d.Server) {
			continue
		}
		level := "warning"
		if d.Severity == config.SeverityError {
			level = "error"
			errs++
			if d.Server == "" {
				fileErrs++
			}
		}
		fmt.Fprintf(w, "%s: %s\n", level, termsafe.Line(cliDiagnostic(d).Error())) // paths and values from the files
	}
	if errs == 0 {
		return nil
	}
	noun := "error"
	if errs > 1 {
		noun = "errors"
	}
	hint := "fix the positions above; the valid servers are unaffected"
	if fileErrs > 0 {
		// A file that does not parse gives none of its servers.
		hint = "fix the positions above; a file with an error of its own gives no servers until it is fixed, the other files' servers are unaffected"
	}
	return Configf(hint, "configuration has %d %s", errs, noun)
}

// tilde shortens a path under the home directory to ~/… for people; paths
// stay whole in JSON and piped output.
func (f *Factory) tilde(p string) string {
	if f.HomeDir == "" || p == "" {
		return p
	}
	if p == f.HomeDir {
		return "~"
	}
	if rel, err := filepath.Rel(f.HomeDir, p); err == nil && !strings.HasPrefix(rel, "..") && !filepath.IsAbs(rel) {
		return "~" + string(filepath.Separator) + rel
	}
	return p
}

// shellJoin renders a command line the way a person would type it,
// quoting the words that need it.
func shellJoin(command string, args []string) string {
	words := append([]string{command}, args...)
	for i, w := range words {
		words[i] = shellQuote(w)
	}
	return strings.Join(words, " ")
}

func shellQuote(s string) string {
	if s == "" {
		return "''"
	}
	safe := true
	for _, r := range s {
		if !(r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9' || strings.ContainsRune("@%_-+=:,./${}~", r)) {
			safe = false
			break
		}
	}
	if safe {
		return s
	}
	return "'" + strings.ReplaceAll(s, "'", `'\''`) + "'"
}

// linkOutErr is the refusal to write a repository file through a link
// that leaves the repository. The message names the file in the
// repository only: where the link points is the repository's choice, and
// may be a file of the user's the repository wants named or written.
func linkOutErr(f *Factory, err error) error {
	var lo *config.LinkOutError
	if !errors.As(err, &lo) {
		return err
	}
	p := lo.Path
	if f != nil {
		p = f.tilde(p)
	}
	return ConfigErr(fmt.Errorf("%s is a symbolic link (or lies under one) that leads out of the repository; switchboard will not write through it", termsafe.Line(p)),
		"remove the link (or replace it with a real file) to let switchboard write here")
}

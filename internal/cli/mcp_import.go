package cli

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"reflect"
	"runtime"
	"slices"
	"strings"

	"github.com/spf13/cobra"
	"github.com/tailscale/hujson"

	"github.com/switchboard-mcp/switchboard/config"
	"github.com/switchboard-mcp/switchboard/host"
	"github.com/switchboard-mcp/switchboard/internal/lazyre"
	"github.com/switchboard-mcp/switchboard/internal/safefile"
	"github.com/switchboard-mcp/switchboard/internal/samepath"
	"github.com/switchboard-mcp/switchboard/internal/termsafe"
	"github.com/switchboard-mcp/switchboard/policy"
	"github.com/switchboard-mcp/switchboard/trust"
)

// importSources are the tools `mcp import --from` reads (docs/configuration.md,
// Importing from other tools).
var importSources = map[string]string{
	"claude-code":     "Claude Code",
	"claude-desktop":  "Claude Desktop",
	"codex":           "Codex",
	"vscode":          "VS Code",
	"vscode-insiders": "VS Code Insiders",
	"cursor":          "Cursor",
	"windsurf":        "Windsurf",
	"gemini":          "Gemini CLI",
}

// importSourceList names the sources for messages and help.
const importSourceList = "claude-code, claude-desktop, codex, vscode, vscode-insiders, cursor, windsurf or gemini"

// importSourceLabels names the sources as their users know them, in
// importSourceOrder.
func importSourceLabels() string {
	labels := make([]string, len(importSourceOrder))
	for i, from := range importSourceOrder {
		labels[i] = importSources[from]
	}
	return strings.Join(labels[:len(labels)-1], ", ") + " or " + labels[len(labels)-1]
}

// MCPImportOptions are the inputs of `mcp import`.
type MCPImportOptions struct {
	IO      *IOStreams
	Factory *Factory
	JSON    bool

	From string // a key of importSources
	// Scope is where the servers of the user's own files are written.
	// Servers of a file inside the workspace (the repository's) go to
	// project scope unless ScopeSet (the user passed --scope), and then
	// into a user or local Scope only when confirmed on a terminal.
	Scope    string
	ScopeSet bool
	// File, if set, is read instead of the tool's usual files.
	File  string
	Force bool // overwrite servers that already exist in the scope
}

// NewMCPImportCmd returns `mcp import`; runF, if not nil, replaces
// mcpImportRun.
func NewMCPImportCmd(f *Factory, runF func(context.Context, *MCPImportOptions) error) *cobra.Command {
	opts := &MCPImportOptions{IO: f.IO, Factory: f}
	cmd := &cobra.Command{
		Use:   "import --from claude-code|claude-desktop|codex|vscode|vscode-insiders|cursor|windsurf|gemini [--scope S]",
		Short: "Import servers from Claude Code, Claude Desktop, Codex, VS Code, Cursor, Windsurf or Gemini CLI",
		Long: `Copy server definitions from another tool's configuration into a scope.
Without --from it lists the tools that keep servers on this machine, and
the command that imports each; nothing is changed.

  claude-code     ~/.claude.json ($CLAUDE_CONFIG_DIR/.claude.json when set): its
                  user-scope servers ("mcpServers") into user scope, and this
                  workspace's local-scope ones ("projects") into local scope,
                  unless --scope names one. Its project scope is the
                  workspace's .mcp.json, which Switchboard reads as it is.
  claude-desktop  claude_desktop_config.json ("mcpServers"): ~/.config/Claude on
                  Linux, ~/Library/Application Support/Claude on macOS,
                  %APPDATA%\Claude on Windows
  codex           ~/.codex/config.toml ($CODEX_HOME) [mcp_servers.NAME] tables,
                  read through Codex itself (codex mcp list --json, and get
                  NAME --json for the tool filters, so codex must be on PATH): into user scope unless --scope names one;
                  those a trusted project's .codex/config.toml adds are the
                  repository's
  vscode          VS Code's user mcp.json (~/.config/Code/User on Linux,
                  ~/Library/Application Support/Code/User on macOS,
                  %APPDATA%\Code\User on Windows) and
                  <workspace>/.vscode/mcp.json ("servers" and "inputs");
                  the other profiles' (User/profiles/<id>/mcp.json) are
                  named, to import with --file
  vscode-insiders the same, from VS Code Insiders' folder (Code - Insiders)
  cursor          ~/.cursor/mcp.json and <workspace>/.cursor/mcp.json
  windsurf        ~/.codeium/mcp_config.json (older Windsurf's),
                  ~/.codeium/windsurf-next/mcp_config.json (Windsurf Next's)
                  and ~/.codeium/windsurf/mcp_config.json ("mcpServers";
                  "serverUrl" becomes "url"): a server two of them define
                  alike is imported once; for a name they define
                  differently, Windsurf's own wins
  gemini          in the order Gemini lets each win a name: its extensions'
                  ~/.gemini/extensions/<name>/gemini-extension.json (a linked
                  one's in its folder), the administrator's system-defaults.json
                  (beside the system settings below), ~/.gemini/settings.json
                  ($GEMINI_CLI_HOME/.gemini when set),
                  <workspace>/.gemini/settings.json, and the administrator's
                  settings.json ($GEMINI_CLI_SYSTEM_SETTINGS_PATH, else
                  /etc/gemini-cli on Linux, /Library/Application
                  Support/GeminiCli on macOS, C:\ProgramData\gemini-cli on
                  Windows) ("mcpServers"): "httpUrl" is Streamable HTTP, "url"
                  SSE, $NAME becomes ${NAME} (a server with a $name or
                  ${name} with lower-case letters, which Switchboard does not
                  expand, is skipped; on Windows, where case does not matter,
                  it becomes ${NAME}), an extension's ${extensionPath} its
                  folder and ${workspacePath} the workspace,
                  includeTools/excludeTools the tool filter; "trust": true is
                  never imported as an approval

A file inside the workspace (.vscode/mcp.json, .cursor/mcp.json,
.gemini/settings.json, or a --file there, also when reached through a
symbolic link) was written by the repository, not by you. Its servers are imported into project scope (the
workspace's .mcp.json), where, like every repository server, they do not start
until you approve them (switchboard mcp approve NAME) and get only a base set
of your environment. With an explicit --scope user or local, each such server
is shown (where it came from and its literal command line) and imported there
only if you confirm it on a terminal; without a terminal it is skipped, and
--scope project imports it needing approval. When your own ~/.cursor/mcp.json
and the repository's file define the same name, yours is imported and the
repository's is skipped, and the output says so.

Files of yours outside the workspace (Claude Desktop's, VS Code's user
mcp.json, ~/.cursor/mcp.json, Windsurf's, Gemini's but the workspace's, a
--file elsewhere) go into --scope, local by default, user outside any
workspace (Claude Code's: into the scope they had there). Read from several
files, each server is reported with the file it came from.

VS Code and Cursor variables are translated: ${env:NAME} becomes ${NAME},
${workspaceFolder} the workspace path and ${userHome} the home directory. In
project scope, a file every clone shares, they become a path relative to the
workspace (where the server then starts: "cwd": ".") and ${HOME} instead,
as do the workspace's and home's paths written out;
in user scope, every workspace's, a server using ${workspaceFolder} is
skipped: this workspace's path would name it in every other.
An ${input:ID} of an input declared "password": true in an env or header
value or the url becomes ${secret:ID}: asked for on a
terminal when the server first starts and kept in your credential store (or:
switchboard secret set ID). Another input is a setting, not a secret: it
becomes its "default", or without one ${ID} from your environment (${MY_ID}
for my-id). Servers with an ${input:…} the file does not declare, a
secret's elsewhere, another variable Switchboard cannot know, or an envFile
(which Switchboard does not read), are skipped with the reason. A definition written
for Windows (cmd /c npx …) is imported on Linux and macOS as the command
inside (npx …), and said to be. An existing server of the same name is
never overwritten without --force.`,
		Args:              noArgs,
		ValidArgsFunction: cobra.NoFileCompletions,
		RunE: func(cmd *cobra.Command, args []string) error {
			opts.JSON = f.Global.JSON
			opts.ScopeSet = cmd.Flags().Changed("scope")
			if runF != nil {
				return runF(cmd.Context(), opts)
			}
			return mcpImportRun(cmd.Context(), opts)
		},
	}
	fl := cmd.Flags()
	fl.StringVar(&opts.From, "from", "", "the tool to import from: "+importSourceList)
	fl.StringVarP(&opts.Scope, "scope", "s", "local", "where to write: user, project or local (the repository's files: project unless given)")
	fl.StringVar(&opts.File, "file", "", "read this `FILE` instead of the tool's usual location")
	fl.BoolVar(&opts.Force, "force", false, "overwrite servers that already exist in the scope")
	registerScopeCompletion(cmd)
	_ = cmd.RegisterFlagCompletionFunc("from", cobra.FixedCompletions(importSourceOrder, cobra.ShellCompDirectiveNoFileComp))
	return cmd
}

// importEntry is one server found in a source file.
type importEntry struct {
	Name string `json:"name"`
	File string `json:"file"`
	// Author is who wrote File: "user", or "repository" for a file inside
	// the workspace (see repoFile).
	Author string `json:"author"`
	// Scope is where the server was imported.
	Scope string `json:"scope,omitempty"`
	// Reason is why it was skipped; Notes what was changed on the way.
	Reason string   `json:"reason,omitempty"`
	Notes  []string `json:"notes,omitempty"`
	def    []byte
	// scope is the scope it had in the tool (Claude Code's user or
	// local, Codex's user), where it goes unless --scope says otherwise;
	// "" for none.
	scope config.Scope
	// also are the other files of the same author holding this very
	// definition (mergeImportFiles imports it once).
	also []string
}

const (
	authorUser = "user"
	authorRepo = "repository"
)

// importReport is the result of an import. Scope and File are where the
// servers of the user's own files go; each imported entry says its own.
type importReport struct {
	From     string        `json:"from"`
	Scope    string        `json:"scope"`
	File     string        `json:"file"`
	Imported []importEntry `json:"imported"`
	Skipped  []importEntry `json:"skipped"`
	// Notes say what there was nothing to import for.
	Notes []string `json:"notes,omitempty"`
}

// importFile is a source file and who wrote it.
type importFile struct {
	path string
	repo bool
}

func mcpImportRun(ctx context.Context, opts *MCPImportOptions) error {
	f := opts.Factory
	label, ok := importSources[opts.From]
	if !ok {
		if opts.From == "" {
			// What there is to import: a newcomer's first question.
			here := importableSources(f)
			if opts.JSON {
				if here == nil {
					here = []importSource{}
				}
				return printJSON(opts.IO.Out, here)
			}
			if len(here) == 0 {
				// An answer, not a mistake: the README's first block runs
				// this on machines that have none of these tools.
				fmt.Fprintf(opts.IO.Out, "No other tool keeps MCP servers on this machine where Switchboard looks (%s).\n", importSourceLabels())
				fmt.Fprintln(opts.IO.Out, "To import a file kept elsewhere: switchboard mcp import --from TOOL --file PATH")
				return nil
			}
			fmt.Fprintln(opts.IO.Out, "Tools that keep servers on this machine; import each with its command:")
			for _, s := range here {
				fmt.Fprintln(opts.IO.Out, "  "+s.line())
			}
			return nil
		}
		return Usagef("use --from "+importSourceList, "cannot import from %q", opts.From)
	}
	// Outside any workspace, without --scope, your servers go to user
	// scope, as mcp add's do (said in a note). Claude Code's and Codex's
	// keep their own scopes (importEntry.scope): a local one is skipped
	// with the reason.
	scope, sayScope, err := defaultScopeNote(f, opts.Scope, opts.ScopeSet, "the servers go")
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

	if opts.From == "codex" && opts.File != "" {
		return Usagef("run it without --file", "Codex's servers are TOML, which Switchboard reads through Codex itself (codex mcp list --json), not from a file")
	}
	var files []string
	if opts.File != "" {
		files = []string{f.abs(opts.File)}
	} else {
		files = importPaths(f, opts.From, root)
	}
	found := existingImportFiles(f, files, root)
	var notes []string
	if (opts.From == "vscode" || opts.From == "vscode-insiders") && opts.File == "" {
		// The default profile's servers are read; the other profiles' and
		// the other edition's are named, to import with --file or --from.
		notes = append(notes, profileNotes(f, opts.From, label, vscodeProfiles(f, opts.From))...)
		other := map[string]string{"vscode": "vscode-insiders", "vscode-insiders": "vscode"}[opts.From]
		if p := filepath.Join(vscodeUserDir(userConfigDir(f, runtime.GOOS), other), "mcp.json"); regularFile(p) {
			notes = append(notes, fmt.Sprintf("%s has servers of its own in %s, not imported: switchboard mcp import --from %s", importSources[other], f.tilde(p), other))
		}
	}
	if opts.From == "claude-code" && opts.File == "" {
		if mcpJSON := filepath.Join(root, ".mcp.json"); regularFile(mcpJSON) {
			notes = append(notes, fmt.Sprintf("Claude Code's project scope is %s, which Switchboard reads as it is (project scope, each server approved before it starts): nothing to import there", f.tilde(mcpJSON)))
		}
	}
	if len(found) == 0 {
		hint := "pass the file with --file PATH"
		switch {
		case len(notes) > 0:
			hint = notes[0]
		case opts.From == "codex":
			hint = "Codex keeps its servers there ($CODEX_HOME/config.toml when CODEX_HOME is set)"
		}
		looked := files
		if opts.From == "gemini" && opts.File == "" {
			// Each extension's manifest, found or not, by the pattern.
			looked = append([]string{filepath.Join(geminiDir(f), "extensions", "*", geminiExtensionFile)}, geminiSettingsFiles(f, root)...)
		}
		return Failuref(hint, "no %s configuration found (looked for %s)", label, strings.Join(tildeAll(f, looked), ", "))
	}
	sayScope() // where they go, once there is something to import

	var entries []importEntry
	if opts.From == "codex" {
		entries, err = codexEntries(ctx, f, root)
	} else {
		entries, err = mergeImportFiles(f, found, opts.From, root)
	}
	if err != nil {
		return err
	}

	run := &importRun{ctx: ctx, f: f, opts: opts, scope: scope, t: t}
	rep := importReport{From: opts.From, Scope: string(scope), File: t.File, Imported: []importEntry{}, Skipped: []importEntry{}, Notes: notes}
	var dests []scopeTarget // the targets written, in order of first use
	// The names configured, and those imported as we go: a name that is
	// one of them in another spelling (my-srv, my_srv) would stop both.
	var names []string
	if r, err := f.LoadConfig(); err == nil {
		for _, s := range r.Servers {
			names = append(names, s.Name)
		}
	}
	for _, e := range entries {
		// raw is in Switchboard's fields (dialectImport, codexDef), not
		// yet translated; pre what was said on the way there.
		raw, pre := e.def, slices.Clip(e.Notes)
		if e.Reason == "" {
			var notes []string
			e.def, notes, e.Reason = translateImport(f, e.def, root)
			e.Notes = append(pre, notes...)
		}
		if e.Reason == "" {
			e.Reason = checkImport(e.Name, e.def)
		}
		if i := slices.IndexFunc(names, func(n string) bool { return n != e.Name && policy.SameServerName(n, e.Name) }); e.Reason == "" && i >= 0 {
			e.Reason = fmt.Sprintf("its name is server %q's to tool names and permission rules (case is ignored, - and . count as _), and neither would run; add it under another name with switchboard mcp add-json", names[i])
		}
		dest, err := run.place(&e)
		if err != nil {
			return err
		}
		// The editor's ${workspaceFolder} follows the workspace open;
		// this one's path in user scope would name it in every other.
		if e.Reason == "" && dest.Scope == config.ScopeUser && usesWorkspaceVar(string(raw)) {
			what := "${workspaceFolder}, which follows the workspace the editor has open"
			if opts.From == "gemini" {
				what = "the workspace's path (${workspaceFolder}, Gemini's ${workspacePath}), which follows the workspace Gemini runs in"
			}
			e.Reason = fmt.Sprintf("uses %s; in user scope it would name %s in every workspace: import it into local scope (--scope local, for this workspace) or add it by hand", what, f.tilde(root))
		}
		// The repository's .mcp.json is every clone's: it gets the
		// editor's paths as ${HOME} and relative to the workspace, not
		// as this machine's (your own files keep them absolute).
		if e.Reason == "" && dest.Scope == config.ScopeProject {
			var notes []string
			e.def, notes, e.Reason = sharedImport(f, raw, root)
			e.Notes = append(pre, notes...)
			if e.Reason == "" {
				e.Reason = checkImport(e.Name, e.def)
			}
		}
		if e.Reason != "" {
			rep.Skipped = append(rep.Skipped, e)
			continue
		}
		if err := run.write(&e, dest); err != nil {
			return err
		}
		names = append(names, e.Name)
		if !slices.ContainsFunc(dests, func(d scopeTarget) bool { return d.Scope == dest.Scope }) {
			dests = append(dests, dest)
		}
		rep.Imported = append(rep.Imported, e)
	}

	// Say where an imported definition stands among those of the same name.
	if len(rep.Imported) > 0 {
		if r, err := f.LoadConfig(); err == nil {
			for i, e := range rep.Imported {
				if s := r.Server(e.Name); s != nil {
					if p := placement(s, config.Scope(e.Scope)); p != "" {
						rep.Imported[i].Notes = append(rep.Imported[i].Notes, p)
					}
				}
			}
		}
	}
	if opts.JSON {
		return printJSON(opts.IO.Out, rep)
	}
	// Nothing written: the header names where they would have gone, which
	// for the repository's own files is project scope (unless --scope).
	if len(dests) == 0 && !opts.ScopeSet && !slices.ContainsFunc(found, func(i importFile) bool { return !i.repo }) {
		if pt, err := f.target(config.ScopeProject); err == nil {
			t = pt
		}
	}
	printImportReport(opts.IO.Out, f, label, t, found, entries, dests, rep)
	return nil
}

// importRun is what mcp import carries from one entry to the next.
type importRun struct {
	ctx     context.Context
	f       *Factory
	opts    *MCPImportOptions
	scope   config.Scope
	t       scopeTarget
	project *scopeTarget // where the repository's servers go, made on first use
	// targets are the scopes entries keep from their tool (importEntry.scope),
	// made on first use.
	targets map[config.Scope]scopeTarget
	in      *lineReader
}

// place chooses where e goes, or sets e.Reason when it may not be written
// (it exists, or the user does not confirm a repository's server outside
// project scope).
func (r *importRun) place(e *importEntry) (scopeTarget, error) {
	f, opts, scope := r.f, r.opts, r.scope
	dest := r.t
	if e.Reason != "" {
		return dest, nil
	}
	if e.scope != "" && !opts.ScopeSet && e.scope != scope {
		t, ok := r.targets[e.scope]
		if !ok {
			var err error
			if t, err = f.target(e.scope); err != nil {
				e.Reason = fmt.Sprintf("it is in Claude Code's %s scope, and %v", e.scope, err)
				return dest, nil
			}
			if r.targets == nil {
				r.targets = map[config.Scope]scopeTarget{}
			}
			r.targets[e.scope] = t
		}
		dest = t
	}
	// A repository's server is imported as one: into project scope,
	// where it needs approval, unless the user named user or local
	// scope and confirms this server there.
	confirm := false
	if e.Author == authorRepo && scope != config.ScopeProject {
		if opts.ScopeSet {
			confirm = true
		} else {
			if r.project == nil {
				pt, err := f.target(config.ScopeProject)
				if err != nil {
					return dest, err
				}
				r.project = &pt
			}
			dest = *r.project
		}
	}
	var exists bool
	var err error
	dest.ObjPath, exists, err = dest.holder(e.Name)
	if err != nil {
		return dest, configFileErr(err)
	}
	if exists && !opts.Force {
		e.Reason = fmt.Sprintf("already exists in %s scope (pass --force to overwrite)", dest.Scope)
		return dest, nil
	}
	if confirm {
		r.confirm(e)
	}
	return dest, nil
}

// confirm asks the user whether a repository's server may go into a scope
// where it starts without approval, and sets e.Reason unless they agree.
func (r *importRun) confirm(e *importEntry) {
	f, opts, scope := r.f, r.opts, r.scope
	if !opts.IO.CanPrompt {
		e.Reason = fmt.Sprintf("written by the repository (%s): in %s scope it would start without approval; "+
			"import it with --scope project, where it needs approval, or run this on a terminal to confirm it", f.tilde(e.File), scope)
		return
	}
	if r.in == nil {
		r.in = newLineReader(opts.IO.In)
	}
	writeImportReview(opts.IO.ErrOut, f, *e, scope)
	yes, err := askApproval(r.ctx, r.in, opts.IO.ErrOut, fmt.Sprintf("Import it into %s scope anyway? [y]es, [N]o (skip it): ", scope))
	if err != nil || !yes {
		e.Reason = "written by the repository, and you did not confirm it; --scope project imports it needing approval"
	} else {
		e.Notes = append(e.Notes, fmt.Sprintf("written by the repository; you confirmed it, so in %s scope it starts without approval", scope))
	}
}

// write writes e into dest; in project scope its credentials become
// references first (the repository's file never holds one, see
// writeServer).
func (r *importRun) write(e *importEntry, dest scopeTarget) error {
	f := r.f
	// As mcp add: a shared file gets references; the user's own file
	// keeps what it had unless kept in the store on a terminal.
	def, creds, own, err := f.credentialRefs(r.ctx, e.Name, e.def, dest.Scope, dest.File)
	if err != nil {
		return Failuref("", "%s: %v", e.Name, err)
	}
	e.def = def
	e.Notes = append(e.Notes, credentialNotes(creds, f.tilde(dest.File), own)...)
	if err := setServer(dest, e.Name, e.def); err != nil {
		return err
	}
	if e.Author == authorRepo && dest.Scope == config.ScopeProject {
		e.Notes = append([]string{fmt.Sprintf("imported as project scope: written by the repository, needs approval (%s)", "switchboard mcp approve "+e.Name)}, e.Notes...)
	}
	e.Scope = string(dest.Scope)
	return nil
}

// existingImportFiles are the files of files that exist, each read once
// (the workspace may be the home directory), and whether each is the
// repository's.
func existingImportFiles(f *Factory, files []string, root string) []importFile {
	var found []importFile
	var seen []os.FileInfo
	for _, p := range files {
		fi, err := os.Stat(p)
		if err != nil || sameFileAs(fi, seen) {
			continue // the workspace is the home directory: one file, read once
		}
		seen = append(seen, fi)
		found = append(found, importFile{path: p, repo: repoFile(f.HomeDir, p, root)})
	}
	return found
}

// mergeImportFiles reads the found files' entries, one per name, the
// losers of a name kept with the reason they lost.
func mergeImportFiles(f *Factory, found []importFile, from, root string) ([]importEntry, error) {
	// For the same name a later file wins (Cursor: the workspace file over
	// the user's) among files of one author; the user's own file always
	// wins over the repository's.
	var entries []importEntry
	index := map[string]int{}
	for _, src := range found {
		es, err := readImportFile(src.path, from, root, geminiExtensionOf(f, src.path, from))
		if err != nil {
			return nil, err
		}
		for _, e := range es {
			e.Author = authorUser
			if src.repo {
				e.Author = authorRepo
			}
			i, dup := index[e.Name]
			if !dup {
				index[e.Name] = len(entries)
				entries = append(entries, e)
				continue
			}
			old := entries[i]
			// The same server in two files of the user's (Windsurf's and
			// Windsurf Next's) is one server: imported once, from the
			// file that wins, and said to be in the other too.
			if old.Author == e.Author && old.Reason == e.Reason && sameDefinition(old.def, e.def) {
				e.also = append(old.also, old.File)
				entries[i] = e
				continue
			}
			switch {
			case old.Author == authorUser && e.Author == authorRepo:
				e.Reason = yoursWins(f, old.File)
				e.def = nil
				entries = append(entries, e)
				continue
			case old.Author == authorRepo && e.Author == authorUser:
				old.Reason = yoursWins(f, e.File)
			default:
				old.Reason = "overridden by the definition in " + f.tilde(e.File)
			}
			old.def = nil
			entries = append(entries, old)
			entries[i] = e
		}
	}
	for i, e := range entries {
		if len(e.also) > 0 {
			entries[i].Notes = append(entries[i].Notes, fmt.Sprintf("the same definition is in %s too: imported once", strings.Join(tildeAll(f, e.also), " and ")))
		}
	}
	return entries, nil
}

// sameDefinition reports whether two definitions hold the same JSON,
// whatever their spacing.
func sameDefinition(a, b []byte) bool {
	var va, vb any
	if json.Unmarshal(a, &va) != nil || json.Unmarshal(b, &vb) != nil {
		return false
	}
	return reflect.DeepEqual(va, vb)
}

// printImportReport writes what mcp import did for a terminal.
func printImportReport(out io.Writer, f *Factory, label string, t scopeTarget, found []importFile, entries []importEntry, dests []scopeTarget, rep importReport) {
	if len(entries) == 0 {
		paths := make([]string, len(found))
		for i, src := range found {
			paths[i] = src.path
		}
		fmt.Fprintf(out, "No servers found in %s\n", termsafe.Line(strings.Join(tildeAll(f, paths), ", ")))
		for _, n := range rep.Notes {
			fmt.Fprintln(out, "note: "+termsafe.Line(n))
		}
		return
	}
	if len(dests) == 0 {
		dests = []scopeTarget{t}
	}
	where := make([]string, len(dests))
	for i, d := range dests {
		where[i] = d.describe(f)
	}
	defer func() {
		for _, n := range rep.Notes {
			fmt.Fprintln(out, "note: "+termsafe.Line(n))
		}
	}()
	fmt.Fprintf(out, "Imported %d of %d %s servers into %s\n", len(rep.Imported), len(entries), label, strings.Join(where, " and "))
	// Read from several files, each server says which it came from.
	from := func(e importEntry) string {
		if len(found) < 2 {
			return ""
		}
		return "from " + f.tilde(e.File)
	}
	for _, e := range rep.Imported {
		// Names, notes and reasons quote another program's config file.
		var about []string
		if len(dests) > 1 {
			about = append(about, e.Scope+" scope")
		}
		if fr := from(e); fr != "" {
			about = append(about, fr)
		}
		line := "  + " + e.Name
		if len(about) > 0 {
			line += " (" + strings.Join(about, ", ") + ")"
		}
		fmt.Fprintln(out, termsafe.Line(line))
		for _, n := range e.Notes {
			fmt.Fprintf(out, "      %s\n", termsafe.Line(n))
		}
	}
	if len(rep.Skipped) > 0 {
		fmt.Fprintf(out, "Skipped %d:\n", len(rep.Skipped))
		for _, e := range rep.Skipped {
			name := e.Name
			if fr := from(e); fr != "" {
				name += " (" + fr + ")"
			}
			fmt.Fprintf(out, "  - %s: %s\n", termsafe.Line(name), termsafe.Line(e.Reason))
		}
	}
}

// repoFile reports whether the file at path is the repository's: reached
// through a path inside the workspace root (a link the repository commits
// is its choice, wherever it points), or resolving to a file inside it (a
// link of the user's into a checkout). A root that is the home directory,
// or above it, is not a repository but where the user's own files live
// (run from ~ with no project above, the root is the current directory).
func repoFile(home, path, root string) bool {
	if root == "" || (home != "" && samepath.Within(home, root)) {
		return false
	}
	return samepath.Within(filepath.Dir(path), root) || samepath.FileWithin(path, root)
}

func sameFileAs(fi os.FileInfo, seen []os.FileInfo) bool {
	for _, s := range seen {
		if os.SameFile(fi, s) {
			return true
		}
	}
	return false
}

// writeImportReview shows a repository's server before the user decides
// to import it into a scope that starts it without approval: who wrote it
// and what exactly it would run, and what was changed on the way (what
// the other tool's file says that is not imported: Gemini's "trust").
func writeImportReview(w io.Writer, f *Factory, e importEntry, scope config.Scope) {
	fmt.Fprintf(w, "\nServer %q (from %s) was written by the repository, not by you.\n", e.Name, trust.Quote(f.tilde(e.File)))
	fmt.Fprintf(w, "In %s scope it would start without asking, with your whole environment.\n\n", scope)
	def, _ := config.ParseServer(e.Name, e.def)
	writeDefinition(w, def)
	if len(e.Notes) > 0 {
		fmt.Fprintln(w, "\nOn the way from its file:")
		for _, n := range e.Notes {
			fmt.Fprintf(w, "  - %s\n", termsafe.Line(n))
		}
	}
	fmt.Fprintln(w)
}

// importSourceOrder is importSources in the order help and messages name
// them.
var importSourceOrder = []string{"claude-code", "claude-desktop", "codex", "vscode", "vscode-insiders", "cursor", "windsurf", "gemini"}

// importSource is a tool that keeps servers on this machine, as mcp
// import without --from lists it.
type importSource struct {
	From  string   `json:"from"`
	Label string   `json:"label"`
	Files []string `json:"files"`
	// Servers is how many it holds; -1 for Codex's, which Codex itself
	// reads at import.
	Servers int      `json:"servers"`
	shown   []string // Files for a person (~/…)
}

// line is s for a person: its name, servers and files, and the command.
func (s importSource) line() string {
	what := strings.Join(s.shown, ", ")
	if s.Servers >= 0 {
		plural := "s"
		if s.Servers == 1 {
			plural = ""
		}
		what = fmt.Sprintf("%d server%s in %s", s.Servers, plural, what)
	}
	return fmt.Sprintf("%s (%s): switchboard mcp import --from %s", s.Label, termsafe.Line(what), s.From)
}

// importableSources are the tools that keep servers on this machine, for
// a newcomer: mcp import without --from, and the listings when no server
// is configured. A file that holds none, or cannot be read, is left out.
func importableSources(f *Factory) []importSource {
	root, ok := f.WorkspaceRoot()
	if !ok {
		root = f.Cwd
	}
	var out []importSource
	for _, from := range importSourceOrder {
		found := existingImportFiles(f, importPaths(f, from, root), root)
		if len(found) == 0 {
			continue
		}
		src := importSource{From: from, Label: importSources[from], Servers: -1}
		for _, fl := range found {
			src.Files = append(src.Files, fl.path)
			src.shown = append(src.shown, f.tilde(fl.path))
		}
		if from != "codex" {
			entries, err := mergeImportFiles(f, found, from, root)
			if err != nil || len(entries) == 0 {
				continue
			}
			// A name two files define is one server to the tool.
			names := map[string]bool{}
			for _, e := range entries {
				names[e.Name] = true
			}
			src.Servers = len(names)
		}
		out = append(out, src)
	}
	return out
}

// importableLines are importableSources' lines.
func importableLines(f *Factory) []string {
	var out []string
	for _, s := range importableSources(f) {
		out = append(out, s.line())
	}
	return out
}

// importPaths are the files a tool keeps its servers in, lowest priority
// first.
func importPaths(f *Factory, from, root string) []string {
	switch from {
	case "claude-code":
		return []string{claudeCodeConfig(f)}
	case "codex":
		return []string{codexConfig(f)}
	case "claude-desktop":
		return []string{claudeDesktopPath(f, runtime.GOOS)}
	case "vscode", "vscode-insiders":
		return []string{
			filepath.Join(vscodeUserDir(userConfigDir(f, runtime.GOOS), from), "mcp.json"),
			filepath.Join(root, ".vscode", "mcp.json"),
		}
	case "cursor":
		return []string{
			filepath.Join(f.HomeDir, ".cursor", "mcp.json"),
			filepath.Join(root, ".cursor", "mcp.json"),
		}
	case "windsurf":
		return windsurfConfigs(f)
	case "gemini":
		return geminiConfigs(f, root)
	}
	return nil
}

// userConfigDir is the user config folder on goos, as the editors find
// it (os.UserConfigDir, but from f's home and environment):
// ~/Library/Application Support on macOS, %APPDATA% on Windows,
// $XDG_CONFIG_HOME or ~/.config elsewhere.
func userConfigDir(f *Factory, goos string) string {
	getenv := func(k string) string {
		if f.Getenv == nil {
			return ""
		}
		v, _ := f.Getenv(k)
		return v
	}
	switch goos {
	case "darwin":
		return filepath.Join(f.HomeDir, "Library", "Application Support")
	case "windows":
		if appData := getenv("APPDATA"); appData != "" {
			return appData
		}
		return filepath.Join(f.HomeDir, "AppData", "Roaming")
	}
	if xdg := getenv("XDG_CONFIG_HOME"); xdg != "" {
		return xdg
	}
	return filepath.Join(f.HomeDir, ".config")
}

// vscodeUserConfig is VS Code's user-profile mcp.json in the user config
// folder dir, where it keeps the servers of every workspace.
func vscodeUserConfig(dir string) string {
	return filepath.Join(vscodeUserDir(dir, "vscode"), "mcp.json")
}

// vscodeUserDir is the User folder of VS Code (from "vscode") or VS Code
// Insiders in the user config folder dir.
func vscodeUserDir(dir, from string) string {
	product := "Code"
	if from == "vscode-insiders" {
		product = "Code - Insiders"
	}
	return filepath.Join(dir, product, "User")
}

// vscodeProfile is a VS Code profile other than the default one that
// has servers of its own: User/profiles/<location>/mcp.json.
type vscodeProfile struct {
	Name, File string
}

// vscodeProfiles are the profiles of the VS Code (or Insiders) of from
// with an mcp.json, sorted by file, each named as VS Code shows it (its
// name in globalStorage/storage.json, else its folder's). The default
// profile's file is User/mcp.json, which --from reads; these are read
// only when --file names one.
func vscodeProfiles(f *Factory, from string) []vscodeProfile {
	user := vscodeUserDir(userConfigDir(f, runtime.GOOS), from)
	files, _ := filepath.Glob(filepath.Join(user, "profiles", "*", "mcp.json"))
	if len(files) == 0 {
		return nil
	}
	names := map[string]string{}
	if b, err := safefile.ReadFile(filepath.Join(user, "globalStorage", "storage.json")); err == nil {
		var st struct {
			Profiles []struct {
				Location string `json:"location"`
				Name     string `json:"name"`
			} `json:"userDataProfiles"`
		}
		if json.Unmarshal(b, &st) == nil {
			for _, p := range st.Profiles {
				names[p.Location] = p.Name
			}
		}
	}
	var out []vscodeProfile
	for _, file := range files {
		if !regularFile(file) {
			continue
		}
		id := filepath.Base(filepath.Dir(file))
		name := names[id]
		if name == "" {
			name = id
		}
		out = append(out, vscodeProfile{Name: name, File: file})
	}
	return out
}

// profileNotes say which VS Code profiles have servers --from does not
// read, and how to import them.
func profileNotes(f *Factory, from, label string, profiles []vscodeProfile) []string {
	var out []string
	for _, p := range profiles {
		arg := shellQuote(f.tilde(p.File))
		if strings.HasPrefix(arg, "'") { // a quoted ~ is not the home directory
			arg = shellQuote(p.File)
		}
		out = append(out, fmt.Sprintf("%s profile %q has servers of its own in %s, not imported: switchboard mcp import --from %s --file %s",
			label, p.Name, f.tilde(p.File), from, arg))
	}
	return out
}

// claudeCodeConfig is the file where Claude Code keeps its user- and
// local-scope servers: .claude.json in $CLAUDE_CONFIG_DIR when set, else in
// the home directory.
func claudeCodeConfig(f *Factory) string {
	if f.Getenv != nil {
		if dir, ok := f.Getenv("CLAUDE_CONFIG_DIR"); ok && dir != "" {
			return filepath.Join(dir, ".claude.json")
		}
	}
	return filepath.Join(f.HomeDir, ".claude.json")
}

// claudeDesktopPath is where Claude Desktop keeps its configuration on goos.
func claudeDesktopPath(f *Factory, goos string) string {
	return filepath.Join(userConfigDir(f, goos), "Claude", "claude_desktop_config.json")
}

// readImportFile returns the server entries of a source file in file
// order. VS Code keeps them under "servers", the others under
// "mcpServers"; either is accepted. Claude Code keeps its user-scope
// servers under "mcpServers" and each folder's local-scope ones under
// "projects"[folder]."mcpServers": those of the workspace root follow,
// each with the scope it had. ext, for a Gemini extension's manifest, says
// what else may keep its servers from starting; the manifest's variables
// are translated (geminiExtensionVars).
func readImportFile(path, from, root string, ext *geminiExtension) ([]importEntry, error) {
	data, err := safefile.ReadFile(path)
	if err != nil {
		var pe *fs.PathError
		if errors.As(err, &pe) {
			err = pe.Err
		}
		return nil, FailureErr(fmt.Errorf("reading %s: %w", path, err), "")
	}
	data, _ = config.StripBOM(data)
	if err := config.CheckNesting(path, data); err != nil {
		return nil, ConfigErr(err, "fix the file, or point --file at a good copy")
	}
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
	if from == "vscode" || from == "vscode-insiders" {
		// VS Code before 1.102 kept them in settings.json, under "mcp".
		keys = []string{"servers", "mcp/servers", "mcpServers"}
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
	var out []importEntry
	off := geminiOff(v)
	extOff := ""
	var extSettings []geminiSetting
	if ext != nil {
		extSettings = geminiSettings(v)
		name := filepath.Base(filepath.Dir(path))
		if nv := v.Find("/name"); nv != nil {
			if lit, ok := nv.Value.(hujson.Literal); ok && lit.Kind() == '"' {
				name = lit.String()
			}
		}
		extOff = geminiExtensionOff(ext.enablement, name, root)
		off = ext.off
	}
	inputs := vscodeInputs(v)
	add := func(servers *hujson.Object, scope config.Scope) {
		for _, m := range servers.Members {
			name := m.Name.Value.(hujson.Literal).String()
			val := m.Value.Clone()
			val.BeforeExtra, val.AfterExtra = nil, nil
			val.Standardize()
			e := importEntry{Name: name, File: path, def: val.Pack(), scope: scope}
			why := off(name)
			if ext != nil {
				e.def, e.Notes = geminiExtensionVars(e.def, filepath.Dir(path))
				if extOff != "" {
					why = extOff
				}
			}
			var notes []string
			e.def, notes, e.Reason = dialectImport(from, name, e.def, why)
			e.Notes = append(e.Notes, notes...)
			if e.Reason == "" {
				e.Notes = append(e.Notes, geminiSettingNotes(e.def, extSettings)...)
			}
			if e.Reason == "" {
				var notes []string
				e.def, notes = resolveInputs(e.def, inputs)
				e.Notes = append(e.Notes, notes...)
				if ids := undeclaredInputs(e.def, inputs); len(ids) > 0 {
					e.Reason = undeclaredReason(ids)
				}
			}
			out = append(out, e)
		}
	}
	if from != "claude-code" {
		if servers != nil {
			add(servers, "")
		}
		return out, nil
	}
	if servers != nil {
		add(servers, config.ScopeUser)
	}
	if root == "" {
		return out, nil
	}
	keys, _ = config.LocalKeys(path, root)
	for _, k := range keys {
		if sv := v.Find("/projects/" + pointerToken(k) + "/mcpServers"); sv != nil {
			if so, ok := sv.Value.(*hujson.Object); ok {
				add(so, config.ScopeLocal)
			}
		}
	}
	return out, nil
}

// yoursWins is why a repository's definition is skipped for the user's
// own of the same name, in file.
func yoursWins(f *Factory, file string) string {
	return fmt.Sprintf("the repository's definition has the name of yours in %s, and yours wins", f.tilde(file))
}

// regularFile reports whether path is a regular file.
func regularFile(path string) bool {
	fi, err := os.Stat(path)
	return err == nil && fi.Mode().IsRegular()
}

// Compiled on first use: every run of the binary (supervisors and test
// servers too) links this package, few of them import anything.
var (
	// placeholderRE matches ${…} in JSON text.
	placeholderRE = lazyre.New(`\$\{([^}]*)\}`)
	ourVarRE      = lazyre.New(`^[A-Z_][A-Z0-9_]*(:-.*)?$`)
)

// translateImport rewrites one definition from the other tool's dialect.
// It returns the new definition and notes on what changed, or why the
// server cannot be imported.
func translateImport(f *Factory, def []byte, root string) (out []byte, notes []string, skip string) {
	def, secrets := inputsAsSecrets(def)
	if len(secrets) > 0 {
		for _, id := range secrets {
			notes = append(notes, fmt.Sprintf("${input:%s} became ${secret:%s}: asked for on a terminal when the server first starts and kept in your credential store, as VS Code keeps the input (or: switchboard secret set %s)", id, id, id))
		}
	}
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
		case strings.HasPrefix(inner, "secret:"):
			return m // Switchboard's own (inputsAsSecrets' too)
		case strings.HasPrefix(inner, "input:"):
			inputs = append(inputs, m)
		default:
			unknown = append(unknown, m)
		}
		return m
	})
	if len(inputs) > 0 {
		return nil, nil, fmt.Sprintf("uses %s, which only VS Code can prompt for, where a ${secret:…} cannot stand in for it (in an env or header value or the url, the input's id letters, digits, _ . and - only); add it with switchboard mcp add, giving the value or a ${VAR}", strings.Join(dedupe(inputs), ", "))
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
		// Without the variables of its envFile the server would start
		// without its credentials, or against another default (a local
		// database for the staging one): not the server it was.
		if key == "envFile" {
			file := "its envFile"
			if lit, ok := m.Value.Value.(hujson.Literal); ok && lit.Kind() == '"' {
				file = fmt.Sprintf("its envFile %q", lit.String())
			}
			return nil, nil, fmt.Sprintf("reads its environment from %s, which Switchboard does not read; "+
				"add it with switchboard mcp add-json, its variables in \"env\" (a credential as ${secret:NAME}, after switchboard secret set NAME)", file)
		}
		if !config.IsServerField(key) {
			drop = append(drop, key)
		}
		// Another tool's "sandbox" has another shape: Switchboard's own
		// sandbox applies instead, rather than the server being skipped.
		var sb config.Sandbox
		if key == "sandbox" && json.Unmarshal(m.Value.Pack(), &sb) != nil {
			drop = append(drop, key)
		}
	}
	for _, key := range drop {
		ptr, _ := json.Marshal("/" + pointerToken(key))
		if err := v.Patch([]byte(`[{"op":"remove","path":` + string(ptr) + `}]`)); err != nil {
			return nil, nil, "cannot translate the definition: " + err.Error()
		}
		switch key {
		case "disabled":
			continue
		case "sandbox":
			notes = append(notes, `dropped "sandbox", which is not in Switchboard's form ({"fs": …, "network": …}): Switchboard's own sandbox for the scope applies (docs/security.md, Sandbox)`)
			continue
		}
		notes = append(notes, fmt.Sprintf("dropped %q, which Switchboard does not read", key))
	}
	// A definition written for Windows runs npx (a batch file there)
	// through cmd /c; elsewhere there is no cmd, and the command inside
	// is what runs.
	if runtime.GOOS != "windows" {
		var def struct {
			Command string   `json:"command"`
			Args    []string `json:"args"`
		}
		if json.Unmarshal(v.Pack(), &def) == nil {
			if inner, ok, why := unwrapCmd(def.Command, def.Args); why != "" {
				return nil, nil, why
			} else if ok {
				args, _ := json.Marshal(inner[1:])
				cmd, _ := json.Marshal(inner[0])
				op := "replace"
				if v.Find("/args") == nil {
					op = "add"
				}
				if err := v.Patch([]byte(`[{"op":"replace","path":"/command","value":` + string(cmd) + `},{"op":"` + op + `","path":"/args","value":` + string(args) + `}]`)); err != nil {
					return nil, nil, "cannot translate the definition: " + err.Error()
				}
				notes = append(notes, fmt.Sprintf("written for Windows as %s: imported as %s, the command cmd /c runs there (this system has no cmd)",
					shellJoin(def.Command, def.Args), shellJoin(inner[0], inner[1:])))
			}
		}
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

// unwrapCmd returns the command line that cmd /c runs in command and
// args ("cmd", ["/c", "npx", "-y", "pkg"] → npx -y pkg), ok false when
// they are not cmd /c. A single argument after /c is the whole command
// line, split at spaces when it has no quotes; why says why one with
// quotes or cmd's operators cannot be taken apart.
func unwrapCmd(command string, args []string) (inner []string, ok bool, why string) {
	base := strings.ToLower(command)
	if i := strings.LastIndexAny(base, `\/`); i >= 0 {
		base = base[i+1:]
	}
	if base != "cmd" && base != "cmd.exe" {
		return nil, false, ""
	}
	i := 0
	for i < len(args) && slices.Contains([]string{"/s", "/q", "/d"}, strings.ToLower(args[i])) {
		i++
	}
	if i >= len(args) || !strings.EqualFold(args[i], "/c") || i+1 >= len(args) {
		return nil, false, ""
	}
	rest := args[i+1:]
	if len(rest) == 1 {
		if strings.ContainsAny(rest[0], "\"'^&|<>%") {
			return nil, false, fmt.Sprintf("runs cmd /c %q, written for Windows, which this system has no cmd for, and Switchboard does not take a command line of cmd's apart; add it with switchboard mcp add NAME -- COMMAND ARGS…", rest[0])
		}
		rest = strings.Fields(rest[0])
	}
	for _, a := range rest {
		if strings.ContainsAny(a, "&|<>^") || strings.Contains(a, "%") && strings.Count(a, "%") >= 2 {
			return nil, false, fmt.Sprintf("runs %s, written for Windows, and what cmd makes of %q (its operators, %%VAR%%) this system's command cannot; add it with switchboard mcp add NAME -- COMMAND ARGS…", shellJoin(command, args), a)
		}
	}
	if len(rest) == 0 {
		return nil, false, ""
	}
	return rest, true, ""
}

// inputsAsSecrets replaces VS Code's ${input:ID} in def's env and header
// values and url with ${secret:ID}: a value asked for once and kept, as
// VS Code keeps an input's, which Switchboard asks for on a terminal when
// the server first starts. It returns the IDs replaced. Elsewhere (args,
// command, cwd) a secret reference is refused, so ${input:…} stays there.
func inputsAsSecrets(def []byte) ([]byte, []string) {
	if !strings.Contains(string(def), "${input:") {
		return def, nil
	}
	v, obj, ok := parseObject(def)
	if !ok {
		return def, nil
	}
	var ids []string
	swap := func(s string) string {
		return placeholderRE().ReplaceAllStringFunc(s, func(m string) string {
			id, ok := strings.CutPrefix(m[2:len(m)-1], "input:")
			if !ok || !config.ValidSecretName(id) {
				return m
			}
			if !slices.Contains(ids, id) {
				ids = append(ids, id)
			}
			return "${secret:" + id + "}"
		})
	}
	for i := range obj.Members {
		switch memberName(&obj.Members[i]) {
		case "env", "headers", "url":
			eachString(&obj.Members[i].Value, swap)
		}
	}
	if len(ids) == 0 {
		return def, nil
	}
	return v.Pack(), ids
}

// checkImport validates a translated definition as the loader would.
func checkImport(name string, def []byte) string {
	if !config.ValidName(name) {
		return fmt.Sprintf("illegal server name; add it by hand under a legal one such as %q", suggestName(name))
	}
	// Refused at runtime (a__b, x_), as mcp add refuses it: written, it
	// would be imported "needing approval" and never run.
	if why := policy.ServerNameProblem(name); why != "" {
		return fmt.Sprintf("server name cannot be used: %s; add it by hand under another name such as %q",
			why, suggestName(strings.TrimRight(strings.ReplaceAll(name, "__", "_"), "_.-")))
	}
	s, diags := config.ParseServer(name, def)
	if d := firstError(diags); hasError(diags) {
		msg := d.Message
		if d.Field != "" {
			msg = fmt.Sprintf("field %q: %s", d.Field, msg)
		}
		return msg
	}
	if host.IsGatewayCommand(s.Command, s.Args) {
		return "it runs the Switchboard gateway (switchboard serve), which serves your Switchboard servers to that tool: nothing to import"
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

package cli

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"maps"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"slices"
	"strconv"
	"strings"

	"github.com/spf13/cobra"
	"github.com/tailscale/hujson"

	"github.com/switchboard-mcp/switchboard/config"
	"github.com/switchboard-mcp/switchboard/host"
	"github.com/switchboard-mcp/switchboard/internal/atomicfile"
	"github.com/switchboard-mcp/switchboard/internal/watch"
	"github.com/switchboard-mcp/switchboard/toolsurface"

	"github.com/switchboard-mcp/switchboard/internal/safefile"
)

func init() {
	registerMCPCommand(func(f *Factory) *cobra.Command { return NewInstallGatewayCmd(f, nil) })
}

// InstallGatewayOptions are the inputs of `switchboard mcp install-gateway`.
type InstallGatewayOptions struct {
	IO *IOStreams
	// Client is claude-code, cursor or vscode.
	Client string
	// Scope is user, project or local ("" for the client's default).
	Scope string
	// Name is the entry's name (default "switchboard").
	Name string
	// File overrides the client's config file (tests, unusual setups).
	File string
	// Command is the switchboard executable written into the entry
	// (default: see gatewayCommand).
	Command string
	// Move takes the servers the client would see twice (its own entry
	// and through the gateway) out of the file, after a backup beside it.
	Move bool
	// Profiles, if set, are the profiles to write an entry for, each
	// running `serve --stdio --profile NAME` and named Name-NAME
	// ("switchboard-NAME"), or Name itself when NamePinned and there is
	// one profile.
	Profiles   []string
	NamePinned bool
	// AllProfiles writes an entry per profile of the settings
	// (ProfileNames lists them).
	AllProfiles  bool
	ProfileNames func() ([]string, error)
	// ProfileScope says which settings define profile name, and where
	// ("" when none does): a user-scope entry, run in every workspace,
	// cannot serve one defined for this workspace only (the repository's
	// settings, or a "projects" entry of the user's); a project-scope
	// entry, shared with the repository, cannot serve one only this
	// user's settings define. If nil, every profile may be served
	// anywhere.
	ProfileScope func(name string) (scope config.SettingsScope, where string)

	// written are the entries this run writes.
	written []gatewayEntry
	// Config loads Switchboard's own configuration: the servers the
	// gateway will serve and the files it reads. If nil, neither is
	// checked.
	Config func() (*config.Resolved, error)
	// Executable and LookPath find this executable and a switchboard on
	// PATH. If nil, os.Executable and exec.LookPath.
	Executable func() (string, error)
	LookPath   func(string) (string, error)
	// Root is the workspace root (for project and local scopes); ok is
	// false when there is none.
	Root func() (string, bool)
	// HomeDir is ~; ConfigDir the OS user config folder (VS Code's user
	// folder lives there).
	HomeDir, ConfigDir string
	// ClaudeConfig is Claude Code's .claude.json (claudeCodeConfig), and
	// CodexConfig Codex's config.toml (codexConfig); "" for the one below
	// HomeDir.
	ClaudeConfig, CodexConfig string
	Tilde                     func(string) string
}

// gatewayClient describes where one MCP client keeps its servers.
type gatewayClient struct {
	name         string // as people know it
	defaultScope string
	scopes       []string
	// entryKey is the object holding servers: mcpServers, or servers (VS Code).
	entryKey string
	// budget is the gateway's --name-budget for an entry of that name:
	// what is left of the 64 characters a model provider takes once the
	// client has added its own prefix to a tool's name (docs/gateway.md, Tool
	// names).
	budget func(entry string) int
}

var gatewayClients = map[string]gatewayClient{
	// Claude Code names tool T of entry E mcp__E__T.
	"claude-code": {name: "Claude Code", defaultScope: "user", scopes: []string{"user", "project", "local"}, entryKey: "mcpServers",
		budget: toolsurface.NameBudget},
	// Cursor holds the server's and the tool's name together to 60.
	"cursor": {name: "Cursor", defaultScope: "user", scopes: []string{"user", "project"}, entryKey: "mcpServers",
		budget: func(entry string) int { return 60 - len(toolsurface.SanitizePart(entry)) }},
	// Codex names tool T of server E E__T (within 64, else a hash): the
	// budget of mcp__E__T holds either way. Its file is TOML, which
	// Switchboard does not edit: the entry is printed (codexEntry).
	"codex": {name: "Codex", defaultScope: "user", scopes: []string{"user", "project"}, entryKey: "mcp_servers",
		budget: toolsurface.NameBudget},
	// VS Code names tool T of server E mcp_E_T, within 64.
	"vscode": {name: "VS Code", defaultScope: "project", scopes: []string{"user", "project"}, entryKey: "servers",
		budget: func(entry string) int {
			return toolsurface.MaxNameLen - len("mcp_"+toolsurface.SanitizePart(entry)+"_")
		}},
}

// NewInstallGatewayCmd returns `switchboard mcp install-gateway`.
func NewInstallGatewayCmd(f *Factory, runF func(context.Context, *InstallGatewayOptions) error) *cobra.Command {
	opts := &InstallGatewayOptions{}
	cmd := &cobra.Command{
		Use:   "install-gateway --client claude-code|codex|cursor|vscode",
		Short: "Add the Switchboard gateway to an MCP client's configuration",
		Long: `Write one server entry that runs 'switchboard serve --stdio' into an MCP client's
configuration, so that the client reaches every Switchboard server — with launch
trust, permission rules, circuit breaking and output caps — through it.

Files written (comments and every other entry are kept):
  claude-code  user: ~/.claude.json "mcpServers"   project: .mcp.json
               local: ~/.claude.json "projects"[<workspace>]."mcpServers"
               ($CLAUDE_CONFIG_DIR/.claude.json when that is set, as Claude Code)
  codex        user: ~/.codex/config.toml ($CODEX_HOME)  project: .codex/config.toml
               [mcp_servers.NAME] tables: printed, with the codex mcp add command,
               not written (Switchboard does not edit TOML)
  cursor       user: ~/.cursor/mcp.json             project: .cursor/mcp.json
  vscode       user: <VS Code user folder>/mcp.json project: .vscode/mcp.json ("servers")

A user-scope entry follows the project the client runs in; a local-scope entry
names the workspace. Restart the client (or reload its MCP servers) afterwards.

With --profile NAME the entry serves that profile of the settings only
(docs/configuration.md, Profiles) and is named switchboard-NAME (unless --name
is given); --all-profiles writes one such entry per profile. A profile is
written only where its entry can run for everyone who uses it: a user-scope
entry (every workspace) serves no profile defined for this workspace only, a
project-scope entry (shared with the repository) none that only your own
settings define; --profile of one is refused, saying which scope fits, and
--all-profiles leaves it out.

The entry passes --name-budget, so that every tool name the client builds from
the entry's name stays within the 64 characters model providers accept.

The command written is this switchboard when it is installed (not a temporary
'go run' or 'go test' build), else the switchboard on PATH; into a file the
repository shares (project scope), plain 'switchboard', found on each user's PATH.

Servers the client already has (same name, command or URL as one of Switchboard's),
in any of its scopes, would be listed twice, directly and through the gateway:
they are named, as is another entry that runs a gateway, and --move takes them
out of the client's files, keeping a backup beside each. An entry of the
client's user scope, used in every workspace, is moved only when the gateway
serves it in every workspace too (its entry in the client's user scope, the
server in Switchboard's user scope).

Claude Code's .mcp.json is also a file Switchboard reads: Switchboard knows the
gateway's own entry there and never starts it or asks to approve it (status
shows it disabled, doctor notes it).`,
		Example: `  switchboard mcp install-gateway --client claude-code
  switchboard mcp install-gateway --client vscode --scope project
  switchboard mcp install-gateway --client cursor --name sb
  switchboard mcp install-gateway --client claude-code --move
  switchboard mcp install-gateway --client claude-code --profile review
  switchboard mcp install-gateway --client claude-code --all-profiles`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			opts.IO = f.IO
			opts.HomeDir = f.HomeDir
			opts.ClaudeConfig, opts.CodexConfig = claudeCodeConfig(f), codexConfig(f)
			opts.Root = f.WorkspaceRoot
			opts.Tilde = f.tilde
			if opts.File != "" {
				opts.File = f.abs(opts.File)
			}
			opts.ConfigDir = userConfigDir(f, runtime.GOOS)
			opts.Config = f.LoadConfig
			if p := f.global().Profile; p != "" {
				opts.Profiles = []string{p} // checked before RunE
			}
			opts.NamePinned = cmd.Flags().Changed("name")
			opts.ProfileNames = func() ([]string, error) {
				cfg, _ := f.LoadConfig()
				st, err := f.settingsStack(cfg)
				if err != nil {
					return nil, err
				}
				ps, _ := st.Profiles()
				return ps.Names(), nil
			}
			opts.ProfileScope = func(name string) (config.SettingsScope, string) {
				cfg, _ := f.LoadConfig()
				st, err := f.settingsStack(cfg)
				if err != nil {
					return "", ""
				}
				ps, _ := st.Profiles()
				p, ok := ps[name]
				if !ok {
					return "", ""
				}
				return p.Scope, fmt.Sprintf("%s settings, %s", p.Scope, f.tilde(p.Position.String()))
			}
			if runF != nil {
				return runF(cmd.Context(), opts)
			}
			return installGatewayRun(opts)
		},
	}
	fl := cmd.Flags()
	fl.StringVar(&opts.Client, "client", "", "the MCP client: claude-code, codex, cursor or vscode")
	_ = cmd.RegisterFlagCompletionFunc("client", cobra.FixedCompletions(slices.Sorted(maps.Keys(gatewayClients)), cobra.ShellCompDirectiveNoFileComp))
	fl.StringVarP(&opts.Scope, "scope", "s", "", "user, project or local (claude-code only); default user (vscode: project)")
	fl.StringVar(&opts.Name, "name", "switchboard", "the entry's `NAME` in the client's config")
	fl.StringVar(&opts.File, "file", "", "write to `FILE` instead of the client's own config file")
	fl.StringVar(&opts.Command, "command", "", "the switchboard executable to run (default: this one when installed, else switchboard on PATH)")
	fl.BoolVar(&opts.Move, "move", false, "take the servers the client would see twice out of its file (a backup is kept beside it)")
	fl.BoolVar(&opts.AllProfiles, "all-profiles", false, "write one entry per profile of the settings, NAME-PROFILE each (--profile NAME writes that one)")
	return cmd
}

func installGatewayRun(opts *InstallGatewayOptions) error {
	c, ok := gatewayClients[opts.Client]
	if !ok {
		return Usagef("pass --client claude-code, --client codex, --client cursor or --client vscode", "unknown or missing --client %q", opts.Client)
	}
	scope := opts.Scope
	if scope == "" {
		scope = c.defaultScope
	}
	if !contains(c.scopes, scope) {
		return Usagef("use --scope "+strings.Join(c.scopes, ", "), "%s has no %s scope", c.name, scope)
	}
	if strings.TrimSpace(opts.Name) == "" {
		return Usagef("pass --name NAME", "the entry needs a name")
	}
	entries, err := gatewayEntries(opts)
	if err != nil {
		return err
	}
	if entries, err = scopeProfiles(opts, entries, scope); err != nil {
		return err
	}
	opts.written = entries
	for _, e := range entries {
		if budget := c.budget(e.name); budget < toolsurface.MinNameBudget {
			return Usagef("pass a shorter --name", "the entry name %q leaves %s only %d characters for a tool's name (it needs %d)", e.name, c.name, budget, toolsurface.MinNameBudget)
		}
	}

	var root string
	if scope != "user" {
		r, ok := opts.Root()
		if !ok {
			return Usagef("run it inside a project, pass --workspace DIR, or use --scope user", "%s scope needs a workspace, and none was found", scope)
		}
		root = r
	}
	file, objPath, err := gatewayTarget(opts, opts.Client, scope, root)
	if err != nil {
		return err
	}
	if opts.File != "" {
		file = opts.File
	}
	if root != "" {
		if err := config.CheckRepoFile(root, file); err != nil {
			return linkOutErr(nil, err)
		}
	}
	// A file inside the repository is shared with everyone who clones it.
	shared := scope == "project"
	if opts.Root != nil && !shared && opts.File != "" {
		if r, ok := opts.Root(); ok {
			shared = watch.Within(file, r)
		}
	}
	command, notes, err := gatewayCommand(opts, shared)
	if err != nil {
		return err
	}
	if opts.Client == "codex" {
		if opts.Move {
			return Usagef("take the servers out of Codex's file by hand, or with codex mcp remove NAME", "--move edits the client's file, and Codex's is TOML, which Switchboard does not edit")
		}
		return codexEntry(opts, c, scope, file, command, entries, notes)
	}
	var cfg *config.Resolved
	if opts.Config != nil {
		if cfg, err = opts.Config(); err != nil {
			return err
		}
	}
	tilde := opts.Tilde
	if tilde == nil {
		tilde = func(s string) string { return s }
	}
	var sourceNote string
	if cfg != nil && readsServers(cfg, file) {
		sourceNote = fmt.Sprintf("Note: Switchboard reads %s as a server source too. It knows the entry %q there as this gateway's own: "+
			"it never starts it or asks to approve it (status shows it disabled), and the servers defined there reach %s both directly and through the gateway.",
			tilde(file), entries[0].name, c.name)
	}

	for _, e := range entries {
		args := gatewayArgs(opts.Client, c, scope, root, e)
		entry := map[string]any{"type": "stdio", "command": command, "args": args}
		def, err := json.Marshal(entry)
		if err != nil {
			return err
		}
		existed, err := config.HasServer(file, objPath, e.name)
		if err != nil {
			return ConfigErr(err, "fix the file, or pass --file to write elsewhere")
		}
		if err := config.SetServer(file, objPath, e.name, def); err != nil {
			return ConfigErr(err, "fix the file, or pass --file to write elsewhere")
		}
		verb := "Added"
		if existed {
			verb = "Updated"
		}
		what := "the Switchboard gateway"
		if e.profile != "" {
			what = fmt.Sprintf("the Switchboard gateway of profile %q", e.profile)
		}
		prep := "to"
		if existed {
			prep = "in"
		}
		fmt.Fprintf(opts.IO.Out, "%s %s as %q %s %s's %s config in %s\n", verb, what, e.name, prep, c.name, scope, tilde(file))
	}
	for _, n := range notes {
		fmt.Fprintf(opts.IO.ErrOut, "warning: %s\n", n)
	}
	if sourceNote != "" {
		fmt.Fprintln(opts.IO.ErrOut, sourceNote)
	}
	if cfg != nil {
		// Every scope of the client, those of this project too when
		// there is one, whichever scope the entry went to.
		look := root
		if look == "" && opts.Root != nil {
			look, _ = opts.Root()
		}
		if err := reportTwice(opts, c, cfg, look, file, objPath, scope, tilde); err != nil {
			return err
		}
	}
	fmt.Fprintf(opts.IO.ErrOut, "Restart %s (or reload its MCP servers) to use it.\n", c.name)
	return nil
}

// gatewayArgs are the arguments of entry e of client's in scope (root is
// the workspace, for local scope): serve --stdio, the workspace where the
// client does not start it there, the profile, the name budget.
func gatewayArgs(client string, c gatewayClient, scope, root string, e gatewayEntry) []string {
	args := []string{"serve", "--stdio"}
	switch {
	case scope == "local":
		args = append(args, "--workspace", root)
	case scope == "project" && client == "vscode":
		// VS Code expands it; other clients start servers in the project.
		args = append(args, "--workspace", "${workspaceFolder}")
	}
	if e.profile != "" {
		args = append(args, "--profile", e.profile)
	}
	return append(args, "--name-budget", strconv.Itoa(c.budget(e.name)))
}

// codexEntry says how to add the gateway to Codex, whose servers are
// tables of a TOML file (file) that Switchboard does not edit: Codex's own
// `codex mcp add` (which writes its user file), and the table itself for
// the file. Nothing is written.
func codexEntry(opts *InstallGatewayOptions, c gatewayClient, scope, file, command string, entries []gatewayEntry, notes []string) error {
	tilde := opts.Tilde
	if tilde == nil {
		tilde = func(s string) string { return s }
	}
	out := opts.IO.Out
	var cmds, tables []string
	for _, e := range entries {
		args := gatewayArgs(opts.Client, c, scope, "", e)
		words := []string{"codex", "mcp", "add", shellQuote(e.name), "--", shellQuote(command)}
		for _, a := range args {
			words = append(words, shellQuote(a))
		}
		cmds = append(cmds, strings.Join(words, " "))
		quoted := make([]string, len(args))
		for i, a := range args {
			quoted[i] = tomlString(a)
		}
		tables = append(tables, fmt.Sprintf("[mcp_servers.%s]\ncommand = %s\nargs = [%s]\n", tomlKey(e.name), tomlString(command), strings.Join(quoted, ", ")))
	}
	fmt.Fprintf(out, "Codex keeps its servers as TOML tables in %s, which Switchboard does not edit: nothing was written.\n", tilde(file))
	if scope == "user" && opts.File == "" {
		fmt.Fprintln(out, "Add the gateway with Codex's own command, which writes that file (rewriting it: its comments are lost):")
		fmt.Fprintln(out)
		for _, c := range cmds {
			fmt.Fprintln(out, "  "+c)
		}
		fmt.Fprintln(out)
		fmt.Fprintln(out, "or add to it yourself:")
	} else {
		fmt.Fprintln(out, "Add to it (Codex reads a project's .codex/config.toml once you trust the project):")
	}
	fmt.Fprintln(out)
	for _, t := range tables {
		for _, l := range strings.Split(strings.TrimSuffix(t, "\n"), "\n") {
			fmt.Fprintln(out, "  "+l)
		}
		fmt.Fprintln(out)
	}
	for _, n := range notes {
		fmt.Fprintf(opts.IO.ErrOut, "warning: %s\n", n)
	}
	return nil
}

// tomlString is s as a TOML basic string.
func tomlString(s string) string {
	var b strings.Builder
	b.WriteByte('"')
	for _, r := range s {
		switch {
		case r == '"' || r == '\\':
			b.WriteByte('\\')
			b.WriteRune(r)
		case r == '\n':
			b.WriteString(`\n`)
		case r == '\t':
			b.WriteString(`\t`)
		case r < 0x20 || r == 0x7f:
			fmt.Fprintf(&b, `\u%04X`, r)
		default:
			b.WriteRune(r)
		}
	}
	b.WriteByte('"')
	return b.String()
}

// tomlKey is k as a TOML key: bare when it can be, else quoted.
func tomlKey(k string) string {
	for _, r := range k {
		if !(r >= 'A' && r <= 'Z' || r >= 'a' && r <= 'z' || r >= '0' && r <= '9' || r == '_' || r == '-') {
			return tomlString(k)
		}
	}
	if k == "" {
		return `""`
	}
	return k
}

// gatewayEntry is one entry install-gateway writes: its name, and the
// profile it serves ("" for every server).
type gatewayEntry struct{ name, profile string }

// gatewayEntries are the entries to write: one, or one per profile.
func gatewayEntries(opts *InstallGatewayOptions) ([]gatewayEntry, error) {
	profiles := opts.Profiles
	if opts.AllProfiles {
		if len(profiles) > 0 {
			return nil, Usagef("pass one of them", "--profile and --all-profiles both name the profiles")
		}
		var names []string
		if opts.ProfileNames != nil {
			var err error
			if names, err = opts.ProfileNames(); err != nil {
				return nil, err
			}
		}
		if len(names) == 0 {
			return nil, Usagef(`define profiles under "profiles" in settings.json (docs/configuration.md, Profiles)`, "--all-profiles: the settings define no usable profile")
		}
		profiles = names
	}
	if len(profiles) == 0 {
		return []gatewayEntry{{name: opts.Name}}, nil
	}
	var out []gatewayEntry
	for _, p := range profiles {
		name := opts.Name + "-" + p
		if opts.NamePinned && len(profiles) == 1 {
			name = opts.Name
		}
		out = append(out, gatewayEntry{name: name, profile: p})
	}
	return out, nil
}

// scopeProfiles keeps the profiles an entry of scope can serve wherever
// it runs. A user-scope entry runs in every workspace: a profile of the
// repository's settings or of a "projects" entry would fail in every
// other one (and let a repository add entries to the person's own client
// configuration). A project-scope entry is shared with the repository:
// a profile only this user's settings define (their top level, a
// "projects" entry) would fail for everyone else who clones it; one of
// the managed settings is written with a note (it works where the same
// managed settings are installed, as in one organisation). A
// local-scope entry (this person, this workspace) can serve any of those.
// None serves a profile of --settings alone: the entry does not pass it.
// --profile of one that cannot be served is refused, saying which scope
// can; --all-profiles leaves it out, saying so.
func scopeProfiles(opts *InstallGatewayOptions, entries []gatewayEntry, scope string) ([]gatewayEntry, error) {
	if opts.ProfileScope == nil {
		return entries, nil
	}
	var out []gatewayEntry
	for _, e := range entries {
		why, fix := "", ""
		if e.profile != "" {
			why, fix = profileScopeProblem(opts, e.profile, scope)
		}
		switch {
		case why == "":
			out = append(out, e)
			if e.profile != "" && scope == "project" {
				if ps, where := opts.ProfileScope(e.profile); ps == config.SettingsManaged {
					fmt.Fprintf(opts.IO.ErrOut, "Note: profile %s is defined by the managed settings (%s): the shared entry works for those who clone the repository where the same managed settings are installed, and fails elsewhere.\n", e.profile, where)
				}
			}
		case !opts.AllProfiles:
			return nil, Usagef(fix, "profile %q %s", e.profile, why)
		default:
			fmt.Fprintf(opts.IO.ErrOut, "Left out profile %s: it %s; %s.\n", e.profile, why, fix)
		}
	}
	if len(out) == 0 {
		return nil, Usagef("pass another --scope for them (see above)", "--all-profiles: no profile can be served by an entry of the client's %s scope", scope)
	}
	return out, nil
}

// profileScopeProblem says why an entry of scope cannot serve profile
// name, and what to do ("" when it can).
func profileScopeProblem(opts *InstallGatewayOptions, name, scope string) (why, fix string) {
	ps, where := opts.ProfileScope(name)
	claude := opts.Client == "claude-code"
	switch {
	case ps == config.SettingsFlag:
		return fmt.Sprintf("is defined by --settings only (%s), which the entry does not pass: it would fail wherever it runs", where),
			"define the profile in your user settings (~/.switchboard/settings.json), or in the repository's .switchboard/settings.json to share it"
	case scope == "user" && ps == config.SettingsProject:
		fix = "pass --scope project"
		if claude {
			fix += " (or --scope local)"
		}
		return fmt.Sprintf("is defined for this workspace only (%s): a user-scope entry, run in every workspace, would fail elsewhere", where),
			fix + ", or define the profile in your user settings (~/.switchboard/settings.json)"
	case scope == "user" && ps == config.SettingsLocal:
		fix = "move the profile to the top level of your user settings (~/.switchboard/settings.json)"
		if claude {
			fix = "pass --scope local, or " + fix
		}
		return fmt.Sprintf("is defined for this workspace only (%s): a user-scope entry, run in every workspace, would fail elsewhere", where), fix
	case scope == "project" && (ps == config.SettingsUser || ps == config.SettingsLocal):
		switch {
		case ps == config.SettingsLocal && claude:
			fix = "pass --scope local (this workspace, for you only)"
		case ps == config.SettingsLocal:
			fix = "move the profile to the top level of your user settings (~/.switchboard/settings.json) and pass --scope user"
		case ps == config.SettingsUser && claude:
			fix = "pass --scope user (or --scope local)"
		default:
			fix = "pass --scope user"
		}
		return fmt.Sprintf("is defined in your own settings only (%s): a project-scope entry is shared with the repository, and would fail for everyone else who clones it", where),
			fix + "; or, to share it, define the profile in the repository's .switchboard/settings.json"
	}
	return "", ""
}

// wrote reports whether this run writes the entry named name, or, for
// "", an entry of a profile.
func (opts *InstallGatewayOptions) wrote(name string) bool {
	return slices.ContainsFunc(opts.written, func(e gatewayEntry) bool {
		return (name == "" && e.profile != "") || (name != "" && e.name == name)
	})
}

// gatewayCommand is the program the entry runs. A file the repository
// shares gets plain "switchboard", found on each user's PATH: a path on
// this machine means nothing on another. Otherwise this executable, by
// its absolute path, unless it is a temporary build (`go run`, a test
// binary), which is gone tomorrow: then the switchboard on PATH, else
// "switchboard" with a warning.
func gatewayCommand(opts *InstallGatewayOptions, shared bool) (string, []string, error) {
	if c := opts.Command; c != "" {
		if strings.ContainsRune(c, '/') || strings.ContainsRune(c, filepath.Separator) {
			if abs, err := filepath.Abs(c); err == nil {
				c = abs
			}
		}
		return c, nil, nil
	}
	executable, lookPath := opts.Executable, opts.LookPath
	if executable == nil {
		executable = os.Executable
	}
	if lookPath == nil {
		lookPath = exec.LookPath
	}
	onPath, _ := lookPath("switchboard")
	if onPath != "" {
		if abs, err := filepath.Abs(onPath); err == nil {
			onPath = abs
		}
	}
	const install = "install it (go install github.com/switchboard-mcp/switchboard/cmd/switchboard@latest, or a release) or pass --command"
	if shared {
		if onPath == "" {
			return "switchboard", []string{"there is no switchboard on PATH here, so the client cannot start the gateway yet: " + install}, nil
		}
		return "switchboard", nil, nil
	}
	exe, err := executable()
	if err == nil && !isTempBuild(exe) {
		if abs, err := filepath.Abs(exe); err == nil {
			exe = abs
		}
		return exe, nil, nil
	}
	if onPath != "" {
		return onPath, nil, nil
	}
	why := "this switchboard is a temporary build"
	if err != nil {
		why = "this executable cannot be found (" + err.Error() + ")"
	}
	return "switchboard", []string{why + " and there is no switchboard on PATH, so the entry runs plain \"switchboard\": " + install}, nil
}

// isTempBuild reports whether exe is a build that will not last: one
// under the temporary folder (go run, go test) or the go build cache.
func isTempBuild(exe string) bool {
	if real, err := filepath.EvalSymlinks(exe); err == nil {
		exe = real
	}
	for _, dir := range []string{os.TempDir(), "/tmp", "/var/folders"} {
		if real, err := filepath.EvalSymlinks(dir); err == nil {
			dir = real
		}
		if watch.Within(exe, dir) {
			return true
		}
	}
	return strings.Contains(filepath.ToSlash(exe), "/go-build")
}

// readsServers reports whether Switchboard reads servers from file.
func readsServers(cfg *config.Resolved, file string) bool {
	for _, f := range append(append([]string(nil), cfg.Files.Searched...), cfg.Files.Project, cfg.Files.User) {
		if f != "" && sameFile(f, file) {
			return true
		}
	}
	return false
}

func sameFile(a, b string) bool {
	if filepath.Clean(a) == filepath.Clean(b) {
		return true
	}
	sa, errA := os.Stat(a)
	sb, errB := os.Stat(b)
	return errA == nil && errB == nil && os.SameFile(sa, sb)
}

// clientEntry is what install-gateway compares of a client's server entry.
type clientEntry struct {
	Command string   `json:"command"`
	Args    []string `json:"args"`
	URL     string   `json:"url"`
}

// clientPlace is one object of a client's config files that holds
// servers: one of its scopes (or --file).
type clientPlace struct {
	file    string
	objPath []string
	label   string // for messages: the file, and the scope
	scope   string // the client's scope, "" for --file
	// source is set when Switchboard reads servers from file too: an
	// entry there is one of the gateway's own servers.
	source bool
}

// clientPlaces are the objects holding the client's servers, in every
// scope it has (those of a project only with a workspace root) and --file:
// the target first.
func clientPlaces(opts *InstallGatewayOptions, c gatewayClient, cfg *config.Resolved, root, file string, objPath []string, tilde func(string) string) []clientPlace {
	places := []clientPlace{{file: file, objPath: objPath, label: tilde(file)}}
	for _, scope := range c.scopes {
		if scope != "user" && root == "" {
			continue
		}
		f, op, err := gatewayTarget(opts, opts.Client, scope, root)
		if err != nil {
			continue
		}
		label := fmt.Sprintf("%s (%s scope)", tilde(f), scope)
		if sameFile(f, file) && slices.Equal(op, objPath) {
			places[0].label, places[0].scope = label, scope
			continue
		}
		places = append(places, clientPlace{file: f, objPath: op, label: label, scope: scope})
	}
	for i := range places {
		places[i].source = readsServers(cfg, places[i].file)
	}
	return places
}

// twice is a server a client would list twice, or a second gateway.
type twice struct {
	place *clientPlace
	name  string
	why   string
	// kept says why --move leaves it, "" when it may move: the client
	// uses it in every workspace, and the gateway does not serve it in
	// every one.
	kept string
}

// reportTwice names the client's own servers, in every scope it has and
// Switchboard's shared .mcp.json, that the gateway serves too, and the
// client's other entries that run a Switchboard gateway (two gateways
// list every tool twice). With --move it takes the servers out of the
// files Switchboard does not read, after a backup of each.
//
// An entry of the client's user scope, which it uses in every workspace,
// moves only when the gateway serves it in every workspace too: the
// gateway's entry is in the client's user scope and Switchboard's server
// in user (or managed) scope. One that only this workspace's Switchboard
// servers (local, project) or gateway entry cover is named and left.
func reportTwice(opts *InstallGatewayOptions, c gatewayClient, cfg *config.Resolved, root, file string, objPath []string, installed string, tilde func(string) string) error {
	places := clientPlaces(opts, c, cfg, root, file, objPath, tilde)
	var dups, gateways []twice
	for i := range places {
		p := &places[i]
		entries, err := readEntries(p.file, p.objPath)
		if err != nil {
			if i == 0 {
				return ConfigErr(err, "fix the file")
			}
			fmt.Fprintf(opts.IO.ErrOut, "warning: could not look for servers seen twice in %s: %v\n", p.label, err)
			continue
		}
		for _, name := range slices.Sorted(maps.Keys(entries)) {
			e := entries[name]
			if host.IsGatewayCommand(e.Command, e.Args) {
				// An entry of the same name in another scope is the same
				// entry to the client, which uses one of them.
				// Entries of profiles serve parts: several are meant.
				if !opts.wrote(name) && !opts.wrote("") && !slices.Contains(e.Args, "--profile") {
					gateways = append(gateways, twice{place: p, name: name})
				}
				continue
			}
			if i == 0 && opts.wrote(name) {
				continue
			}
			if why, rs := seenTwice(cfg, name, e); why != "" {
				d := twice{place: p, name: name, why: why}
				if p.scope == "user" {
					switch {
					case installed != "user" || opts.File != "":
						d.kept = fmt.Sprintf("the gateway's entry is in %s's %s config, not in every workspace", c.name, installed)
					case rs.Scope != config.ScopeUser && rs.Scope != config.ScopeManaged:
						d.kept = fmt.Sprintf("Switchboard's %s is %s scope, this workspace only", rs.Name, rs.Scope)
					}
				}
				dups = append(dups, d)
			}
		}
	}
	if len(gateways) > 0 {
		var list []string
		for _, g := range gateways {
			list = append(list, fmt.Sprintf("%s in %s", g.name, g.place.label))
		}
		fmt.Fprintf(opts.IO.ErrOut, "%s has another entry that runs a Switchboard gateway: %s. With two it starts two gateways and lists every tool twice: remove one of them.\n",
			c.name, strings.Join(list, ", "))
	}
	if len(dups) == 0 {
		return nil
	}
	fmt.Fprintf(opts.IO.ErrOut, "%s will list these servers' tools twice, from its own entries and through the gateway:\n", c.name)
	var movable, shared []*clientPlace
	byPlace := map[*clientPlace][]twice{}
	for _, d := range dups {
		if byPlace[d.place] == nil {
			if d.place.source {
				shared = append(shared, d.place)
			} else {
				movable = append(movable, d.place)
			}
		}
		byPlace[d.place] = append(byPlace[d.place], d)
	}
	for _, p := range append(append([]*clientPlace{}, movable...), shared...) {
		var list []string
		for _, d := range byPlace[p] {
			list = append(list, fmt.Sprintf("%s (%s)", d.name, d.why))
		}
		fmt.Fprintf(opts.IO.ErrOut, "  %s: %s\n", p.label, strings.Join(list, ", "))
	}
	for _, p := range shared {
		fmt.Fprintf(opts.IO.ErrOut, "Those in %s are defined in a file Switchboard reads as well, so --move would take them from the gateway too: "+
			"turn them off in %s instead (Claude Code: /mcp, or \"disabledMcpjsonServers\" in its settings).\n", p.label, c.name)
	}
	// Those the client uses in every workspace and the gateway serves
	// only here stay where they are.
	var moving []*clientPlace
	for _, p := range movable {
		var kept, reasons []string
		byReason := map[string][]string{}
		for _, d := range byPlace[p] {
			if d.kept != "" {
				kept = append(kept, d.name)
				if byReason[d.kept] == nil {
					reasons = append(reasons, d.kept)
				}
				byReason[d.kept] = append(byReason[d.kept], d.name)
			}
		}
		whys := make([]string, len(reasons))
		for i, r := range reasons {
			whys[i] = strings.Join(byReason[r], ", ") + ": " + r
		}
		if len(kept) > 0 {
			fmt.Fprintf(opts.IO.ErrOut, "--move leaves %s in %s: %s uses them in every workspace, and the gateway serves them only in this one (%s); turn them off for this workspace in %s instead.\n",
				strings.Join(kept, ", "), p.label, c.name, strings.Join(whys, "; "), c.name)
		}
		if len(kept) < len(byPlace[p]) {
			moving = append(moving, p)
		}
	}
	movable = moving
	if len(movable) == 0 {
		return nil
	}
	if !opts.Move {
		var files []string
		for _, p := range movable {
			if !slices.Contains(files, tilde(p.file)) {
				files = append(files, tilde(p.file))
			}
		}
		fmt.Fprintf(opts.IO.ErrOut, "Run it again with --move to take them out of %s (a backup is kept beside it).\n", strings.Join(files, " and "))
		return nil
	}
	backedUp := map[string]string{}
	for _, p := range movable {
		backup, ok := backedUp[p.file]
		if !ok {
			var err error
			if backup, err = freeBackupName(p.file); err == nil {
				err = copyFile(p.file, backup)
			}
			if err != nil {
				return FailureErr(fmt.Errorf("backing up %s: %w", p.file, err), "nothing more was moved")
			}
			backedUp[p.file] = backup
		}
		var names []string
		for _, d := range byPlace[p] {
			if d.kept != "" {
				continue
			}
			if _, err := config.RemoveServer(p.file, p.objPath, d.name); err != nil {
				return ConfigErr(err, "the backup is "+tilde(backup))
			}
			names = append(names, d.name)
		}
		fmt.Fprintf(opts.IO.Out, "Moved %s out of %s; the gateway serves them (backup: %s).\n", strings.Join(names, ", "), p.label, tilde(backup))
	}
	return nil
}

// freeBackupName is where --move keeps the backup of file: beside it,
// <file>.switchboard-backup, or .switchboard-backup.2, .3… when that is
// taken. An earlier move's backup is never replaced: it may be the only
// copy of the file as it was before Switchboard changed it.
func freeBackupName(file string) (string, error) {
	name := file + ".switchboard-backup"
	for n := 2; n <= 1000; n++ {
		_, err := os.Lstat(name)
		if errors.Is(err, fs.ErrNotExist) {
			return name, nil
		}
		if err != nil {
			return "", err
		}
		name = fmt.Sprintf("%s.switchboard-backup.%d", file, n)
	}
	return "", fmt.Errorf("%s.switchboard-backup and 999 more backups are there already", file)
}

// seenTwice says why the client's entry e, named name, is one of the
// gateway's servers too ("" if it is not), and which: one of user or
// managed scope, served in every workspace, when there is one.
func seenTwice(cfg *config.Resolved, name string, e clientEntry) (why string, which *config.ResolvedServer) {
	for i := range cfg.Servers {
		rs := &cfg.Servers[i]
		s := rs.Written
		if rs.Availability != config.Available || host.IsGatewayServer(rs) {
			continue
		}
		var w string
		switch {
		case rs.Name == name:
			w = "same name"
		case e.Command != "" && e.Command == s.Command && slices.Equal(e.Args, s.Args):
			w = "same command as " + rs.Name
		case e.URL != "" && e.URL == s.URL:
			w = "same URL as " + rs.Name
		default:
			continue
		}
		if rs.Scope == config.ScopeUser || rs.Scope == config.ScopeManaged {
			return w, rs
		}
		if which == nil {
			why, which = w, rs
		}
	}
	return why, which
}

// readEntries reads the server entries of the object at objPath of a JSONC
// file; a missing file or object holds none.
func readEntries(file string, objPath []string) (map[string]clientEntry, error) {
	b, err := safefile.ReadFile(file)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	b, _ = config.StripBOM(b) // as editFile reads it: Windows editors write one
	if err := config.CheckNesting(file, b); err != nil {
		return nil, err
	}
	std, err := hujson.Standardize(b)
	if err != nil {
		return nil, config.ParseDiagnostic(file, err)
	}
	var v any
	if err := json.Unmarshal(std, &v); err != nil {
		return nil, fmt.Errorf("%s: %w", file, err)
	}
	for _, k := range objPath {
		m, _ := v.(map[string]any)
		v = m[k]
	}
	m, _ := v.(map[string]any)
	out := make(map[string]clientEntry, len(m))
	for name, raw := range m {
		b, _ := json.Marshal(raw)
		var e clientEntry
		_ = json.Unmarshal(b, &e) // an entry of another shape compares as empty
		out[name] = e
	}
	return out, nil
}

// copyFile copies src to dst with src's mode (a client's file may hold
// tokens).
func copyFile(src, dst string) error {
	b, err := safefile.ReadFile(src)
	if err != nil {
		return err
	}
	fi, err := os.Stat(src)
	if err != nil {
		return err
	}
	// A new file in dst's place, with src's mode: an older backup's mode
	// (0644) would show a 0600 file's literal tokens, and a link there
	// would have its target written.
	return atomicfile.WriteFile(dst, b, fi.Mode().Perm())
}

// gatewayTarget is the client's config file and the path of the object
// holding its servers.
func gatewayTarget(opts *InstallGatewayOptions, client, scope, root string) (string, []string, error) {
	c := gatewayClients[client]
	switch client {
	case "claude-code":
		file := opts.ClaudeConfig
		if file == "" {
			file = filepath.Join(opts.HomeDir, ".claude.json")
		}
		switch scope {
		case "user":
			return file, []string{"mcpServers"}, nil
		case "local":
			return file, config.LocalObjPath(localKeys(file, root)[0]), nil
		}
		return filepath.Join(root, ".mcp.json"), []string{"mcpServers"}, nil
	case "codex":
		if scope == "user" {
			file := opts.CodexConfig
			if file == "" {
				file = filepath.Join(opts.HomeDir, ".codex", "config.toml")
			}
			return file, []string{c.entryKey}, nil
		}
		return filepath.Join(root, ".codex", "config.toml"), []string{c.entryKey}, nil
	case "cursor":
		if scope == "user" {
			return filepath.Join(opts.HomeDir, ".cursor", "mcp.json"), []string{c.entryKey}, nil
		}
		return filepath.Join(root, ".cursor", "mcp.json"), []string{c.entryKey}, nil
	case "vscode":
		if scope == "user" {
			if opts.ConfigDir == "" {
				return "", nil, Usagef("pass --file <VS Code user folder>/mcp.json", "cannot find the user config folder")
			}
			return vscodeUserConfig(opts.ConfigDir), []string{c.entryKey}, nil
		}
		return filepath.Join(root, ".vscode", "mcp.json"), []string{c.entryKey}, nil
	}
	return "", nil, fmt.Errorf("unknown client %q", client)
}

func contains(list []string, s string) bool {
	for _, x := range list {
		if x == s {
			return true
		}
	}
	return false
}

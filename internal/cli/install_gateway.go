package cli

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"strings"

	"github.com/spf13/cobra"

	"github.com/switchboard-mcp/switchboard/config"
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
	// (default: this executable, absolute).
	Command string
	// Root is the workspace root (for project and local scopes); ok is
	// false when there is none.
	Root func() (string, bool)
	// HomeDir is ~; ConfigDir the OS user config folder (VS Code's user
	// folder lives there).
	HomeDir, ConfigDir string
	Tilde              func(string) string
}

// gatewayClient describes where one MCP client keeps its servers.
type gatewayClient struct {
	name         string // as people know it
	defaultScope string
	scopes       []string
	// entryKey is the object holding servers: mcpServers, or servers (VS Code).
	entryKey string
}

var gatewayClients = map[string]gatewayClient{
	"claude-code": {name: "Claude Code", defaultScope: "user", scopes: []string{"user", "project", "local"}, entryKey: "mcpServers"},
	"cursor":      {name: "Cursor", defaultScope: "user", scopes: []string{"user", "project"}, entryKey: "mcpServers"},
	"vscode":      {name: "VS Code", defaultScope: "project", scopes: []string{"user", "project"}, entryKey: "servers"},
}

// NewInstallGatewayCmd returns `switchboard mcp install-gateway`.
func NewInstallGatewayCmd(f *Factory, runF func(context.Context, *InstallGatewayOptions) error) *cobra.Command {
	opts := &InstallGatewayOptions{}
	cmd := &cobra.Command{
		Use:   "install-gateway --client claude-code|cursor|vscode",
		Short: "Add the Switchboard gateway to an MCP client's configuration",
		Long: `Write one server entry that runs 'switchboard serve --stdio' into an MCP client's
configuration, so that the client reaches every Switchboard server — with launch
trust, permission rules, circuit breaking and output caps — through it.

Files written (comments and every other entry are kept):
  claude-code  user: ~/.claude.json "mcpServers"   project: .mcp.json
               local: ~/.claude.json "projects"[<workspace>]."mcpServers"
  cursor       user: ~/.cursor/mcp.json             project: .cursor/mcp.json
  vscode       user: <VS Code user folder>/mcp.json project: .vscode/mcp.json ("servers")

A user-scope entry follows the project the client runs in; a local-scope entry
names the workspace. Restart the client (or reload its MCP servers) afterwards.
You may want to remove the servers the gateway now serves from the client's own
configuration, so their tools are not listed twice.`,
		Example: `  switchboard mcp install-gateway --client claude-code
  switchboard mcp install-gateway --client vscode --scope project
  switchboard mcp install-gateway --client cursor --name sb`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			opts.IO = f.IO
			opts.HomeDir = f.HomeDir
			opts.Root = f.WorkspaceRoot
			opts.Tilde = f.tilde
			if opts.File != "" {
				opts.File = f.abs(opts.File)
			}
			if d, err := os.UserConfigDir(); err == nil {
				opts.ConfigDir = d
			}
			if v, ok := f.Getenv("XDG_CONFIG_HOME"); ok && v != "" && runtime.GOOS == "linux" {
				opts.ConfigDir = v
			}
			if runF != nil {
				return runF(cmd.Context(), opts)
			}
			return installGatewayRun(opts)
		},
	}
	fl := cmd.Flags()
	fl.StringVar(&opts.Client, "client", "", "the MCP client: claude-code, cursor or vscode")
	fl.StringVarP(&opts.Scope, "scope", "s", "", "user, project or local (claude-code only); default user (vscode: project)")
	fl.StringVar(&opts.Name, "name", "switchboard", "the entry's `NAME` in the client's config")
	fl.StringVar(&opts.File, "file", "", "write to `FILE` instead of the client's own config file")
	fl.StringVar(&opts.Command, "command", "", "the switchboard executable to run (default: this one)")
	return cmd
}

func installGatewayRun(opts *InstallGatewayOptions) error {
	c, ok := gatewayClients[opts.Client]
	if !ok {
		return Usagef("pass --client claude-code, --client cursor or --client vscode", "unknown or missing --client %q", opts.Client)
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
	command := opts.Command
	if command == "" {
		exe, err := os.Executable()
		if err != nil {
			return FailureErr(fmt.Errorf("finding this executable: %w", err), "pass --command /path/to/switchboard")
		}
		command = exe
	}
	if abs, err := filepath.Abs(command); err == nil {
		command = abs
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

	args := []string{"serve", "--stdio"}
	switch {
	case scope == "local":
		args = append(args, "--workspace", root)
	case scope == "project" && opts.Client == "vscode":
		// VS Code expands it; other clients start servers in the project.
		args = append(args, "--workspace", "${workspaceFolder}")
	}
	entry := map[string]any{"type": "stdio", "command": command, "args": args}
	def, err := json.Marshal(entry)
	if err != nil {
		return err
	}
	existed, err := config.HasServer(file, objPath, opts.Name)
	if err != nil {
		return ConfigErr(err, "fix the file, or pass --file to write elsewhere")
	}
	if err := config.SetServer(file, objPath, opts.Name, def); err != nil {
		return ConfigErr(err, "fix the file, or pass --file to write elsewhere")
	}
	verb := "Added"
	if existed {
		verb = "Updated"
	}
	tilde := opts.Tilde
	if tilde == nil {
		tilde = func(s string) string { return s }
	}
	fmt.Fprintf(opts.IO.Out, "%s the Switchboard gateway as %q to %s's %s config in %s\n", verb, opts.Name, c.name, scope, tilde(file))
	fmt.Fprintf(opts.IO.ErrOut, "Restart %s (or reload its MCP servers) to use it.\n", c.name)
	return nil
}

// gatewayTarget is the client's config file and the path of the object
// holding its servers.
func gatewayTarget(opts *InstallGatewayOptions, client, scope, root string) (string, []string, error) {
	c := gatewayClients[client]
	switch client {
	case "claude-code":
		switch scope {
		case "user":
			return filepath.Join(opts.HomeDir, ".claude.json"), []string{"mcpServers"}, nil
		case "local":
			file := filepath.Join(opts.HomeDir, ".claude.json")
			return file, config.LocalObjPath(localKeys(file, root)[0]), nil
		}
		return filepath.Join(root, ".mcp.json"), []string{"mcpServers"}, nil
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
			return filepath.Join(opts.ConfigDir, "Code", "User", "mcp.json"), []string{c.entryKey}, nil
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

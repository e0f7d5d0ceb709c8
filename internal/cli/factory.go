package cli

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/switchboard-mcp/switchboard"

	"github.com/switchboard-mcp/switchboard/config"
	"github.com/switchboard-mcp/switchboard/internal/secretstore"
)

// Factory is what every command needs from the outside world. Commands
// take it (or the fields they need, copied into their Options) instead of
// reaching for os.* themselves, so that tests can run them against a temp
// home, fixed environment and buffers.
type Factory struct {
	IO *IOStreams
	// Getenv looks a variable up, like os.LookupEnv (which System uses).
	Getenv func(string) (string, bool)
	// HomeDir is the user's home directory (~).
	HomeDir string
	// Cwd is the directory the command was run from.
	Cwd string
	// Now is the clock.
	Now func() time.Time
	// Global holds the persistent flags, filled in when the root command
	// parses them.
	Global *GlobalOptions

	settings config.Settings    // --settings, parsed once (see Settings)
	secrets  *secretstore.Store // the user's secret store, opened once (see secretStore)
}

// GlobalOptions are the flags every command accepts.
type GlobalOptions struct {
	Workspace       string        // --workspace DIR: the project root
	Settings        string        // --settings JSON|FILE
	MCPConfigs      []string      // --mcp-config FILE|JSON, repeatable
	StrictMCPConfig bool          // --strict-mcp-config
	JSON            bool          // --json: stable JSON on stdout
	Tools           string        // --tools MODIFIERS (deferred loading)
	Wait            time.Duration // --wait: how long one-shot commands wait for servers
	LogLevel        string        // --log-level debug|info|warn|error
	Profile         string        // --profile NAME: the settings' profile this run shows
}

// DefaultWait is the --wait default: how long one-shot commands wait for
// servers still connecting.
const DefaultWait = 5 * time.Second

// NewFactory returns the Factory of the running process.
func NewFactory() *Factory {
	home, _ := os.UserHomeDir()
	cwd, _ := os.Getwd()
	return &Factory{
		IO:      System(),
		Getenv:  os.LookupEnv,
		HomeDir: home,
		Cwd:     cwd,
		Now:     time.Now,
		Global:  &GlobalOptions{Wait: DefaultWait, LogLevel: "warn"},
	}
}

// LoadOptions turns the global flags into [config.LoadOptions].
func (f *Factory) LoadOptions() *config.LoadOptions {
	g := f.global()
	return &config.LoadOptions{
		Home:            f.Home(),
		HomeDir:         f.HomeDir,
		Workspace:       f.abs(g.Workspace),
		Cwd:             f.Cwd,
		MCPConfigs:      g.MCPConfigs,
		StrictMCPConfig: g.StrictMCPConfig,
		LookupEnv:       f.Getenv,
	}
}

// LoadConfig reads and resolves the configuration for this run. Problems in
// the files come back in Resolved.Diagnostics, not as an error: a command
// shows the valid servers and then the diagnostics (see reportDiagnostics).
// An error means nothing could be resolved at all; it is a config error
// (exit code 2).
func (f *Factory) LoadConfig() (*config.Resolved, error) {
	return f.loadConfig(f.LoadOptions())
}

// loadConfig is LoadConfig with the options given.
func (f *Factory) loadConfig(lo *config.LoadOptions) (*config.Resolved, error) {
	r, err := config.Load(lo)
	if err != nil {
		return nil, ConfigErr(err, "set HOME (or SWITCHBOARD_HOME) and run from an existing directory")
	}
	return r, nil
}

// Settings returns the parsed --settings value (nil when not given). The
// root command parses it before any command runs, so a bad value is a
// usage error (exit 2) whatever the command.
func (f *Factory) Settings() (config.Settings, error) {
	g := f.global()
	if g.Settings == "" || f.settings != nil {
		return f.settings, nil
	}
	arg := g.Settings
	inline := strings.HasPrefix(strings.TrimSpace(arg), "{")
	if !inline {
		arg = f.abs(arg) // against the command's directory, as every path flag
	}
	s, err := config.LoadSettings(arg)
	if err != nil {
		// The message already names the input and the fix.
		return nil, ConfigErr(err, "")
	}
	if !inline {
		if err := f.notFromTheRepository(arg, s); err != nil {
			return nil, err
		}
	}
	f.settings = s
	return s, nil
}

// notFromTheRepository refuses a --settings file inside the repository
// that grants anything (switchboard.CheckSettingsFile: pre-approval never
// comes from a file a repository can commit, whoever names it). Such a
// file may only tighten: deny and ask rules, disabledMcpjsonServers. The
// repository is the workspace root and, above it, the enclosing git
// checkout (a monorepo's package is a workspace of its own).
func (f *Factory) notFromTheRepository(file string, s config.Settings) error {
	root, ok := f.WorkspaceRoot()
	if !ok {
		return nil
	}
	var re *switchboard.RepoSettingsError
	if err := switchboard.CheckSettingsFile(file, s, root, f.HomeDir); errors.As(err, &re) {
		return ConfigErr(fmt.Errorf("--settings %s: the file is inside the repository %s, so it may only tighten (permissions.deny, permissions.ask, disabledMcpjsonServers), not set %s: a repository must not approve its own servers",
			re.File, re.Repo, strings.Join(re.Keys, ", ")),
			"pass those keys inline (--settings '{\"enabledMcpjsonServers\": [\"name\"]}') or from a file outside the repository")
	}
	return nil
}

// Home is the Switchboard directory: $SWITCHBOARD_HOME, else ~/.switchboard.
func (f *Factory) Home() string {
	return config.DefaultHome(f.Getenv, f.HomeDir)
}

// WorkspaceRoot is the project root: --workspace, else the nearest ancestor
// of Cwd holding .mcp.json, .switchboard/ or .git. ok is false when there
// is none. It is the root config.Load uses (asked of Load itself, so that
// what the mcp commands write under "projects" is what Load reads back).
func (f *Factory) WorkspaceRoot() (root string, ok bool) {
	if w := f.global().Workspace; w != "" {
		return filepath.Clean(f.abs(w)), true
	}
	opts := f.LoadOptions()
	opts.StrictMCPConfig, opts.MCPConfigs = true, nil // only the root is wanted: read as little as possible
	if r, err := config.Load(opts); err == nil && r.Workspace != "" {
		return r.Workspace, true
	}
	return "", false
}

func (f *Factory) global() *GlobalOptions {
	if f.Global == nil {
		f.Global = &GlobalOptions{Wait: DefaultWait, LogLevel: "warn"}
	}
	return f.Global
}

// abs makes a path from the command line absolute against Cwd.
func (f *Factory) abs(p string) string {
	if p == "" || filepath.IsAbs(p) {
		return p
	}
	if strings.HasPrefix(p, "~"+string(filepath.Separator)) || p == "~" {
		return filepath.Join(f.HomeDir, p[1:])
	}
	return filepath.Join(f.Cwd, p)
}

// validate checks the global flags that can be checked without
// reading anything.
func (g *GlobalOptions) validate() error {
	switch strings.ToLower(g.LogLevel) {
	case "debug", "info", "warn", "error":
	default:
		return Usagef("use one of debug, info, warn, error", "invalid --log-level %q", g.LogLevel)
	}
	if g.Wait < 0 {
		return Usagef("use a duration such as 5s or 500ms", "invalid --wait %s: must not be negative", g.Wait)
	}
	return nil
}

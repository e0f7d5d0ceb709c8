package config

// LoadOptions says where to look for configuration. A nil *LoadOptions or
// zero fields take the documented defaults.
type LoadOptions struct {
	// Home is the Switchboard directory. If empty, $SWITCHBOARD_HOME is used,
	// else ~/.switchboard (HomeDir joined with ".switchboard").
	Home string
	// HomeDir is the user's home directory, used for the default Home and the
	// legacy ~/.switchboard.json. If empty, os.UserHomeDir is used.
	HomeDir string
	// Workspace is the --workspace flag. If empty, the project root is the
	// nearest ancestor of Cwd holding .mcp.json, .switchboard/ or .git.
	Workspace string
	// Cwd is where root discovery starts. If empty, os.Getwd is used.
	Cwd string
	// ManagedDir holds managed-mcp.json. If empty,
	// $SWITCHBOARD_MANAGED_DIR is used, else /etc/switchboard.
	ManagedDir string
	// MCPConfigs are --mcp-config values: each a file path or inline JSON.
	MCPConfigs []string
	// StrictMCPConfig uses only MCPConfigs (and managed servers/policy).
	StrictMCPConfig bool
	// Session holds servers an embedder hands in directly: they skip
	// the files and are user-trusted.
	Session map[string]Server
	// LookupEnv reads the environment for ${VAR} expansion and the
	// SWITCHBOARD_* overrides. If nil, os.LookupEnv is used.
	LookupEnv func(key string) (string, bool)
	// LastGood, if set, keeps the last good contents of a file that is
	// now broken in effect (see [LastGood]). If nil, a broken file defines
	// nothing.
	LastGood *LastGood
}

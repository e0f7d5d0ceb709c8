package cli

import (
	"os"
	"sort"

	"github.com/switchboard-mcp/switchboard/config"
	"github.com/switchboard-mcp/switchboard/policy"
)

// allowPrivateNetworkKey is the setting that lets project-scope remote
// servers reach loopback, private and reserved addresses (SPEC §8).
const allowPrivateNetworkKey = "allowPrivateNetworkForProjectServers"

// allowPrivateNetwork reports whether the user allowed project-scope
// servers to reach private addresses: "allowPrivateNetworkForProjectServers":
// true in managed settings, --settings, the user settings or their local
// ("projects") entry for workspace. Never from project settings: a
// repository must not open the user's network to its own servers. A file
// that cannot be read or parsed allows nothing (policy's loader reports it).
func (f *Factory) allowPrivateNetwork(workspace string) bool {
	managed := f.managedDir()
	var docs []config.Settings
	docs = append(docs, readSettingsFile(policy.ManagedSettingsPath(managed)))
	if s, err := f.Settings(); err == nil {
		docs = append(docs, s)
	}
	user := readSettingsFile(policy.UserSettingsPath(f.Home()))
	docs = append(docs, user)
	if projects, ok := user["projects"].(map[string]any); ok && workspace != "" {
		// Every entry for this directory, however spelled (a symlink, a
		// trailing slash), as config.Load reads the local servers.
		for _, k := range projectKeys(projects, workspace) {
			if m, ok := projects[k].(map[string]any); ok {
				docs = append(docs, config.Settings(m))
			}
		}
	}
	for _, s := range docs {
		if b, _ := s[allowPrivateNetworkKey].(bool); b {
			return true
		}
	}
	return false
}

// projectKeys returns the keys of a settings file's "projects" object
// that belong to workspace, best first (config.MatchProjectKeys; a map
// keeps no file order, so ties go by name).
func projectKeys(projects map[string]any, workspace string) []string {
	keys := make([]string, 0, len(projects))
	for k := range projects {
		keys = append(keys, k)
	}
	sort.Sort(sort.Reverse(sort.StringSlice(keys))) // MatchProjectKeys puts the later first
	return config.MatchProjectKeys(keys, workspace)
}

// managedDir is the directory of the managed settings:
// $SWITCHBOARD_MANAGED_DIR, else config.DefaultManagedDir.
func (f *Factory) managedDir() string {
	if d, ok := f.Getenv("SWITCHBOARD_MANAGED_DIR"); ok && d != "" {
		return d
	}
	return config.DefaultManagedDir
}

// readSettingsFile reads a settings file, nil when it is missing or bad.
func readSettingsFile(path string) config.Settings {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil
	}
	s, err := config.ParseSettings(path, data)
	if err != nil {
		return nil
	}
	return s
}

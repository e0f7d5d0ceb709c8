package switchboard

import (
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"github.com/switchboard-mcp/switchboard/config"
	"github.com/switchboard-mcp/switchboard/internal/samepath"
)

// ReadSettings reads every settings layer of a run: managed settings,
// the run's own settings (opts.Settings, as --settings), the user file's
// local entry for the workspace, the user settings and the project
// settings, each labelled with where it came from. It is the one place
// settings files are found and read: the policy, launch trust, network
// and sandbox defaults of a [Switchboard] all come from its result.
//
// Home, ManagedDir and the environment are resolved as [Open] resolves
// them. A file that cannot be used is a layer with Err, never an error:
// each reader fails closed its own way.
func ReadSettings(opts Options) *config.SettingsStack {
	o := opts.withDefaults()
	return config.ReadSettings(o.settingsPlaces(o.Workspace, o.ManagedDir))
}

// settingsPlaces says where the settings of workspace are.
func (o *Options) settingsPlaces(workspace, managedDir string) config.SettingsPlaces {
	return config.SettingsPlaces{
		Home:       o.Home,
		Workspace:  workspace,
		ManagedDir: managedDir,
		Flag:       o.Settings,
		FlagFile:   o.SettingsFile,
	}
}

// RepoSettingsError is the refusal of a settings file inside the
// repository that sets more than it may: a repository's file may only
// tighten (deny and ask rules, disabledMcpjsonServers), since whoever
// names it, what it grants would let the repository's own servers start
// or act unasked.
type RepoSettingsError struct {
	File string
	// Repo is the repository the file is in: the workspace root or, above
	// it, the enclosing git checkout.
	Repo string
	// Keys are what the file sets beyond tightening.
	Keys []string
}

func (e *RepoSettingsError) Error() string {
	return fmt.Sprintf("settings file %s is inside the repository %s, so it may only tighten (permissions.deny, permissions.ask, disabledMcpjsonServers), not set %s: a repository must not approve its own servers",
		e.File, e.Repo, strings.Join(e.Keys, ", "))
}

// CheckSettingsFile applies the tighten-only rule to a settings file the
// person named for a run (--settings FILE, or Options.SettingsFile): if
// file is inside the repository of workspace (the workspace root or the
// git checkout above it, up to but not including homeDir) and s sets
// anything beyond deny and ask rules and disabledMcpjsonServers, it
// returns a *RepoSettingsError. Inline settings are the person's own and
// need no check.
func CheckSettingsFile(file string, s config.Settings, workspace, homeDir string) error {
	keys := GrantingKeys(s)
	if len(keys) == 0 || workspace == "" || file == "" {
		return nil
	}
	repo := workspace
	if top := gitTop(workspace, homeDir); top != "" {
		repo = top
	}
	if !samepath.FileWithin(file, repo) {
		return nil
	}
	return &RepoSettingsError{File: file, Repo: repo, Keys: keys}
}

// GrantingKeys names, sorted, what a settings document sets beyond
// tightening: everything but "$schema", disabledMcpjsonServers and the
// deny and ask lists of "permissions" (an empty allow list grants nothing).
func GrantingKeys(s config.Settings) []string {
	var keys []string
	for k, v := range s {
		switch k {
		case "$schema", "disabledMcpjsonServers":
		case "permissions":
			p, _ := v.(map[string]any)
			for pk, pv := range p {
				if l, _ := pv.([]any); pk == "allow" && len(l) == 0 || pk == "ask" || pk == "deny" {
					continue
				}
				keys = append(keys, "permissions."+pk)
			}
		default:
			keys = append(keys, k)
		}
	}
	slices.Sort(keys)
	return keys
}

// gitTop returns the outermost directory at or above dir holding .git:
// the checkout the user cloned, around a submodule or a nested clone (whose
// .git may be a file) as well. It stops below home unless dir is home (a
// home directory kept in git would otherwise make every file under it part
// of the repository); "" if none.
func gitTop(dir, home string) string {
	top := ""
	for d := dir; ; d = filepath.Dir(d) {
		if d == home && d != dir {
			return top
		}
		if _, err := os.Lstat(filepath.Join(d, ".git")); err == nil {
			top = d
		}
		if filepath.Dir(d) == d {
			return top
		}
	}
}

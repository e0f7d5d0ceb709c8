package cli

import (
	"fmt"
	"path/filepath"
	"slices"
	"strings"

	"github.com/spf13/cobra"

	"github.com/switchboard-mcp/switchboard"
	"github.com/switchboard-mcp/switchboard/config"
	"github.com/switchboard-mcp/switchboard/internal/termsafe"
)

// switchboardOptions are the front door's options of this run's global
// flags: the Switchboard directory, the managed folder, --settings.
func (f *Factory) switchboardOptions() switchboard.Options {
	o := switchboard.Options{
		Home:       f.Home(),
		HomeDir:    f.HomeDir,
		ManagedDir: f.managedDir(),
		LookupEnv:  f.Getenv,
		Now:        f.Now,
		Profile:    f.global().Profile,
	}
	if s, err := f.Settings(); err == nil && s != nil {
		o.Settings = s
		if arg := f.global().Settings; !strings.HasPrefix(strings.TrimSpace(arg), "{") {
			o.SettingsFile = f.abs(arg)
		}
	}
	return o
}

// settingsStack reads every settings layer of a run on cfg (nil: no
// workspace) through the front door's one reader: what the permission
// rules, launch trust, network and sandbox defaults of the run come from.
func (f *Factory) settingsStack(cfg *config.Resolved) (*config.SettingsStack, error) {
	if _, err := f.Settings(); err != nil {
		return nil, err
	}
	o := f.switchboardOptions()
	if cfg != nil {
		o.Workspace = cfg.Workspace
		if cfg.Files.Managed != "" {
			o.ManagedDir = filepath.Dir(cfg.Files.Managed)
		}
	}
	return switchboard.ReadSettings(o), nil
}

// allowPrivateNetwork reports whether the user allowed project-scope
// servers to reach private addresses: "allowPrivateNetworkForProjectServers":
// true in managed settings, --settings, the user settings or their local
// ("projects") entry for workspace. Never from project settings: a
// repository must not open the user's network to its own servers. A file
// that cannot be read or parsed allows nothing (policy's loader reports it).
func (f *Factory) allowPrivateNetwork(workspace string) bool {
	st, err := f.settingsStack(&config.Resolved{Workspace: workspace})
	return err == nil && st.AllowPrivateNetwork()
}

// managedDir is the directory of the managed settings:
// $SWITCHBOARD_MANAGED_DIR, else config.DefaultManagedDir.
func (f *Factory) managedDir() string {
	if d, ok := f.Getenv("SWITCHBOARD_MANAGED_DIR"); ok && d != "" {
		return d
	}
	return config.DefaultManagedDir
}

// checkProfile refuses, before the command does anything, a --profile
// that names no usable profile, listing the ones there are.
func (f *Factory) checkProfile() error {
	name := f.global().Profile
	if name == "" {
		return nil
	}
	cfg, err := f.LoadConfig()
	if err != nil {
		cfg = nil // the command reports it; the user's profiles still count
	}
	st, err := f.settingsStack(cfg)
	if err != nil {
		return err
	}
	ps, diags := st.Profiles()
	if _, ok := ps[name]; ok {
		if cfg != nil {
			f.warnProfile(ps, diags, name, cfg)
		}
		return nil
	}
	e := &switchboard.UnknownProfileError{Name: name, Valid: ps.Names()}
	if d := config.DroppedProfile(name, diags); d != nil {
		e.Problem = d.Error()
	}
	hint := profileHint(e)
	if e.Problem == "" && cfg != nil {
		// Profiles written beside the servers are not read: say where
		// they are, the likelier reason than a name never written.
		for _, d := range cfg.Diagnostics {
			if d.Field == "profiles" && d.Severity == config.SeverityWarning {
				hint = fmt.Sprintf("the \"profiles\" at %s are not read: %s", d.Position, d.Fix)
				break
			}
		}
	}
	return UsageErr(e, hint)
}

// warnProfile warns, on stderr, of what in profile name (or a profile it
// extends) does nothing, which only doctor would say otherwise: a field
// it ignores (diags' warnings: "sandbox", "toolChanges", a misspelt
// "disabledTools"), a repository's definition of the same name, refused,
// and a server entry that names no configured server (a typo there
// leaves the server out of the run).
func (f *Factory) warnProfile(ps config.Profiles, diags []config.Diagnostic, name string, cfg *config.Resolved) {
	var servers []string
	for _, s := range cfg.Servers {
		servers = append(servers, s.Name)
	}
	chain := map[string]bool{}
	var walk func(n string)
	walk = func(n string) {
		if chain[n] {
			return
		}
		chain[n] = true
		for _, e := range ps[n].Extends {
			walk(e)
		}
	}
	walk(name)
	// diags of a profile in use are warnings (a field ignored) or a
	// repository's definition refused (the trusted one is used).
	for _, d := range append(slices.Clone(diags), ps.Check(servers)...) {
		p, _, _ := strings.Cut(strings.TrimPrefix(d.Field, "profiles."), ".")
		if strings.HasPrefix(d.Field, "profiles.") && chain[p] {
			fmt.Fprintf(f.IO.ErrOut, "warning: %s\n", termsafe.Line(d.Error()))
		}
	}
}

// profileCommands are the commands --profile changes, by path: those that
// start servers or show what a run sees (docs/configuration.md, Using a
// profile), and install-gateway, which writes a client entry for the
// profile. profileNeutral are those nobody would expect it to change.
// Every other command refuses it (refuseProfile), so that a new command
// is not silently one more that ignores it.
var (
	profileCommands = map[string]bool{
		"switchboard status": true, "switchboard doctor": true, "switchboard serve": true, "switchboard ui": true,
		"switchboard tools": true, "switchboard tools diff": true, "switchboard tools accept": true,
		"switchboard call": true, "switchboard prompts": true, "switchboard prompt": true,
		"switchboard resources": true, "switchboard read": true,
		"switchboard mcp list": true, "switchboard mcp get": true, "switchboard permissions list": true,
		"switchboard mcp install-gateway": true,
	}
	profileNeutral = map[string]bool{
		"switchboard version": true, "switchboard completion": true, "switchboard help": true,
		"switchboard mcp search": true,
	}
)

// refuseProfile refuses --profile on a command it would not change: one
// that edits what every profile shares (mcp add, enable, permissions
// allow…), a login (a server's tokens serve every profile), the demo (its
// own bundled server). A flag that did nothing would let the user think
// the edit was made to the profile alone.
func (f *Factory) refuseProfile(cmd *cobra.Command) error {
	name := f.global().Profile
	path := cmd.CommandPath()
	if name == "" || profileCommands[path] || profileNeutral[path] {
		return nil
	}
	why := "which changes the configuration every profile shares"
	switch path {
	case "switchboard mcp login", "switchboard mcp logout", "switchboard gateway login", "switchboard gateway logout":
		why = "which keeps a login that every profile uses"
	case "switchboard demo":
		why = "which runs its own bundled server, in no profile"
	}
	hint := "run it without --profile; profiles are defined under \"profiles\" in settings.json (docs/configuration.md, Profiles)"
	if cfg, err := f.LoadConfig(); err == nil {
		if st, err := f.settingsStack(cfg); err == nil {
			if ps, _ := st.Profiles(); ps != nil {
				if p, ok := ps[name]; ok {
					hint = fmt.Sprintf("run it without --profile; profile %q itself is edited where it is defined, at %s", name, f.tilde(p.Position.String()))
				}
			}
		}
	}
	return Usagef(hint, "--profile does not apply to `%s`, %s: a profile only chooses which servers and tools a run starts and shows", path, why)
}

// profileHint is the hint of a profile name that no usable profile has:
// fix the one the settings dropped, else pick one of those there are.
func profileHint(e *switchboard.UnknownProfileError) string {
	switch {
	case e.Problem != "":
		return "fix it in its settings file (docs/configuration.md, Profiles); `switchboard doctor` lists every such problem"
	case len(e.Valid) > 0:
		return "pass one of: " + strings.Join(e.Valid, ", ")
	}
	return "define it under \"profiles\" in settings.json (docs/configuration.md, Profiles); `switchboard doctor` reports one that cannot be used"
}

// profiles are the usable profiles of the run's settings (their problems
// are doctor's to report).
func (s *session) profiles() config.Profiles {
	ps, _ := s.sb.Settings().Profiles()
	return ps
}

// profilesShowing names the profiles that show server's tool ("" for the
// server itself: the profiles that include it), in order.
func profilesShowing(ps config.Profiles, server, tool string) []string {
	if server == "" {
		return nil // built in (tool_search): every profile's
	}
	var out []string
	for _, n := range ps.Names() {
		p := ps[n]
		if !p.IncludesServer(server) {
			continue
		}
		if hid, _ := p.Tools.Hidden(tool); tool != "" && hid {
			continue
		}
		out = append(out, n)
	}
	return out
}

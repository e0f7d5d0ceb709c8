package policy

import (
	"errors"
	"fmt"
	"os"

	"github.com/switchboard-mcp/switchboard/config"
)

// SettingsFile is the name of the user and project settings files.
const SettingsFile = config.SettingsFileName

// ManagedSettingsFile is the name of the managed settings file.
const ManagedSettingsFile = config.ManagedSettingsFileName

// UserSettingsPath returns the user settings file in the Switchboard
// directory home: <home>/settings.json. Local rules live in the same file.
func UserSettingsPath(home string) string { return config.UserSettingsPath(home) }

// ProjectSettingsPath returns the project settings file of a workspace
// root: <root>/.switchboard/settings.json.
func ProjectSettingsPath(root string) string { return config.ProjectSettingsPath(root) }

// ManagedSettingsPath returns the managed settings file in dir.
func ManagedSettingsPath(dir string) string { return config.ManagedSettingsPath(dir) }

// LoadOptions say where the settings are. A nil *LoadOptions reads the
// user's home and no workspace.
type LoadOptions struct {
	// Home is the Switchboard directory. If empty, $SWITCHBOARD_HOME, else
	// ~/.switchboard.
	Home string
	// Workspace is the absolute project root; "" means none (no project or
	// local rules).
	Workspace string
	// ManagedDir holds managed-settings.json. If empty,
	// $SWITCHBOARD_MANAGED_DIR, else /etc/switchboard.
	ManagedDir string
	// Flag is the parsed --settings value (nil when not given), and
	// FlagFile the file it came from ("" when inline).
	Flag     config.Settings
	FlagFile string
	// LookupEnv reads SWITCHBOARD_HOME and SWITCHBOARD_MANAGED_DIR. If nil,
	// os.LookupEnv.
	LookupEnv func(string) (string, bool)
}

// Load reads the rules of every scope: managed, --settings, local, user
// and project. It never fails: a file that does not exist holds no rules;
// one that cannot be read or parsed is a [Problem], and turns every allow
// rule off (its deny rules are unknown, so nothing is allowed without
// asking) until it is fixed. The managed file, the administrator's, fails
// closed: while it cannot be read every MCP call is denied, since the
// person asked could otherwise allow what it denies.
func Load(opts *LoadOptions) *Policy {
	var o LoadOptions
	if opts != nil {
		o = *opts
	}
	if o.LookupEnv == nil {
		o.LookupEnv = os.LookupEnv
	}
	if o.Home == "" {
		homeDir, _ := os.UserHomeDir()
		o.Home = config.DefaultHome(o.LookupEnv, homeDir)
	}
	if o.ManagedDir == "" {
		if d, ok := o.LookupEnv("SWITCHBOARD_MANAGED_DIR"); ok && d != "" {
			o.ManagedDir = d
		} else {
			o.ManagedDir = config.DefaultManagedDir
		}
	}
	return FromSettings(config.ReadSettings(config.SettingsPlaces{
		Home: o.Home, Workspace: o.Workspace, ManagedDir: o.ManagedDir,
		Flag: o.Flag, FlagFile: o.FlagFile,
	}))
}

// FromSettings compiles the rules of every layer of st (see [Load] for
// what a layer that cannot be used does).
func FromSettings(st *config.SettingsStack) *Policy {
	p := &Policy{}
	localFailed := false
	for _, l := range st.Layers {
		src := Source{Scope: scopeOf(l.Scope), File: l.File}
		if l.Err == nil {
			allow, ask, deny := l.Settings.Permissions()
			p.rules = append(p.rules, RulesFrom(src, allow, ask, deny)...)
			continue
		}
		if l.Scope == config.SettingsLocal {
			if localFailed {
				continue // one problem per file and scope
			}
			localFailed = true
		}
		// A diagnostic brings its own fix ("replace it with a regular
		// file"): said once, with what its file's failure means here.
		msg, fix := l.Err.Error(), "fix the file (JSON with // comments allowed)"
		var d config.Diagnostic
		if errors.As(l.Err, &d) && d.Fix != "" {
			d.Fix, fix = "", d.Fix
			msg = d.Error()
		}
		p.problems = append(p.problems, Problem{Source: src, Message: msg,
			Fix: fix + "; until then no allow rule applies and every call is asked for"})
		if p.allowOff == "" {
			p.allowOff = fmt.Sprintf("%s cannot be used (%v)", src, l.Err)
		}
		if l.Scope == config.SettingsManaged {
			// The administrator's deny rules are unknown, and the person an
			// ask would reach is not the one who may lift them: every MCP
			// call is denied until the file is fixed (fail closed).
			p.problems[len(p.problems)-1].Fix = "ask the administrator to fix the file (JSON with // comments allowed); until then every MCP call is denied"
			p.denyAll = fmt.Sprintf("%s cannot be used (%v)", src, l.Err)
		}
	}
	p.compile()
	return p
}

// scopeOf is the rule scope of a settings layer.
func scopeOf(s config.SettingsScope) Scope {
	switch s {
	case config.SettingsManaged:
		return ScopeManaged
	case config.SettingsFlag:
		return ScopeFlag
	case config.SettingsLocal:
		return ScopeLocal
	case config.SettingsUser:
		return ScopeUser
	}
	return ScopeProject
}

// ProfileRules are the permission rules of a profile (its "permissions"
// deny and ask lists, those of the profiles it extends included), from
// the settings file that defines it: added to the global rules with
// [Policy.With], they can only tighten them (a profile has no allow).
func ProfileRules(p config.Profile) []Rule {
	return RulesFrom(Source{Scope: scopeOf(p.Scope), File: p.Position.File, Profile: p.Name}, nil, p.Ask, p.Deny)
}

package policy

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"

	"github.com/switchboard-mcp/switchboard/config"
)

// SettingsFile is the name of the user and project settings files.
const SettingsFile = "settings.json"

// ManagedSettingsFile is the name of the managed settings file.
const ManagedSettingsFile = "managed-settings.json"

// UserSettingsPath returns the user settings file in the Switchboard
// directory home: <home>/settings.json. Local rules live in the same file.
func UserSettingsPath(home string) string { return filepath.Join(home, SettingsFile) }

// ProjectSettingsPath returns the project settings file of a workspace
// root: <root>/.switchboard/settings.json.
func ProjectSettingsPath(root string) string {
	return filepath.Join(root, ".switchboard", SettingsFile)
}

// ManagedSettingsPath returns the managed settings file in dir.
func ManagedSettingsPath(dir string) string { return filepath.Join(dir, ManagedSettingsFile) }

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
// asking) until it is fixed.
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
	p := &Policy{}
	add := func(src Source, s config.Settings) {
		allow, ask, deny := s.Permissions()
		p.rules = append(p.rules, RulesFrom(src, allow, ask, deny)...)
	}
	fail := func(src Source, err error) {
		p.problems = append(p.problems, Problem{Source: src, Message: err.Error(),
			Fix: "fix the file (JSON with // comments allowed); until then no allow rule applies and every call is asked for"})
		if p.allowOff == "" {
			p.allowOff = fmt.Sprintf("%s cannot be used (%v)", src, err)
		}
	}

	mf := ManagedSettingsPath(o.ManagedDir)
	if s, err := readSettings(mf); err != nil {
		fail(Source{Scope: ScopeManaged, File: mf}, err)
	} else if s != nil {
		add(Source{Scope: ScopeManaged, File: mf}, s)
	}
	if o.Flag != nil {
		add(Source{Scope: ScopeFlag, File: o.FlagFile}, o.Flag)
	}
	uf := UserSettingsPath(o.Home)
	if s, err := readSettings(uf); err != nil {
		fail(Source{Scope: ScopeUser, File: uf}, err)
	} else if s != nil {
		if o.Workspace != "" {
			local, err := localSettings(s, o.Workspace)
			if err != nil {
				fail(Source{Scope: ScopeLocal, File: uf}, err)
			} else if local != nil {
				add(Source{Scope: ScopeLocal, File: uf}, local)
			}
		}
		add(Source{Scope: ScopeUser, File: uf}, s)
	}
	// The project file is the user file when the workspace is the home
	// directory itself: read it once, as the user's.
	if pf := ProjectSettingsPath(o.Workspace); o.Workspace != "" && filepath.Clean(pf) != filepath.Clean(uf) {
		if s, err := readSettings(pf); err != nil {
			fail(Source{Scope: ScopeProject, File: pf}, err)
		} else if s != nil {
			add(Source{Scope: ScopeProject, File: pf}, s)
		}
	}
	p.compile()
	return p
}

// readSettings reads a settings file; (nil, nil) when it does not exist.
func readSettings(path string) (config.Settings, error) {
	data, err := os.ReadFile(path)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		var pe *fs.PathError
		if errors.As(err, &pe) {
			err = pe.Err
		}
		return nil, fmt.Errorf("cannot read it: %v", err)
	}
	st, err := config.ParseSettings(path, data)
	if err != nil {
		// The Problem names the file and has its own fix.
		msg := strings.TrimPrefix(err.Error(), path+": ")
		if i := strings.LastIndex(msg, " (fix: "); i >= 0 {
			msg = msg[:i]
		}
		return nil, errors.New(msg)
	}
	return st, nil
}

// localSettings returns the "projects" entry of the user settings for the
// workspace (an exact key wins over one equal once cleaned), or nil.
func localSettings(s config.Settings, workspace string) (config.Settings, error) {
	pv, ok := s["projects"]
	if !ok || pv == nil {
		return nil, nil
	}
	projects, ok := pv.(map[string]any)
	if !ok {
		return nil, errors.New(`"projects" must be an object keyed by absolute workspace path`)
	}
	entry, ok := projects[workspace]
	if !ok {
		for k, v := range projects {
			if filepath.Clean(k) == workspace {
				entry, ok = v, true
				break
			}
		}
	}
	if !ok || entry == nil {
		return nil, nil
	}
	m, isObj := entry.(map[string]any)
	if !isObj {
		return nil, fmt.Errorf(`"projects" entry for %s must be an object`, workspace)
	}
	local := config.Settings(m)
	if err := local.Validate(); err != nil {
		return nil, fmt.Errorf(`"projects" entry for %s: %w`, workspace, err)
	}
	return local, nil
}

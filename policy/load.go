package policy

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"sort"
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
		// The administrator's deny rules are unknown, and the person an
		// ask would reach is not the one who may lift them: every MCP
		// call is denied until the file is fixed (fail closed).
		src := Source{Scope: ScopeManaged, File: mf}
		fail(src, err)
		p.problems[len(p.problems)-1].Fix = "ask the administrator to fix the file (JSON with // comments allowed); until then every MCP call is denied"
		p.denyAll = fmt.Sprintf("%s cannot be used (%v)", src, err)
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
			locals, err := localSettings(s, o.Workspace)
			if err != nil {
				fail(Source{Scope: ScopeLocal, File: uf}, err)
			}
			for _, local := range locals {
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

// localSettings returns the "projects" entries of the user settings that
// belong to the workspace, best match first, as config matches them
// (config.MatchProjectKeys: the exact spelling, the cleaned one, then any
// key that resolves to the same directory through symlinks). The rules of
// every matching entry apply: each is the user's own word about this
// directory, and a deny in any of them still wins.
func localSettings(s config.Settings, workspace string) ([]config.Settings, error) {
	pv, ok := s["projects"]
	if !ok || pv == nil {
		return nil, nil
	}
	projects, ok := pv.(map[string]any)
	if !ok {
		return nil, errors.New(`"projects" must be an object keyed by absolute workspace path`)
	}
	keys := make([]string, 0, len(projects))
	for k := range projects {
		keys = append(keys, k)
	}
	sort.Strings(keys) // a map has no file order; ties are then stable
	var out []config.Settings
	for _, k := range config.MatchProjectKeys(keys, workspace) {
		entry := projects[k]
		if entry == nil {
			continue
		}
		m, isObj := entry.(map[string]any)
		if !isObj {
			return out, fmt.Errorf(`"projects" entry for %s must be an object`, k)
		}
		local := config.Settings(m)
		if err := local.Validate(); err != nil {
			return out, fmt.Errorf(`"projects" entry for %s: %w`, k, err)
		}
		out = append(out, local)
	}
	return out, nil
}

package config

import (
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"path/filepath"
	"slices"
	"strings"

	"github.com/switchboard-mcp/switchboard/internal/safefile"
	"github.com/tailscale/hujson"
)

// The settings files. User and local settings share one file: local
// settings are its "projects"[<workspace>] entries.
const (
	// SettingsFileName is the user settings file in the Switchboard
	// directory, and the project settings file in <root>/.switchboard.
	SettingsFileName = "settings.json"
	// ManagedSettingsFileName is the administrator's settings file in the
	// managed directory.
	ManagedSettingsFileName = "managed-settings.json"
)

// UserSettingsPath returns <home>/settings.json.
func UserSettingsPath(home string) string { return filepath.Join(home, SettingsFileName) }

// ProjectSettingsPath returns <root>/.switchboard/settings.json.
func ProjectSettingsPath(root string) string {
	return filepath.Join(root, ".switchboard", SettingsFileName)
}

// ManagedSettingsPath returns <dir>/managed-settings.json.
func ManagedSettingsPath(dir string) string { return filepath.Join(dir, ManagedSettingsFileName) }

// SettingsScope says who wrote a settings layer, which decides what it
// may do: only the layers a repository cannot write ([SettingsScope.Trusted])
// may approve servers, open the private network or loosen a sandbox.
type SettingsScope string

const (
	// SettingsManaged is the administrator's managed-settings.json.
	SettingsManaged SettingsScope = "managed"
	// SettingsFlag is what the person running Switchboard passed for this
	// run: --settings, or an embedder's own settings.
	SettingsFlag SettingsScope = "flag"
	// SettingsLocal is an entry of the user file's "projects" object for
	// the workspace.
	SettingsLocal SettingsScope = "local"
	// SettingsUser is the user settings file without "projects".
	SettingsUser SettingsScope = "user"
	// SettingsProject is <root>/.switchboard/settings.json: the
	// repository's, so it may only tighten.
	SettingsProject SettingsScope = "project"
)

// Trusted reports whether the scope is one a repository cannot write.
func (s SettingsScope) Trusted() bool { return s != SettingsProject && s != "" }

// SettingsLayer is one settings document in force.
type SettingsLayer struct {
	Scope SettingsScope
	// File is where it was read ("" for inline --settings).
	File string
	// Key is the "projects" key of a local layer.
	Key string
	// Settings is the document; nil when Err is set.
	Settings Settings
	// Err says why the file, or this local entry, cannot be used: it
	// exists but cannot be read, does not parse, or has a key of the wrong
	// type. The message names neither the file nor a fix.
	Err error
	// data is the file as read, to say where in it a value is.
	data []byte
}

// Label names the layer for people: "managed settings /etc/…",
// "--settings", "local settings in ~/.switchboard/settings.json
// (projects["/w"])", "user settings …", "project settings …".
func (l SettingsLayer) Label() string {
	switch l.Scope {
	case SettingsManaged:
		return "managed settings " + l.File
	case SettingsFlag:
		if l.File == "" {
			return "--settings"
		}
		return "--settings " + l.File
	case SettingsLocal:
		return fmt.Sprintf("local settings in %s (projects[%q])", l.File, l.Key)
	case SettingsUser:
		return "user settings " + l.File
	case SettingsProject:
		return "project settings " + l.File
	}
	return l.File
}

// SettingsPlaces says where the settings of one run are.
type SettingsPlaces struct {
	// Home is the Switchboard directory, holding the user settings file.
	// "" reads no user or local settings.
	Home string
	// Workspace is the absolute project root; "" means none (no local or
	// project settings).
	Workspace string
	// ManagedDir holds managed-settings.json; "" reads none.
	ManagedDir string
	// Flag is the run's own settings (--settings), nil for none, and
	// FlagFile the file it came from ("" when inline).
	Flag     Settings
	FlagFile string
}

// SettingsStack is every settings layer of a run, in precedence order:
// managed, flag, local (best match first), user, project. Read it with
// [ReadSettings]; it is the one reader of settings files, shared by
// permission rules, launch trust, network and sandbox defaults.
type SettingsStack struct {
	Places SettingsPlaces
	Layers []SettingsLayer
}

// ReadSettings reads every settings layer of p. It never fails: a file
// that does not exist contributes no layer; one that cannot be used
// contributes a layer with Err, so each reader fails closed its own way.
func ReadSettings(p SettingsPlaces) *SettingsStack {
	st := &SettingsStack{Places: p}
	if p.ManagedDir != "" {
		f := ManagedSettingsPath(p.ManagedDir)
		if s, data, err := readSettingsFile(f); s != nil || err != nil {
			st.Layers = append(st.Layers, SettingsLayer{Scope: SettingsManaged, File: f, Settings: s, Err: err, data: data})
		}
	}
	if p.Flag != nil {
		st.Layers = append(st.Layers, SettingsLayer{Scope: SettingsFlag, File: p.FlagFile, Settings: p.Flag})
	}
	uf := ""
	if p.Home != "" {
		uf = UserSettingsPath(p.Home)
		s, data, err := readSettingsFile(uf)
		switch {
		case err != nil:
			st.Layers = append(st.Layers, SettingsLayer{Scope: SettingsUser, File: uf, Err: err})
		case s != nil:
			st.Layers = append(st.Layers, localLayers(uf, data, s, p.Workspace)...)
			user := Settings{}
			for k, v := range s {
				if k != "projects" {
					user[k] = v
				}
			}
			st.Layers = append(st.Layers, SettingsLayer{Scope: SettingsUser, File: uf, Settings: user, data: data})
		}
	}
	// The project file is the user file when the workspace is the
	// Switchboard directory's parent and the two coincide: read it once,
	// as the user's.
	if pf := ProjectSettingsPath(p.Workspace); p.Workspace != "" && filepath.Clean(pf) != filepath.Clean(uf) {
		if s, data, err := readSettingsFile(pf); s != nil || err != nil {
			st.Layers = append(st.Layers, SettingsLayer{Scope: SettingsProject, File: pf, Settings: s, Err: err, data: data})
		}
	}
	return st
}

// readSettingsFile reads a settings file: (nil, nil, nil) when it does not
// exist.
func readSettingsFile(path string) (Settings, []byte, error) {
	data, err := safefile.ReadFile(path)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, nil, nil
	}
	if reason, fix, ok := safefile.Refused(err); ok {
		return nil, nil, Diagnostic{Severity: SeverityError, Message: "cannot read it: " + reason, Fix: fix}
	}
	if err != nil {
		var pe *fs.PathError
		if errors.As(err, &pe) {
			err = pe.Err
		}
		return nil, nil, fmt.Errorf("cannot read it: %v", err)
	}
	s, err := parseSettings(data)
	if err != nil {
		return nil, nil, err
	}
	return s, data, nil
}

// localLayers are the "projects" entries of the user file (s, parsed from
// data) that belong to workspace, best first, in the order config.Load
// reads the local servers: file order, the later of a repeated key.
func localLayers(file string, data []byte, s Settings, workspace string) []SettingsLayer {
	if workspace == "" {
		return nil
	}
	pv, ok := s["projects"]
	if !ok || pv == nil {
		return nil
	}
	projects, ok := pv.(map[string]any)
	if !ok {
		return []SettingsLayer{{Scope: SettingsLocal, File: file,
			Err: errors.New(`"projects" must be an object keyed by absolute workspace path`)}}
	}
	var out []SettingsLayer
	for _, k := range MatchProjectKeys(projectKeysInOrder(data, projects), workspace) {
		l := SettingsLayer{Scope: SettingsLocal, File: file, Key: k, data: data}
		switch m := projects[k].(type) {
		case nil:
			continue
		case map[string]any:
			l.Settings = Settings(m)
			if err := l.Settings.Validate(); err != nil {
				l.Settings, l.Err = nil, fmt.Errorf(`"projects" entry for %s: %w`, k, err)
			}
		default:
			l.Err = fmt.Errorf(`"projects" entry for %s must be an object`, k)
		}
		out = append(out, l)
	}
	return out
}

// projectKeysInOrder returns the keys of the "projects" object of the
// JSONC document data in file order; projects (the same object, decoded)
// supplies them in name order if data cannot be walked.
func projectKeysInOrder(data []byte, projects map[string]any) []string {
	text, _ := StripBOM(data)
	if v, err := hujson.Parse(text); err == nil {
		if obj, ok := v.Value.(*hujson.Object); ok {
			if pm := lookupMember(obj, "projects"); pm != nil {
				if po, ok := pm.Value.Value.(*hujson.Object); ok {
					return memberNames(po)
				}
			}
		}
	}
	keys := make([]string, 0, len(projects))
	for k := range projects {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	return keys
}

// Trusted returns the layers a repository cannot write, in precedence
// order (managed, flag, local, user).
func (st *SettingsStack) Trusted() []SettingsLayer {
	var out []SettingsLayer
	for _, l := range st.Layers {
		if l.Scope.Trusted() {
			out = append(out, l)
		}
	}
	return out
}

// Problems returns the layers that cannot be used.
func (st *SettingsStack) Problems() []SettingsLayer {
	var out []SettingsLayer
	for _, l := range st.Layers {
		if l.Err != nil {
			out = append(out, l)
		}
	}
	return out
}

// AllowPrivateNetworkKey is the setting that lets project-scope remote
// servers reach loopback, private and reserved addresses.
const AllowPrivateNetworkKey = "allowPrivateNetworkForProjectServers"

// AllowPrivateNetwork reports whether a trusted layer sets
// "allowPrivateNetworkForProjectServers": true. Never project settings: a
// repository must not open the user's network to its own servers. A layer
// that cannot be used allows nothing.
func (st *SettingsStack) AllowPrivateNetwork() bool {
	for _, l := range st.Trusted() {
		if b, _ := l.Settings[AllowPrivateNetworkKey].(bool); b {
			return true
		}
	}
	return false
}

// SandboxDefaults returns the per-scope sandbox defaults of the user
// settings, then the flag's, then the managed settings', each overriding
// the one before; never local or project settings (a repository must not
// unconfine its own servers, and a workspace's entry is not where the
// user's machine-wide defaults live). A layer that cannot be used sets
// nothing.
func (st *SettingsStack) SandboxDefaults() SandboxDefaults {
	var out SandboxDefaults
	for _, scope := range []SettingsScope{SettingsUser, SettingsFlag, SettingsManaged} {
		for _, l := range st.Layers {
			if l.Scope != scope || l.Settings == nil {
				continue
			}
			if d, err := l.Settings.SandboxDefaults(); err == nil && d != nil {
				out = out.Merge(d)
			}
		}
	}
	return out
}

// Preference returns the first non-empty string value of key in the
// run's own settings, then the user's, then the managed ones: a choice of
// the person's (a registry URL) where the administrator's is the default.
// Never local or project settings.
func (st *SettingsStack) Preference(key string) string {
	for _, scope := range []SettingsScope{SettingsFlag, SettingsUser, SettingsManaged} {
		for _, l := range st.Layers {
			if l.Scope != scope {
				continue
			}
			if v, ok := l.Settings[key].(string); ok && strings.TrimSpace(v) != "" {
				return v
			}
		}
	}
	return ""
}

// Profiles reads the "profiles" of every layer (see [ParseProfiles] and
// [MergeProfiles]): the managed, flag, local, user and project settings.
// A layer that cannot be used contributes none.
func (st *SettingsStack) Profiles() (Profiles, []Diagnostic) {
	var layers [][]Profile
	var diags []Diagnostic
	userDone := false
	for _, l := range st.Layers {
		if l.Err != nil {
			continue
		}
		var data []byte
		switch {
		case l.Scope == SettingsFlag && l.File == "":
			data, _ = json.Marshal(l.Settings)
		case l.Scope == SettingsLocal || l.Scope == SettingsUser:
			// The user file holds both; read it once, with its local entries.
			if userDone {
				continue
			}
			userDone = true
			data, _ = safefile.ReadFile(l.File)
			p, d := parseProfiles(l.File, data, SettingsUser, st.Places.Workspace)
			layers, diags = append(layers, p), append(diags, d...)
			continue
		default:
			data, _ = safefile.ReadFile(l.File)
		}
		label := l.File
		if label == "" {
			label = "--settings"
		}
		p, d := parseProfiles(label, data, l.Scope, "")
		layers, diags = append(layers, p), append(diags, d...)
	}
	ps, d := MergeProfiles(layers...)
	return ps, append(diags, d...)
}

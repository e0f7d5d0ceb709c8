package cli

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"strings"

	"github.com/tailscale/hujson"

	"github.com/switchboard-mcp/switchboard/config"
	"github.com/switchboard-mcp/switchboard/internal/lazyre"
	"github.com/switchboard-mcp/switchboard/internal/safefile"
)

// Windsurf and Gemini CLI keep their servers under "mcpServers" as Claude
// Desktop does, with fields of their own; dialectImport turns those into
// Switchboard's before the translation every source goes through
// (translateImport), and says what it changed or could not keep.

// windsurfConfigs are Windsurf's files, lowest priority first: the one
// Windsurf kept in ~/.codeium before it had a folder of its own, Windsurf
// Next's, and Windsurf's, ~/.codeium/windsurf/mcp_config.json
// (%USERPROFILE%\.codeium\… on Windows, the same place). Windsurf's own
// wins a name the others define differently.
func windsurfConfigs(f *Factory) []string {
	dir := filepath.Join(f.HomeDir, ".codeium")
	return []string{
		filepath.Join(dir, "mcp_config.json"),
		filepath.Join(dir, "windsurf-next", "mcp_config.json"),
		filepath.Join(dir, "windsurf", "mcp_config.json"),
	}
}

// geminiDir is the .gemini folder of Gemini CLI's user settings and
// extensions: in $GEMINI_CLI_HOME when set (Gemini's own override), else
// in the home directory.
func geminiDir(f *Factory) string {
	home := f.HomeDir
	if f.Getenv != nil {
		if h, ok := f.Getenv("GEMINI_CLI_HOME"); ok && h != "" {
			home = h
		}
	}
	return filepath.Join(home, ".gemini")
}

// geminiSystemSettings is the settings file an administrator gives every
// user of the machine, which wins over theirs and the workspace's:
// $GEMINI_CLI_SYSTEM_SETTINGS_PATH when set, else /etc/gemini-cli on
// Linux, /Library/Application Support/GeminiCli on macOS,
// C:\ProgramData\gemini-cli on Windows (the places Gemini reads).
func geminiSystemSettings(f *Factory, goos string) string {
	if f.Getenv != nil {
		if p, ok := f.Getenv("GEMINI_CLI_SYSTEM_SETTINGS_PATH"); ok && p != "" {
			return p
		}
	}
	switch goos {
	case "darwin":
		return "/Library/Application Support/GeminiCli/settings.json"
	case "windows":
		return `C:\ProgramData\gemini-cli\settings.json`
	}
	return "/etc/gemini-cli/settings.json"
}

// geminiSystemDefaults is the administrator's file of defaults, below the
// user's settings: $GEMINI_CLI_SYSTEM_DEFAULTS_PATH when set, else
// system-defaults.json beside the system settings.
func geminiSystemDefaults(f *Factory, goos string) string {
	if f.Getenv != nil {
		if p, ok := f.Getenv("GEMINI_CLI_SYSTEM_DEFAULTS_PATH"); ok && p != "" {
			return p
		}
	}
	return filepath.Join(filepath.Dir(geminiSystemSettings(f, goos)), "system-defaults.json")
}

// geminiExtensionFile is the name of a Gemini CLI extension's manifest,
// whose "mcpServers" Gemini starts as the settings' (which win a name).
const geminiExtensionFile = "gemini-extension.json"

// geminiExtensions are the manifests of the extensions installed for the
// user, in folder order: ~/.gemini/extensions/<name>/gemini-extension.json,
// or, for one linked in (gemini extensions link), the manifest in the
// folder its .gemini-extension-install.json names, as Gemini reads it.
func geminiExtensions(f *Factory) []string {
	dirs, _ := filepath.Glob(filepath.Join(geminiDir(f), "extensions", "*"))
	var out []string
	for _, dir := range dirs {
		if fi, err := os.Stat(dir); err != nil || !fi.IsDir() {
			continue // extension-enablement.json
		}
		var meta struct {
			Type   string `json:"type"`
			Source string `json:"source"`
		}
		if b, err := safefile.ReadFile(filepath.Join(dir, ".gemini-extension-install.json")); err == nil &&
			json.Unmarshal(b, &meta) == nil && meta.Type == "link" && filepath.IsAbs(meta.Source) {
			dir = meta.Source
		}
		out = append(out, filepath.Join(dir, geminiExtensionFile))
	}
	return out
}

// geminiConfigs are the files Gemini CLI starts servers from, lowest
// priority first, as it merges them: the extensions' (a settings file's
// server of the same name wins), the system defaults, the user's
// settings, the workspace's (the repository's: the user's own win a
// name clash all the same, see mergeImportFiles), and the system
// settings, which win over all.
func geminiConfigs(f *Factory, root string) []string {
	return append(geminiExtensions(f), geminiSettingsFiles(f, root)...)
}

// geminiSettingsFiles are geminiConfigs' settings files, in its order.
func geminiSettingsFiles(f *Factory, root string) []string {
	return []string{
		geminiSystemDefaults(f, runtime.GOOS),
		filepath.Join(geminiDir(f), "settings.json"),
		filepath.Join(root, ".gemini", "settings.json"),
		geminiSystemSettings(f, runtime.GOOS),
	}
}

// geminiExtensionVars writes the variables Gemini gives an extension's
// manifest (before the environment's) as Switchboard's: ${extensionPath}
// is the extension's folder ext, ${workspacePath} the workspace, read as
// ${workspaceFolder} (so that it is made relative to the workspace, or
// refused in user scope, as an editor's is), and ${/} or
// ${pathSeparator} this system's path separator.
func geminiExtensionVars(def []byte, ext string) (out []byte, notes []string) {
	if !strings.Contains(string(def), "${") {
		return def, nil
	}
	v, err := hujson.Parse(def)
	if err != nil {
		return def, nil
	}
	said := map[string]bool{}
	eachString(&v, func(s string) string {
		return geminiExtVarRE().ReplaceAllStringFunc(s, func(m string) string {
			var to, note string
			switch m {
			case "${extensionPath}":
				to, note = ext, "Gemini's ${extensionPath} became the extension's folder, "+ext
			case "${workspacePath}":
				to, note = varWorkspaceFolder, "Gemini's ${workspacePath} was read as ${workspaceFolder}, the workspace"
			default: // ${/}, ${pathSeparator}
				to, note = string(filepath.Separator), fmt.Sprintf("Gemini's %s became %s, this system's path separator", m, string(filepath.Separator))
			}
			if !said[m] {
				said[m] = true
				notes = append(notes, note)
			}
			return to
		})
	})
	if len(notes) == 0 {
		return def, nil
	}
	return v.Pack(), notes
}

var geminiExtVarRE = lazyre.New(`\$\{(extensionPath|workspacePath|/|pathSeparator)\}`)

// geminiExtensionOff says why Gemini does not start the servers of the
// extension name in the workspace root: the rules of its
// extension-enablement.json (file) disable it there. The last rule that
// matches the folder wins; "!" disables, a trailing "*" takes the
// folders below too. "" when it starts them (the default).
func geminiExtensionOff(file, name, root string) string {
	b, err := safefile.ReadFile(file)
	if err != nil {
		return ""
	}
	var all map[string]struct {
		Overrides []string `json:"overrides"`
	}
	if json.Unmarshal(b, &all) != nil {
		return ""
	}
	slashed := func(p string) string {
		p = strings.ReplaceAll(p, `\`, "/")
		if !strings.HasPrefix(p, "/") {
			p = "/" + p
		}
		if !strings.HasSuffix(p, "/") {
			p += "/"
		}
		return p
	}
	here := slashed(root)
	enabled := true
	for _, rule := range all[name].Overrides {
		disable := strings.HasPrefix(rule, "!")
		rule = strings.TrimPrefix(rule, "!")
		below := strings.HasSuffix(rule, "*")
		base := slashed(strings.TrimSuffix(rule, "*"))
		if here == base || below && strings.HasPrefix(here, base) {
			enabled = !disable
		}
	}
	if enabled {
		return ""
	}
	return fmt.Sprintf("Gemini's extension %q is disabled in this workspace (its extension-enablement.json)", name)
}

// dialectImport rewrites def, one server of from's file, in the fields
// Switchboard reads. off, if set, is why Gemini does not start it (its
// "mcp.excluded" or "mcp.allowed", geminiOff). It returns the new
// definition and what changed, or why the server cannot be imported.
func dialectImport(from, name string, def []byte, off string) (out []byte, notes []string, skip string) {
	if from != "windsurf" && from != "gemini" {
		return def, nil, ""
	}
	v, obj, ok := parseObject(def)
	if !ok {
		return def, nil, ""
	}
	get := func(key string) *hujson.Value {
		for i := range obj.Members {
			if memberName(&obj.Members[i]) == key {
				return &obj.Members[i].Value
			}
		}
		return nil
	}
	str := func(key string) (string, bool) {
		if m := get(key); m != nil {
			if lit, ok := m.Value.(hujson.Literal); ok && lit.Kind() == '"' {
				return lit.String(), true
			}
		}
		return "", false
	}
	remove := func(key string) {
		obj.Members = slices.DeleteFunc(obj.Members, func(m hujson.ObjectMember) bool { return memberName(&m) == key })
	}
	set := func(key string, val any) {
		b, _ := json.Marshal(val)
		nv, _ := hujson.Parse(b)
		if m := get(key); m != nil {
			m.Value = nv.Value
			return
		}
		obj.Members = append(obj.Members, hujson.ObjectMember{Name: hujson.Value{Value: hujson.String(key)}, Value: nv})
	}
	rename := func(from, to string) {
		for i := range obj.Members {
			if memberName(&obj.Members[i]) == from {
				obj.Members[i].Name = hujson.Value{Value: hujson.String(to)}
			}
		}
	}

	switch from {
	case "windsurf":
		// Remote servers: "serverUrl" (or "url"), the transport found by
		// trying; Switchboard infers http, sse for a /sse endpoint.
		if su, ok := str("serverUrl"); ok {
			if u, ok := str("url"); ok && u != su {
				notes = append(notes, fmt.Sprintf("has both \"serverUrl\" and \"url\": imported %q, the serverUrl", su))
			}
			remove("url")
			rename("serverUrl", "url")
		}
	case "gemini":
		if tcp, ok := str("tcp"); ok && get("command") == nil && get("url") == nil && get("httpUrl") == nil {
			return nil, nil, fmt.Sprintf("connects to %q over a WebSocket (Gemini's \"tcp\"), which Switchboard does not speak; it takes stdio, Streamable HTTP and SSE", tcp)
		}
		// Gemini's transport is the field: httpUrl is Streamable HTTP,
		// url SSE (unless "type" says), command stdio.
		if hu, ok := str("httpUrl"); ok {
			if u, ok := str("url"); ok && u != hu {
				notes = append(notes, fmt.Sprintf("has both \"httpUrl\" and \"url\": imported %q, the httpUrl, as Gemini uses", hu))
			}
			remove("url")
			rename("httpUrl", "url")
			set("type", "http")
		} else if _, ok := str("url"); ok && get("type") == nil {
			set("type", "sse")
			notes = append(notes, `Gemini's "url" is an SSE endpoint: imported as "type": "sse" ("httpUrl" is Streamable HTTP)`)
		}
		// Gemini runs a trusted server's tools without asking: that is
		// not an approval, and Switchboard's permission rules still ask.
		if m := get("trust"); m != nil {
			if lit, ok := m.Value.(hujson.Literal); ok && lit.Bool() {
				notes = append(notes, fmt.Sprintf(`"trust": true (Gemini runs its tools without asking) was not imported: Switchboard asks as your permission rules say; to let them run, switchboard permissions allow mcp__%s`, name))
			}
			remove("trust")
		}
		if get("includeTools") != nil && get("enabledTools") == nil {
			rename("includeTools", "enabledTools")
			notes = append(notes, `"includeTools" became "enabledTools" (only those tools shown)`)
		}
		if get("excludeTools") != nil && get("disabledTools") == nil {
			rename("excludeTools", "disabledTools")
			notes = append(notes, `"excludeTools" became "disabledTools" (those tools hidden)`)
		}
		if apt, ok := str("authProviderType"); ok && apt != "" && apt != "dynamic_discovery" {
			return nil, nil, fmt.Sprintf("signs in with Gemini's %q (authProviderType), which Switchboard cannot do; add it by hand with a \"headersHelper\" that prints the header (e.g. Authorization: Bearer from gcloud auth print-access-token)", apt)
		}
		remove("authProviderType")
		if get("oauth") != nil {
			remove("oauth")
			notes = append(notes, fmt.Sprintf(`dropped Gemini's "oauth" settings: Switchboard finds the server's sign-in itself; run switchboard mcp login %s`, name))
		}
		if off != "" {
			set("enabled", false)
			notes = append(notes, off+`: imported disabled ("enabled": false)`)
		}
		// Gemini expands $NAME and ${NAME} from the environment; ${NAME}
		// is Switchboard's, for the names it expands.
		var refs geminiRefs
		for i := range obj.Members {
			switch memberName(&obj.Members[i]) {
			case "command", "args", "env", "cwd", "url", "headers":
				eachString(&obj.Members[i].Value, func(s string) string {
					return refs.rewrite(s, runtime.GOOS)
				})
			}
		}
		if len(refs.other) > 0 {
			return nil, nil, fmt.Sprintf("uses %s, which Gemini reads from the environment variable of exactly that name; "+
				"Switchboard expands only upper-case names (${%s}), another variable on this system, whose value this server would get: "+
				"set that one and add the server with switchboard mcp add-json, writing ${%s}",
				strings.Join(refs.other, ", "), strings.ToUpper(refs.otherNames[0]), strings.ToUpper(refs.otherNames[0]))
		}
		if refs.bare {
			notes = append(notes, "Gemini's $NAME became ${NAME}")
		}
		for _, r := range refs.folded {
			notes = append(notes, fmt.Sprintf("Gemini's %s became ${%s}: the same variable on Windows, whose names ignore case", r, strings.ToUpper(strings.Trim(r, "${}"))))
		}
	}
	return v.Pack(), notes, ""
}

// geminiOff returns, for a Gemini settings file, why Gemini does not
// start a server of that name: its "mcp.excluded" lists it, or its
// "mcp.allowed" does not; "" when it starts it.
func geminiOff(v hujson.Value) func(name string) string {
	var l geminiLists
	l.add(v)
	return l.off
}

// geminiLists are the "mcp.excluded" and "mcp.allowed" of one or more
// Gemini settings files, which Gemini concatenates.
type geminiLists struct {
	excluded, allowed []string
	hasAllowed        bool
}

// add adds the lists of the settings file v.
func (l *geminiLists) add(v hujson.Value) {
	list := func(ptr string) ([]string, bool) {
		lv := v.Find(ptr)
		if lv == nil {
			return nil, false
		}
		std := lv.Clone()
		std.Standardize()
		var names []string
		return names, json.Unmarshal(std.Pack(), &names) == nil
	}
	excluded, _ := list("/mcp/excluded")
	allowed, hasAllowed := list("/mcp/allowed")
	l.excluded = append(l.excluded, excluded...)
	l.allowed = append(l.allowed, allowed...)
	l.hasAllowed = l.hasAllowed || hasAllowed
}

// off says why Gemini does not start the server name; "" when it does.
func (l *geminiLists) off(name string) string {
	switch {
	case slices.Contains(l.excluded, name):
		return `Gemini's "mcp.excluded" lists it`
	case l.hasAllowed && !slices.Contains(l.allowed, name):
		return `Gemini's "mcp.allowed" does not list it`
	}
	return ""
}

// geminiExtension is what decides, beyond its manifest, whether Gemini
// starts an extension's servers.
type geminiExtension struct {
	// enablement is Gemini's extension-enablement.json, which may disable
	// the extension in the workspace (geminiExtensionOff).
	enablement string
	// off is why the user's or the administrator's settings keep a server
	// of that name from starting ("mcp.excluded", "mcp.allowed").
	off func(name string) string
}

// geminiExtensionOf is the geminiExtension of a manifest of from's, nil
// for any other file. The workspace's settings, the repository's, do not
// decide about the user's extensions.
func geminiExtensionOf(f *Factory, path, from string) *geminiExtension {
	if from != "gemini" || filepath.Base(path) != geminiExtensionFile {
		return nil
	}
	var l geminiLists
	for _, file := range []string{geminiSystemDefaults(f, runtime.GOOS), filepath.Join(geminiDir(f), "settings.json"), geminiSystemSettings(f, runtime.GOOS)} {
		b, err := safefile.ReadFile(file)
		if err != nil {
			continue
		}
		b, _ = config.StripBOM(b)
		if v, err := hujson.Parse(b); err == nil {
			l.add(v)
		}
	}
	return &geminiExtension{enablement: filepath.Join(geminiDir(f), "extensions", "extension-enablement.json"), off: l.off}
}

// geminiRefRE matches what Gemini expands from the environment: $NAME, a
// word, and ${NAME}, anything up to the }. An unset one stays as written.
var geminiRefRE = lazyre.New(`\$(?:(\w+)|\{([^}]+)\})`)

// geminiRefs rewrites Gemini's environment references as Switchboard's,
// and says what it did.
type geminiRefs struct {
	bare bool // a $NAME became ${NAME}
	// folded are the references with lower-case letters written upper-case
	// (on Windows, where they name the same variable).
	folded []string
	// other are those Switchboard cannot expand as the same variable:
	// $name or ${name} with lower-case letters, elsewhere than on Windows;
	// otherNames their names.
	other, otherNames []string
}

// rewrite returns s with Gemini's references written for Switchboard on
// goos: $NAME as ${NAME}; a name with lower-case letters upper-case on
// Windows, where variable names ignore case, and elsewhere kept (and
// recorded in other). $1, which Gemini only expands if the environment
// has a variable "1", stays; ${workspaceFolder} is ours
// (geminiExtensionVars'), and ${A:-b} and the like are translateImport's
// to take or refuse.
func (r *geminiRefs) rewrite(s, goos string) string {
	return geminiRefRE().ReplaceAllStringFunc(s, func(m string) string {
		sub := geminiRefRE().FindStringSubmatch(m)
		name, bare := sub[1], sub[1] != ""
		if !bare {
			name = sub[2]
		}
		switch {
		case config.IsVarName(name):
			if bare {
				r.bare = true
				return "${" + name + "}"
			}
			return m
		case !bare && (m == varWorkspaceFolder || !isWord(name)):
			return m
		case name[0] >= '0' && name[0] <= '9':
			return m
		case goos == "windows":
			if !slices.Contains(r.folded, m) {
				r.folded = append(r.folded, m)
			}
			return "${" + strings.ToUpper(name) + "}"
		}
		if !slices.Contains(r.other, m) {
			r.other = append(r.other, m)
			r.otherNames = append(r.otherNames, name)
		}
		return m
	})
}

// isWord reports whether s is letters, digits and _ only, as \w.
func isWord(s string) bool {
	for i := 0; i < len(s); i++ {
		c := s[i]
		if !(c == '_' || '0' <= c && c <= '9' || 'a' <= c && c <= 'z' || 'A' <= c && c <= 'Z') {
			return false
		}
	}
	return s != ""
}

// geminiSetting is one of an extension manifest's "settings": a value
// Gemini asks for when the extension is installed and keeps for it (in
// the extension's .env, or its keychain when sensitive), which the
// manifest's $ENV_VAR then reads instead of the environment.
type geminiSetting struct {
	Name      string `json:"name"`
	EnvVar    string `json:"envVar"`
	Sensitive bool   `json:"sensitive"`
}

// geminiSettings are the "settings" of the manifest v.
func geminiSettings(v hujson.Value) []geminiSetting {
	sv := v.Find("/settings")
	if sv == nil {
		return nil
	}
	std := sv.Clone()
	std.Standardize()
	var out []geminiSetting
	_ = json.Unmarshal(std.Pack(), &out)
	return out
}

// geminiSettingNotes say, for each of the extension's settings def reads
// as ${VAR}, that Switchboard reads it from the environment, where Gemini
// kept it for the extension.
func geminiSettingNotes(def []byte, settings []geminiSetting) []string {
	var notes []string
	for _, st := range settings {
		if !config.IsVarName(st.EnvVar) || !strings.Contains(string(def), "${"+st.EnvVar+"}") {
			continue
		}
		kept := "in the extension's .env"
		if st.Sensitive {
			kept = "in its keychain"
		}
		notes = append(notes, fmt.Sprintf("${%s} is the extension's setting %q, which Gemini kept for it %s and Switchboard reads from your environment: set %s before the server starts, or keep it as a secret (switchboard secret set %s, then ${secret:%s} in its env or headers)",
			st.EnvVar, st.Name, kept, st.EnvVar, st.EnvVar, st.EnvVar))
	}
	return notes
}

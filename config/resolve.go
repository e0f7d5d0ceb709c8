package config

import (
	"bytes"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"sort"
	"strings"

	"github.com/switchboard-mcp/switchboard/internal/safefile"
	"github.com/tailscale/hujson"
)

// workspaceLabel names the workspace file in one-line reasons: it always
// sits at the same place under the root.
const workspaceLabel = ".switchboard/workspace.json"

// rank orders scopes for the same name: the highest defined wins. Managed
// is above everything: no scope can override an administrator's server.
var rank = map[Scope]int{
	ScopeUser:    1,
	ScopeProject: 2,
	ScopeLocal:   3,
	ScopeFlag:    4,
	ScopeSession: 5,
	ScopeManaged: 6,
}

// candidate is one definition of a name, from one scope.
type candidate struct {
	def   serverDef
	scope Scope
	file  string // "" for inline --mcp-config and session servers
	label string // the file, or how the definition was given, for messages
	order int    // load order, to break ties within a scope (later wins)
}

type loader struct {
	lookup   func(string) (string, bool)
	lastGood *LastGood
	loaded   map[string]bool // the paths load was asked for
	res      *Resolved
	cands    map[string][]candidate
	n        int
	// disabledBy maps a name to the reason of the first disabledMcpServers
	// list that names it.
	disabledBy map[string]string
	// userDisabledBy is disabledBy without the lists a repository wrote
	// (the project file): the disables a repository's workspace file may
	// not lift.
	userDisabledBy map[string]string
	// repoDisabled is where a repository file (the project file, the
	// workspace file) first lists a name as disabled: the disable a
	// managed server ignores, and says so.
	repoDisabled map[string]repoDisable
	// Managed policy.
	managedFile  string
	allowPresent bool
	allowed      map[string]bool
	denied       map[string]bool
	// Workspace layer.
	wsEnabled    []string
	wsEnabledSet map[string]bool
	wsEnPos      map[string]Position
	wsDisabled   map[string]bool
	// Local layer: the user's own enable/disable lists for this workspace,
	// in the user file under "projects" (what `mcp enable` writes).
	localEnabled    []string
	localEnabledSet map[string]bool
	localEnPos      map[string]Position
	localDisabled   map[string]bool
	localLabel      string
	// filters are the "toolFilters" layers by server name, in the order
	// managed, local, workspace.
	filters map[string]ToolFilter
}

// Load reads every configuration file of one workspace (the scopes, the
// workspace layer and the session's servers; docs/configuration.md, Files and
// scopes) and resolves it, ${VAR} expansion included, into the view the
// runtime uses.
//
// It returns an error only when the options cannot be used (no home
// directory can be found, no working directory to start from). Every
// problem with a file or a server is a [Diagnostic] in the result instead,
// and a bad file or server never hides the valid servers of other files.
// Load reads files and the environment; it starts nothing and keeps no
// state, so it is safe to call concurrently.
//
// Resolved.Files names the user, project and workspace files even when
// StrictMCPConfig skipped reading them: they stay the write targets.
func Load(opts *LoadOptions) (*Resolved, error) {
	var o LoadOptions
	if opts != nil {
		o = *opts
	}
	lookup := o.LookupEnv
	if lookup == nil {
		lookup = os.LookupEnv
	}
	homeDir := o.HomeDir
	if homeDir == "" {
		h, err := os.UserHomeDir()
		if err == nil {
			homeDir = h
		} else if v, _ := lookup("SWITCHBOARD_HOME"); o.Home == "" && v == "" {
			return nil, fmt.Errorf("finding the home directory: %w (set HOME or SWITCHBOARD_HOME)", err)
		}
	}
	home := o.Home
	if home == "" {
		home = DefaultHome(lookup, homeDir)
	}
	cwd := o.Cwd
	if cwd == "" {
		wd, err := os.Getwd()
		if err != nil {
			return nil, fmt.Errorf("finding the working directory: %w", err)
		}
		cwd = wd
	}
	if abs, err := filepath.Abs(cwd); err == nil {
		cwd = abs
	}
	managedDir := o.ManagedDir
	if managedDir == "" {
		if v, _ := lookup("SWITCHBOARD_MANAGED_DIR"); v != "" {
			managedDir = v
		} else {
			managedDir = DefaultManagedDir
		}
	}

	l := &loader{
		lookup:          lookup,
		lastGood:        o.LastGood,
		res:             &Resolved{Servers: []ResolvedServer{}},
		cands:           make(map[string][]candidate),
		disabledBy:      make(map[string]string),
		userDisabledBy:  make(map[string]string),
		repoDisabled:    make(map[string]repoDisable),
		localEnabledSet: make(map[string]bool),
		localEnPos:      make(map[string]Position),
		localDisabled:   make(map[string]bool),
		allowed:         make(map[string]bool),
		denied:          make(map[string]bool),
		wsDisabled:      make(map[string]bool),
	}
	root := ""
	if o.Workspace != "" {
		root = o.Workspace
		if !filepath.IsAbs(root) {
			root = filepath.Join(cwd, root)
		}
		root = filepath.Clean(root)
		if !isDir(root) {
			l.res.Diagnostics = append(l.res.Diagnostics, Diagnostic{
				Severity: SeverityError, Position: Position{File: root},
				Message: "the workspace is not a directory",
				Fix:     "pass an existing directory to --workspace",
			})
		}
	} else {
		root = findRoot(cwd, home)
	}
	l.res.Workspace = root
	userFile := UserFile(home, homeDir)
	l.res.Files = Files{User: userFile, Local: userFile, Managed: ManagedFile(managedDir)}
	if root != "" {
		l.res.Files.Project = ProjectFile(root)
		l.res.Files.Workspace = WorkspaceFile(root)
	}
	l.managedFile = l.res.Files.Managed
	l.res.Files.Searched = []string{l.res.Files.Managed}
	if !o.StrictMCPConfig {
		l.res.Files.Searched = append(l.res.Files.Searched, upToFirstExisting(userFiles(home, homeDir))...)
		if root != "" {
			l.res.Files.Searched = append(l.res.Files.Searched, upToFirstExisting(projectFiles(root))...)
			l.res.Files.Searched = append(l.res.Files.Searched, l.res.Files.Workspace)
		}
	}

	l.loadManaged(l.res.Files.Managed)
	if !o.StrictMCPConfig {
		l.strayHomeFile(home)
		l.loadUser(userFile, root)
		if root != "" {
			l.loadProject(l.res.Files.Project)
			l.loadWorkspace(l.res.Files.Workspace)
		}
	}
	l.loadFlags(o.MCPConfigs, cwd)
	l.loadSession(o.Session)
	l.resolve()
	// Only the files this load used are kept: one the scope no longer
	// reads (its first choice was removed, the workspace root moved) must
	// not come back later as "last good" of a broken new file there.
	l.lastGood.retain(l.loaded)
	return l.res, nil
}

// strayHomeFile reports <home>/.mcp.json, which no scope reads: the user
// file is mcp.json, without the dot (.mcp.json is the name of a
// repository's file). Servers put there would otherwise be silently
// ignored. It is never read, neither as the user's file (which one would
// win is not clear when both exist) nor as a project's (home is not a
// workspace).
func (l *loader) strayHomeFile(home string) {
	stray := filepath.Join(home, ".mcp.json")
	if !exists(stray) {
		return
	}
	fix := "rename it to " + filepath.Join(home, "mcp.json")
	if exists(filepath.Join(home, "mcp.json")) {
		fix = "move its servers into " + filepath.Join(home, "mcp.json") + " and remove it"
	}
	l.res.Diagnostics = append(l.res.Diagnostics, Diagnostic{
		Severity: SeverityWarning, Position: Position{File: stray},
		Message: "not read: your own servers go in mcp.json (without the dot) beside it; .mcp.json is the name of a repository's file",
		Fix:     fix,
	})
}

// read returns a scope file's content. ok is false when there is nothing
// to parse: the file does not exist (not a problem unless required), or it
// cannot be read (an error diagnostic).
func (l *loader) read(path string, required bool, fixMissing string) ([]byte, bool) {
	fi, err := os.Stat(path)
	if err == nil && fi.IsDir() {
		l.fileDiag(path, "is a directory, not a JSON file",
			"remove or rename the directory: this path must be a JSON file")
		return nil, false
	}
	if err == nil {
		var data []byte
		if data, err = safefile.ReadFile(path); err == nil {
			return data, true
		}
	}
	if reason, fix, ok := safefile.Refused(err); ok {
		l.fileDiag(path, "cannot be read: "+reason, fix)
		return nil, false
	}
	if errors.Is(err, fs.ErrNotExist) {
		if _, lerr := os.Lstat(path); lerr == nil {
			l.fileDiag(path, "is a symbolic link to a file that does not exist",
				"point the link at a JSON file, or remove it")
		} else if required {
			l.fileDiag(path, "file not found", fixMissing)
		}
		return nil, false
	}
	var pe *fs.PathError
	if errors.As(err, &pe) {
		err = pe.Err
	}
	if errors.Is(err, fs.ErrPermission) {
		l.fileDiag(path, "cannot be read: permission denied",
			fmt.Sprintf("make it readable by you (e.g. chmod 644 %s)", path))
	} else {
		l.fileDiag(path, "cannot be read: "+err.Error(),
			"check that every directory on the path exists and the file is readable")
	}
	return nil, false
}

// load reads and parses a configuration file; nil when there is nothing
// to use. With a LastGood, a file that is there but cannot be read or
// parsed is replaced by its last good contents (see LastGood).
func (l *loader) load(path string, required bool, fixMissing string) *jsoncDoc {
	if l.loaded == nil {
		l.loaded = map[string]bool{}
	}
	l.loaded[path] = true
	data, ok := l.read(path, required, fixMissing)
	if ok && isBlank(data) {
		if good, kept := l.lastGood.get(path); kept && !isBlank(good) {
			// Empty where it last held something: most writers truncate
			// a file before they write it (`jq … > file`), and the reader
			// that comes in between must not stop every server it defines.
			// The reloader decides once the file settles (Unsettled).
			l.res.Files.Unsettled = append(l.res.Files.Unsettled, path)
			return l.keepLastGood(path, good, "is empty: its last good contents stay in effect while it may still be being written",
				"nothing, if a program is writing it; an empty file that stays so applies once it settles")
		}
	}
	if ok {
		if doc := l.parse(path, data); doc.obj != nil {
			l.lastGood.remember(path, data)
			return doc
		}
	} else if gone(path) {
		l.lastGood.forget(path)
		return nil
	}
	good, ok := l.lastGood.get(path)
	if !ok {
		return nil
	}
	return l.keepLastGood(path, good, "not loaded: its last good contents stay in effect until it is fixed",
		"fix the error reported for this file")
}

// keepLastGood loads the file at path from its last good contents, with a
// warning saying why.
func (l *loader) keepLastGood(path string, good []byte, msg, fix string) *jsoncDoc {
	l.res.Diagnostics = append(l.res.Diagnostics, Diagnostic{
		Severity: SeverityWarning, Position: Position{File: path}, Message: msg, Fix: fix,
	})
	doc, _ := parseJSONC(path, good)
	return doc
}

// isBlank reports whether a file's contents are white space only: the
// empty document parseJSONC reads as {}.
func isBlank(data []byte) bool { return len(bytes.TrimSpace(data)) == 0 }

func (l *loader) fileDiag(path, msg, fix string) {
	l.res.Diagnostics = append(l.res.Diagnostics, Diagnostic{
		Severity: SeverityError, Position: Position{File: path}, Message: msg, Fix: fix,
	})
}

// parse parses data and records the document's diagnostics.
func (l *loader) parse(label string, data []byte) *jsoncDoc {
	doc, diags := parseJSONC(label, data)
	l.res.Diagnostics = append(l.res.Diagnostics, diags...)
	return doc
}

// addServers records the definitions under obj's "mcpServers" and obj's
// "disabledMcpServers".
func (l *loader) addServers(doc *jsoncDoc, obj *hujson.Object, scope Scope, file, label string) {
	l.addServersExcept(doc, obj, scope, file, label, nil)
}

// addServersExcept is addServers leaving out the definitions of the names
// in skip (their problems included: they are not used). It returns the
// names it defined.
func (l *loader) addServersExcept(doc *jsoncDoc, obj *hujson.Object, scope Scope, file, label string, skip map[string]bool) []string {
	defs, diags := doc.servers(obj)
	l.res.Diagnostics = append(l.res.Diagnostics, diags...)
	var defined []string
	for _, d := range defs {
		if skip[d.Name] {
			continue
		}
		defined = append(defined, d.Name)
		l.res.Diagnostics = append(l.res.Diagnostics, d.Diags...)
		l.n++
		l.cands[d.Name] = append(l.cands[d.Name], candidate{def: d, scope: scope, file: file, label: label, order: l.n})
	}
	names, pos, _, diags := doc.nameList(obj, "disabledMcpServers")
	l.res.Diagnostics = append(l.res.Diagnostics, diags...)
	for _, name := range names {
		if _, ok := l.disabledBy[name]; !ok {
			l.disabledBy[name] = "disabledMcpServers in " + label
		}
		if _, ok := l.userDisabledBy[name]; !ok && scope != ScopeProject {
			l.userDisabledBy[name] = "disabledMcpServers in " + label
		}
		if _, ok := l.repoDisabled[name]; !ok && scope == ScopeProject {
			l.repoDisabled[name] = repoDisable{label, pos[name]}
		}
		if scope == ScopeLocal {
			l.localDisabled[name] = true // the user's own layer (loadLocalEnablement)
		}
	}
	return defined
}

func (l *loader) loadManaged(path string) {
	doc := l.load(path, false, "")
	if doc == nil {
		return
	}
	l.addServers(doc, doc.obj, ScopeManaged, path, path)
	l.toolFilters(doc, doc.obj, "the managed configuration ("+path+")", "")
	names, _, present, diags := doc.nameList(doc.obj, "allowedMcpServers")
	l.res.Diagnostics = append(l.res.Diagnostics, diags...)
	// A well-formed list, even empty, is a policy; a malformed one is
	// reported and only its readable names count.
	if (present && len(diags) == 0) || len(names) > 0 {
		l.allowPresent = true
	}
	for _, n := range names {
		l.allowed[n] = true
	}
	names, _, _, diags = doc.nameList(doc.obj, "deniedMcpServers")
	l.res.Diagnostics = append(l.res.Diagnostics, diags...)
	for _, n := range names {
		l.denied[n] = true
	}
}

func (l *loader) loadUser(path, root string) {
	doc := l.load(path, false, "")
	if doc == nil {
		return
	}
	l.addServers(doc, doc.obj, ScopeUser, path, path)
	l.toolFilters(doc, doc.obj, "your settings ("+path+")", "user")
	if root == "" {
		return
	}
	pm := lookupMember(doc.obj, "projects")
	if pm == nil || isNull(&pm.Value) {
		return
	}
	projects, ok := pm.Value.Value.(*hujson.Object)
	if !ok {
		l.res.Diagnostics = append(l.res.Diagnostics, Diagnostic{
			Severity: SeverityError, Position: doc.pos(pm.Value.StartOffset), Field: "projects",
			Message: "must be an object keyed by absolute workspace path, not " + kindName(&pm.Value),
			Fix:     `write "projects": { "/path/to/workspace": { "mcpServers": { … } } }`,
		})
		return
	}
	// Every entry for this directory is read, best first (see
	// MatchProjectKeys); a name in two of them comes from the best one.
	byKey := map[string]*hujson.ObjectMember{}
	for i := range projects.Members {
		byKey[memberName(&projects.Members[i])] = &projects.Members[i] // the later of a repeated key
	}
	keys := MatchProjectKeys(memberNames(projects), root)
	defined := map[string]bool{}
	for i, key := range keys {
		entry := byKey[key]
		if i > 0 {
			l.res.Diagnostics = append(l.res.Diagnostics, Diagnostic{
				Severity: SeverityWarning, Position: doc.pos(entry.Name.StartOffset), Field: "projects",
				Message: fmt.Sprintf("%q and %q are two entries for the same workspace (%s); the servers of both are used, those of %q winning for a name in both",
					keys[0], key, ProjectKey(root), keys[0]),
				Fix: fmt.Sprintf("move what %q holds into %q and delete it (switchboard edits %q)", key, keys[0], keys[0]),
			})
		}
		if isNull(&entry.Value) {
			continue
		}
		po, ok := entry.Value.Value.(*hujson.Object)
		if !ok {
			l.res.Diagnostics = append(l.res.Diagnostics, Diagnostic{
				Severity: SeverityError, Position: doc.pos(entry.Value.StartOffset), Field: "projects",
				Message: fmt.Sprintf("the entry for %s must be an object, not %s", key, kindName(&entry.Value)),
				Fix:     `write { "mcpServers": { … } }`,
			})
			continue
		}
		for _, name := range l.addServersExcept(doc, po, ScopeLocal, path, path, defined) {
			defined[name] = true
		}
		l.loadLocalEnablement(doc, po, path)
	}
}

// loadLocalEnablement reads the user's own "enabledMcpServers" of a local
// entry (its "disabledMcpServers" are read with its servers, which record
// them in localDisabled): the layer `mcp enable` and `mcp disable` write,
// which lives in the home directory and so may lift what any repository
// file disabled.
func (l *loader) loadLocalEnablement(doc *jsoncDoc, po *hujson.Object, path string) {
	l.localLabel = path
	l.toolFilters(doc, po, "your settings for this workspace ("+path+")", "local")
	enabled, enPos, _, diags := doc.nameList(po, "enabledMcpServers")
	l.res.Diagnostics = append(l.res.Diagnostics, diags...)
	for _, n := range enabled {
		if !l.localEnabledSet[n] {
			l.localEnabledSet[n] = true
			l.localEnabled = append(l.localEnabled, n)
			l.localEnPos[n] = enPos[n]
		}
	}
}

func (l *loader) loadProject(path string) {
	if doc := l.load(path, false, ""); doc != nil {
		l.addServers(doc, doc.obj, ScopeProject, path, path)
	}
}

func (l *loader) loadWorkspace(path string) {
	doc := l.load(path, false, "")
	if doc == nil {
		return
	}
	enabled, enPos, _, diags := doc.nameList(doc.obj, "enabledMcpServers")
	l.res.Diagnostics = append(l.res.Diagnostics, diags...)
	disabled, disPos, _, diags := doc.nameList(doc.obj, "disabledMcpServers")
	l.res.Diagnostics = append(l.res.Diagnostics, diags...)
	l.toolFilters(doc, doc.obj, workspaceLabel, "")
	l.wsEnabled, l.wsEnPos = enabled, enPos
	l.wsEnabledSet = make(map[string]bool)
	for _, n := range enabled {
		l.wsEnabledSet[n] = true
	}
	for _, n := range disabled {
		l.wsDisabled[n] = true
		if _, ok := l.repoDisabled[n]; !ok {
			l.repoDisabled[n] = repoDisable{workspaceLabel, disPos[n]}
		}
		if l.wsEnabledSet[n] {
			l.res.Diagnostics = append(l.res.Diagnostics, Diagnostic{
				Severity: SeverityWarning, Position: enPos[n], Server: n,
				Message: "both enabled and disabled in the workspace; it stays disabled",
				Fix:     "remove it from one of enabledMcpServers and disabledMcpServers",
			})
		}
	}
}

func (l *loader) loadFlags(configs []string, cwd string) {
	inline := 0
	for _, c := range configs {
		if strings.HasPrefix(strings.TrimSpace(c), "{") {
			inline++
		}
	}
	k := 0
	for _, c := range configs {
		var doc *jsoncDoc
		var file, label string
		if strings.HasPrefix(strings.TrimSpace(c), "{") {
			k++
			label = "--mcp-config"
			if inline > 1 {
				label = fmt.Sprintf("--mcp-config#%d", k)
			}
			doc = l.parse(label, []byte(c))
			if doc.obj == nil {
				doc = nil
			}
		} else {
			file = c
			if !filepath.IsAbs(file) {
				file = filepath.Join(cwd, file)
			}
			label = file
			l.res.Files.Searched = append(l.res.Files.Searched, file)
			doc = l.load(file, true, "check the path given to --mcp-config (a file, or inline JSON starting with '{')")
		}
		l.res.Files.Flags = append(l.res.Files.Flags, label)
		if doc == nil {
			continue
		}
		// A flag's "disabledMcpServers" alone is something to load: it
		// disables those servers for this run. A near miss such as
		// "servers" is warned of by itself, more precisely.
		if lookupMember(doc.obj, "mcpServers") == nil && lookupMember(doc.obj, "disabledMcpServers") == nil &&
			len(doc.serversMisspelt(doc.obj, false)) == 0 {
			l.res.Diagnostics = append(l.res.Diagnostics, Diagnostic{
				Severity: SeverityWarning, Position: doc.pos(0),
				Message: `no "mcpServers" object: nothing to load`,
				Fix:     `write { "mcpServers": { "name": { "command": "…" } } }`,
			})
		}
		l.addServers(doc, doc.obj, ScopeFlag, file, label)
	}
}

func (l *loader) loadSession(servers map[string]Server) {
	for _, name := range sortedKeys(servers) {
		s := servers[name]
		def := serverDef{Name: name, Server: s, hasCommand: s.Command != "", hasURL: s.URL != ""}
		diag := func(sev Severity, field, msg, fix string) {
			def.Diags = append(def.Diags, Diagnostic{Severity: sev, Server: name, Field: field, Message: msg, Fix: fix})
		}
		if !ValidName(name) {
			diag(SeverityError, "", "illegal server name: use 1 to 64 letters, digits, '_', '.' or '-'",
				"rename the server, e.g. "+fmt.Sprintf("%q", suggestName(name)))
		}
		if s.Type != "" {
			t, known := NormalizeType(string(s.Type))
			def.Server.Type = t
			if !known {
				diag(SeverityError, "type", fmt.Sprintf("unknown transport %q", s.Type), `use "stdio", "sse" or "http"`)
			}
		}
		for _, p := range checkDefinition(def.Server, def.hasCommand, def.hasURL) {
			diag(p.sev, p.field, p.msg, p.fix)
		}
		l.res.Diagnostics = append(l.res.Diagnostics, def.Diags...)
		l.n++
		l.cands[name] = append(l.cands[name], candidate{def: def, scope: ScopeSession, label: "the session", order: l.n})
	}
}

// resolve picks each name's winner and decides its availability.
func (l *loader) resolve() {
	for _, name := range sortedKeys(l.cands) {
		cs := l.cands[name]
		sort.SliceStable(cs, func(i, j int) bool {
			if rank[cs[i].scope] != rank[cs[j].scope] {
				return rank[cs[i].scope] > rank[cs[j].scope]
			}
			return cs[i].order > cs[j].order
		})
		win := cs[0]
		rs := ResolvedServer{
			Name:        name,
			Written:     win.def.Server,
			Scope:       win.scope,
			File:        win.file,
			Trust:       TrustFor(win.scope),
			Pos:         win.def.Pos,
			Diagnostics: append([]Diagnostic(nil), win.def.Diags...),
		}
		var extra []Diagnostic
		for _, c := range cs[1:] {
			if !containsScope(rs.Shadows, c.scope) {
				rs.Shadows = append(rs.Shadows, c.scope)
			}
			if win.scope == ScopeManaged {
				extra = append(extra, Diagnostic{
					Severity: SeverityWarning, Position: c.def.Pos, Server: name,
					Message: fmt.Sprintf("ignored: the managed configuration (%s) defines this server and cannot be overridden", l.managedFile),
					Fix:     "give your server another name to use it alongside the managed one",
				})
			}
		}

		var missing []string
		rs.Effective, missing = expandServer(rs.Written, l.lookup)
		rs.MissingEnv = missing
		if len(missing) > 0 {
			extra = append(extra, Diagnostic{
				Severity: SeverityWarning, Position: rs.Pos, Server: name,
				Message: "Missing environment variables: " + strings.Join(missing, ", "),
				Fix:     "set them in the environment, or give a default with ${VAR:-default}",
			})
		}
		var secretProblems []secretProblem
		rs.Secrets, secretProblems = serverSecretRefs(rs.Written)
		for _, p := range secretProblems {
			extra = append(extra, Diagnostic{
				Severity: SeverityError, Position: rs.Pos, Server: name, Field: p.field,
				Message: p.msg, Fix: p.fix,
			})
		}
		// A url built from ${VAR} can only be checked once expanded. One
		// that an unset variable leaves a placeholder in is no address to
		// dial (nor to retry): the server is invalid, naming the variable.
		// One that holds a secret is checked when the secret is resolved
		// (ResolveSecrets).
		if t := rs.Effective.Type; (t == TypeHTTP || t == TypeSSE) && strings.Contains(rs.Written.URL, "${") {
			pos := win.def.urlValuePos
			if pos.File == "" && pos.Line == 0 {
				pos = rs.Pos
			}
			_, urlMissing := Expand(rs.Written.URL, l.lookup)
			switch {
			case len(urlMissing) > 0:
				extra = append(extra, unsetURLVars(pos, name, urlMissing))
			case !strings.Contains(rs.Effective.URL, secretOpen):
				if msg := checkURL(rs.Effective.URL); msg != "" {
					extra = append(extra, Diagnostic{
						Severity: SeverityError, Position: pos, Server: name, Field: "url",
						Message: "after ${VAR} expansion, " + msg,
						Fix:     "set the variables it uses to form a full http(s) address",
					})
				}
			}
		}
		rs.Diagnostics = append(rs.Diagnostics, extra...)
		l.res.Diagnostics = append(l.res.Diagnostics, extra...)
		rs.Availability, rs.DisabledReason = l.availability(&rs, win)
		if d, ok := l.repoCannotDisable(&rs, win); ok {
			rs.Diagnostics = append(rs.Diagnostics, d)
			l.res.Diagnostics = append(l.res.Diagnostics, d)
		}
		rs.Tools = l.serverFilter(&rs, win.label)
		l.res.Servers = append(l.res.Servers, rs)
	}

	// Names the workspace (the user's local layer first) enables but
	// nothing defines.
	type enabledName struct {
		name, file, label string
		pos               Position
	}
	var wanted []enabledName
	for _, name := range l.localEnabled {
		wanted = append(wanted, enabledName{name, l.localLabel, l.localLabel, l.localEnPos[name]})
	}
	for _, name := range l.wsEnabled {
		wanted = append(wanted, enabledName{name, l.res.Files.Workspace, workspaceLabel, l.wsEnPos[name]})
	}
	listed := map[string]bool{}
	for _, w := range wanted {
		if _, defined := l.cands[w.name]; defined || listed[w.name] {
			continue
		}
		listed[w.name] = true
		d := Diagnostic{
			Severity: SeverityWarning, Position: w.pos, Server: w.name, Undefined: true,
			Message: fmt.Sprintf("enabled in the workspace (%s) but no configuration defines it", w.label),
			Fix:     "define it in a configuration file, or remove it from enabledMcpServers",
		}
		l.res.Servers = append(l.res.Servers, ResolvedServer{
			Name: w.name, File: w.file, Pos: w.pos,
			Availability: Missing, Diagnostics: []Diagnostic{d},
		})
		l.res.Diagnostics = append(l.res.Diagnostics, d)
	}
	sort.SliceStable(l.res.Servers, func(i, j int) bool { return l.res.Servers[i].Name < l.res.Servers[j].Name })
}

// unsetURLVars is the error of a url (at pos, of server name) that uses
// the variables missing, unset and without a default.
func unsetURLVars(pos Position, name string, missing []string) Diagnostic {
	refs := make([]string, len(missing))
	for i, v := range missing {
		refs[i] = "${" + v + "}"
	}
	which := "which is"
	if len(missing) > 1 {
		which = "which are"
	}
	return Diagnostic{
		Severity: SeverityError, Position: pos, Server: name, Field: "url",
		Message: fmt.Sprintf("uses %s, %s not set, so it names no address to connect to", strings.Join(refs, ", "), which),
		Fix: fmt.Sprintf("set %s in the environment Switchboard runs in, or give a default: ${%s:-https://…}",
			strings.Join(missing, " and "), missing[0]),
	}
}

// availability decides, in this order: an invalid definition is Invalid;
// managed policy (denylist, then allowlist, which managed servers need not
// be on) disables; a managed server is then switched off only by its own
// "enabled": false or by the user's own lists (managedAvailability); for
// any other server, the user's local layer for this workspace (in the
// user file; its disable beats its enable); then the repository's
// workspace file, whose disable always counts but whose enable lifts only
// what the repository itself disabled (its own definition's "enabled":
// false, its own disabledMcpServers), never what the user switched off;
// then the definition's own "enabled": false; then any disabledMcpServers
// list.
func (l *loader) availability(rs *ResolvedServer, win candidate) (Availability, string) {
	name := rs.Name
	userOff := (!rs.Written.IsEnabled() && win.scope != ScopeProject) || l.userDisabledBy[name] != ""
	switch {
	case rs.Err() != nil:
		return Invalid, ""
	case l.denied[name]:
		return Disabled, "managed policy"
	case l.allowPresent && !l.allowed[name] && win.scope != ScopeManaged:
		return Disabled, "managed policy"
	case win.scope == ScopeManaged:
		return l.managedAvailability(rs, win)
	case l.localDisabled[name]:
		return Disabled, "disabledMcpServers in " + l.localLabel
	case l.localEnabledSet[name]:
		return Available, ""
	case l.wsDisabled[name]:
		return Disabled, "disabled in workspace (" + workspaceLabel + ")"
	case l.wsEnabledSet[name] && !userOff:
		return Available, ""
	case !rs.Written.IsEnabled():
		return Disabled, "enabled: false in " + win.label
	case l.disabledBy[name] != "":
		return Disabled, l.disabledBy[name]
	}
	return Available, ""
}

// managedAvailability decides for a server the managed configuration
// defines: no other scope may override it, so no file a repository
// commits (its .mcp.json's or its workspace file's disabledMcpServers)
// switches it off. The administrator can (its "enabled": false, the
// managed file's own disabledMcpServers), and so can the user, for
// themselves: `mcp disable` (the local layer) and the lists of the files
// in their home or on their command line.
func (l *loader) managedAvailability(rs *ResolvedServer, win candidate) (Availability, string) {
	name := rs.Name
	switch {
	case l.localDisabled[name]:
		return Disabled, "disabledMcpServers in " + l.localLabel
	case !rs.Written.IsEnabled():
		return Disabled, "enabled: false in " + win.label
	case l.userDisabledBy[name] != "":
		return Disabled, l.userDisabledBy[name]
	}
	return Available, ""
}

// repoCannotDisable is the warning for a managed server that a repository
// file lists as disabled: the list is ignored, and the person reading
// `status` or `doctor` should know why the server still runs.
func (l *loader) repoCannotDisable(rs *ResolvedServer, win candidate) (Diagnostic, bool) {
	if win.scope != ScopeManaged {
		return Diagnostic{}, false
	}
	rd, ok := l.repoDisabled[rs.Name]
	if !ok {
		return Diagnostic{}, false
	}
	return Diagnostic{
		Severity: SeverityWarning, Position: rd.pos, Server: rs.Name,
		Message: fmt.Sprintf("ignored: disabledMcpServers in %s cannot switch off a server of the managed configuration (%s)", rd.label, l.managedFile),
		Fix:     "to switch it off for yourself in this workspace: switchboard mcp disable " + rs.Name,
	}, true
}

// repoDisable is where a repository file lists a name as disabled.
type repoDisable struct {
	label string
	pos   Position
}

func containsScope(ss []Scope, s Scope) bool {
	for _, x := range ss {
		if x == s {
			return true
		}
	}
	return false
}

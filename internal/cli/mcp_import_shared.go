package cli

import (
	"path/filepath"
	"strings"

	"github.com/tailscale/hujson"
)

// The editor variables that name a path of this machine: VS Code's and
// Cursor's workspace folder (workspaceRoot is its older name) and home.
const (
	varWorkspaceFolder = "${workspaceFolder}"
	varWorkspaceRoot   = "${workspaceRoot}"
	varUserHome        = "${userHome}"
)

// usesWorkspaceVar reports whether s names the editor's workspace folder.
func usesWorkspaceVar(s string) bool {
	return strings.Contains(s, varWorkspaceFolder) || strings.Contains(s, varWorkspaceRoot)
}

// sharedImport translates def for project scope, the repository's
// .mcp.json that every clone shares: no path of this machine goes in.
// ${userHome} becomes ${HOME}, which Switchboard expands on each machine;
// ${workspaceFolder} becomes a path relative to the server's working
// directory, which is the workspace ("cwd": ".", added when the definition
// has no cwd; a relative cwd is taken from the workspace). The rest is
// translateImport's. A definition these cannot say portably (the workspace
// in a url or header, a cwd outside the workspace, the home in a cwd, which
// is not expanded) is skipped with the reason.
func sharedImport(f *Factory, def []byte, root string) (out []byte, notes []string, skip string) {
	def, literal := machinePathsAsVars(def, root, f.HomeDir)
	portable, notes, skip := portablePaths(def)
	if skip != "" {
		if literal {
			skip = "this machine's paths (the workspace's, your home's) were read as ${workspaceFolder} and ${userHome}, and it " + skip
		}
		return nil, nil, skip
	}
	if literal {
		notes = append([]string{"this machine's paths (the workspace's, your home's) were read as ${workspaceFolder} and ${userHome}, as if written so:"}, notes...)
	}
	out, more, skip := translateImport(f, portable, root)
	return out, append(notes, more...), skip
}

// machinePathsAsVars writes the workspace root and the home directory,
// where def's command, args, env or cwd name them as a path (the whole
// value, or after =, : or a space, and followed by a separator or the
// end), as ${workspaceFolder} and ${userHome}, for portablePaths to make
// portable: a definition of the user's own file names this machine's
// paths outright. It reports whether it changed any.
func machinePathsAsVars(def []byte, root, home string) ([]byte, bool) {
	type swap struct{ path, v string }
	var swaps []swap
	// The workspace first: it may be inside the home directory.
	for _, s := range []swap{{root, varWorkspaceFolder}, {home, varUserHome}} {
		if p := strings.TrimRight(s.path, `/\`); len(p) > 1 && strings.Contains(string(def), jsonStringBody(p)) {
			swaps = append(swaps, swap{p, s.v})
		}
	}
	if len(swaps) == 0 {
		return def, false
	}
	v, obj, ok := parseObject(def)
	if !ok {
		return def, false
	}
	changed := false
	replace := func(s string) string {
		for _, sw := range swaps {
			var b strings.Builder
			for {
				i := strings.Index(s, sw.path)
				if i < 0 {
					break
				}
				end := i + len(sw.path)
				before := i == 0 || strings.ContainsRune("=: ,;", rune(s[i-1]))
				after := end == len(s) || s[end] == '/' || s[end] == filepath.Separator
				b.WriteString(s[:i])
				if before && after {
					b.WriteString(sw.v)
					changed = true
				} else {
					b.WriteString(sw.path)
				}
				s = s[end:]
			}
			b.WriteString(s)
			s = b.String()
		}
		return s
	}
	for i := range obj.Members {
		switch memberName(&obj.Members[i]) {
		case "command", "args", "env", "cwd":
			eachString(&obj.Members[i].Value, replace)
		}
	}
	if !changed {
		return def, false
	}
	return v.Pack(), true
}

// portablePaths rewrites the editor's path variables of def as sharedImport
// says, leaving every other variable to translateImport.
func portablePaths(def []byte) (out []byte, notes []string, skip string) {
	text := string(def)
	if !strings.Contains(text, varWorkspaceFolder) && !strings.Contains(text, varWorkspaceRoot) && !strings.Contains(text, varUserHome) {
		return def, nil, ""
	}
	v, obj, ok := parseObject(def)
	if !ok {
		return def, nil, ""
	}
	usesWorkspace := func(s string) bool {
		return strings.Contains(s, varWorkspaceFolder) || strings.Contains(s, varWorkspaceRoot)
	}
	withWorkspace := func(s, rel string) string {
		return strings.NewReplacer(varWorkspaceFolder, rel, varWorkspaceRoot, rel).Replace(s)
	}

	// The working directory first: the other paths are relative to it.
	// back is the way from it to the workspace, "" when there is none.
	back, hasCwd, changedWorkspace, changedHome := ".", false, false, false
	for i := range obj.Members {
		m := &obj.Members[i]
		if memberName(m) != "cwd" {
			continue
		}
		hasCwd = true
		lit, ok := m.Value.Value.(hujson.Literal)
		if !ok || lit.Kind() != '"' {
			return def, nil, "" // checkImport says what is wrong with it
		}
		cwd := lit.String()
		if strings.Contains(cwd, varUserHome) {
			return nil, nil, `uses ${userHome} in its cwd, which Switchboard does not expand, and a project's .mcp.json is shared, so it cannot hold your home's path; add it by hand`
		}
		if usesWorkspace(cwd) {
			cwd = withWorkspace(cwd, ".")
			m.Value.Value = hujson.String(cwd)
			changedWorkspace = true
		}
		back = ""
		if c := filepath.Clean(cwd); !strings.Contains(c, "${") && !filepath.IsAbs(c) && c != ".." && !strings.HasPrefix(c, ".."+string(filepath.Separator)) && !strings.HasPrefix(c, "../") {
			back = "."
			if c != "." {
				back = strings.TrimSuffix(strings.Repeat("../", len(strings.Split(filepath.ToSlash(c), "/"))), "/")
			}
		}
	}

	for i := range obj.Members {
		m := &obj.Members[i]
		field := memberName(m)
		if field == "cwd" {
			continue
		}
		skip = ""
		eachString(&m.Value, func(s string) string {
			if usesWorkspace(s) {
				switch {
				case field == "url" || field == "headers":
					skip = `uses ${workspaceFolder} in its ` + field + `, where a path relative to the workspace means nothing, and a project's .mcp.json is shared, so it cannot hold this machine's path; add it by hand`
					return s
				case back == "":
					skip = `uses ${workspaceFolder} with a cwd that is not inside the workspace, so no path relative to it can name the workspace, and a project's .mcp.json is shared, so it cannot hold this machine's path; add it by hand`
					return s
				}
				s = withWorkspace(s, back)
				changedWorkspace = true
			}
			if strings.Contains(s, varUserHome) {
				s = strings.ReplaceAll(s, varUserHome, "${HOME}")
				changedHome = true
			}
			return s
		})
		if skip != "" {
			return nil, nil, skip
		}
	}
	if changedWorkspace {
		if hasCwd {
			notes = append(notes, "${workspaceFolder} became a path relative to its cwd, which is taken from the workspace: the shared .mcp.json holds no path of this machine")
		} else {
			obj.Members = append(obj.Members, hujson.ObjectMember{
				Name:  hujson.Value{Value: hujson.String("cwd")},
				Value: hujson.Value{Value: hujson.String(".")},
			})
			notes = append(notes, `${workspaceFolder} became a path relative to the workspace, where the server starts ("cwd": "."): the shared .mcp.json holds no path of this machine`)
		}
	}
	if changedHome {
		notes = append(notes, "${userHome} became ${HOME}, which Switchboard expands on each machine")
	}
	return v.Pack(), notes, ""
}

// parseObject parses a definition to rewrite it: obj is its top level,
// which v.Pack writes back changed; ok is false when it does not parse or
// is not an object (translateImport says why, and the rewrites leave it).
func parseObject(def []byte) (v hujson.Value, obj *hujson.Object, ok bool) {
	v, err := hujson.Parse(def)
	if err != nil {
		return v, nil, false
	}
	obj, ok = v.Value.(*hujson.Object)
	return v, obj, ok
}

// memberName is the name of an object member, "" when it is not a string.
func memberName(m *hujson.ObjectMember) string {
	if lit, ok := m.Name.Value.(hujson.Literal); ok && lit.Kind() == '"' {
		return lit.String()
	}
	return ""
}

// eachString replaces every string value under v (not object keys) with
// fn's answer.
func eachString(v *hujson.Value, fn func(string) string) {
	switch x := v.Value.(type) {
	case *hujson.Object:
		for i := range x.Members {
			eachString(&x.Members[i].Value, fn)
		}
	case *hujson.Array:
		for i := range x.Elements {
			eachString(&x.Elements[i], fn)
		}
	case hujson.Literal:
		if x.Kind() == '"' {
			if s := x.String(); s != "" {
				if t := fn(s); t != s {
					v.Value = hujson.String(t)
				}
			}
		}
	}
}

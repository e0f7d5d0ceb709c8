package cli

import (
	"encoding/json"
	"fmt"
	"path/filepath"
	"slices"

	"github.com/tailscale/hujson"

	"github.com/switchboard-mcp/switchboard/internal/lazyre"
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

// geminiUserConfig is Gemini CLI's user settings file; the project's is
// <workspace>/.gemini/settings.json.
func geminiUserConfig(f *Factory) string {
	return filepath.Join(f.HomeDir, ".gemini", "settings.json")
}

// geminiBareVar matches Gemini's $NAME, which it expands as ${NAME}; only
// names Switchboard can expand are taken ($1 in a shell script stays).
var geminiBareVar = lazyre.New(`\$([A-Z_][A-Z0-9_]*)\b`)

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
		// $NAME, which Gemini expands, is ${NAME} in Switchboard.
		changed := false
		for i := range obj.Members {
			switch memberName(&obj.Members[i]) {
			case "command", "args", "env", "cwd", "url", "headers":
				eachString(&obj.Members[i].Value, func(s string) string {
					t := geminiBareVar().ReplaceAllString(s, "$${$1}")
					changed = changed || t != s
					return t
				})
			}
		}
		if changed {
			notes = append(notes, "Gemini's $NAME became ${NAME}")
		}
	}
	return v.Pack(), notes, ""
}

// geminiOff returns, for a Gemini settings file, why Gemini does not
// start a server of that name: its "mcp.excluded" lists it, or its
// "mcp.allowed" does not; "" when it starts it.
func geminiOff(v hujson.Value) func(name string) string {
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
	return func(name string) string {
		switch {
		case slices.Contains(excluded, name):
			return `Gemini's "mcp.excluded" lists it`
		case hasAllowed && !slices.Contains(allowed, name):
			return `Gemini's "mcp.allowed" does not list it`
		}
		return ""
	}
}

package config

import (
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"strings"

	"github.com/switchboard-mcp/switchboard/internal/safefile"
	"github.com/tailscale/hujson"
)

// Settings is a settings document (`--settings`, settings.json): the JSON
// object as decoded by encoding/json, with typed accessors for the keys
// Switchboard reads. Being a map, it can be indexed and ranged directly.
type Settings map[string]any

// settingsFix is the fix line of every --settings error.
const settingsFix = `pass a JSON object, e.g. --settings '{"enableAllProjectMcpServers": true}', or the path of a file holding one`

// LoadSettings reads a --settings value: inline JSON when it starts
// with '{' (after white space), else the path of a file. Both may be JSONC.
// The top level must be an object, and the keys Switchboard knows must
// have the right types (see [Settings.Validate]). Errors are one line
// naming the input, with line:col for syntax errors, and a fix.
func LoadSettings(arg string) (Settings, error) {
	if strings.HasPrefix(strings.TrimSpace(arg), "{") {
		s, err := parseSettings([]byte(arg))
		if err != nil {
			return nil, fmt.Errorf("--settings %s: %w (fix: %s)", abbreviate(arg), err, settingsFix)
		}
		return s, nil
	}
	data, err := safefile.ReadFile(arg)
	if reason, fix, ok := safefile.Refused(err); ok {
		return nil, fmt.Errorf("--settings %s: cannot read the file: %s (fix: %s)", arg, reason, fix)
	}
	if err != nil {
		var pe *os.PathError
		if errors.As(err, &pe) {
			err = pe.Err
		}
		return nil, fmt.Errorf("--settings %s: cannot read the file: %v (fix: %s)", arg, err, settingsFix)
	}
	s, err := parseSettings(data)
	if err != nil {
		return nil, fmt.Errorf("--settings %s: %w (fix: %s)", arg, err, settingsFix)
	}
	return s, nil
}

// ParseSettings parses a settings document (JSONC) whose errors name
// label (a file name), as "label: line L, column C: message (fix: …)".
func ParseSettings(label string, data []byte) (Settings, error) {
	s, err := parseSettings(data)
	if err != nil {
		return nil, fmt.Errorf("%s: %w (fix: %s)", label, err, settingsFix)
	}
	return s, nil
}

// parseSettings returns errors without the input's name or a fix: the
// callers add them.
func parseSettings(data []byte) (Settings, error) {
	doc, diags := parseJSONC("", data)
	if len(diags) > 0 {
		d := diags[0]
		return nil, fmt.Errorf("line %d, column %d: %s", d.Line, d.Col, d.Message)
	}
	v := hujson.Value{Value: doc.obj}
	v.Standardize()
	s := Settings{}
	if err := json.Unmarshal(v.Pack(), &s); err != nil {
		return nil, err
	}
	if err := s.Validate(); err != nil {
		return nil, err
	}
	return s, nil
}

// Validate checks the types of the keys Switchboard reads:
// enableAllProjectMcpServers (bool), enabledMcpjsonServers and
// disabledMcpjsonServers (arrays of strings), toolChanges (ask, notify or
// accept) and permissions (an object whose allow, ask and deny are arrays
// of strings). Other keys are kept and not checked here ("callHooks" is
// checked by [SettingsStack.CallHooks], which says where).
func (s Settings) Validate() error {
	if v, ok := s["enableAllProjectMcpServers"]; ok {
		if _, isBool := v.(bool); !isBool {
			return errors.New(`"enableAllProjectMcpServers" must be true or false`)
		}
	}
	for _, k := range []string{"enabledMcpjsonServers", "disabledMcpjsonServers"} {
		if v, ok := s[k]; ok {
			if _, good := stringList(v); !good {
				return fmt.Errorf("%q must be an array of server names", k)
			}
		}
	}
	if v, ok := s[ToolChangesKey]; ok && !validToolChanges(v) {
		return errors.New(`"toolChanges" must be "ask", "notify" or "accept"`)
	}
	if v, ok := s["permissions"]; ok {
		p, isObj := v.(map[string]any)
		if !isObj {
			return errors.New(`"permissions" must be an object like {"allow": [], "ask": [], "deny": []}`)
		}
		for _, k := range []string{"allow", "ask", "deny"} {
			if rv, ok := p[k]; ok {
				if _, good := stringList(rv); !good {
					return fmt.Errorf(`"permissions.%s" must be an array of rule strings such as "mcp__server__tool"`, k)
				}
			}
		}
	}
	return nil
}

// EnableAllProjectMcpServers reports "enableAllProjectMcpServers": true.
func (s Settings) EnableAllProjectMcpServers() bool {
	b, _ := s["enableAllProjectMcpServers"].(bool)
	return b
}

// EnabledMcpjsonServers returns "enabledMcpjsonServers" (project servers
// approved in advance), or nil.
func (s Settings) EnabledMcpjsonServers() []string {
	l, _ := stringList(s["enabledMcpjsonServers"])
	return l
}

// Permissions returns the "permissions" rule lists (see package policy),
// each nil when
// absent.
func (s Settings) Permissions() (allow, ask, deny []string) {
	p, _ := s["permissions"].(map[string]any)
	allow, _ = stringList(p["allow"])
	ask, _ = stringList(p["ask"])
	deny, _ = stringList(p["deny"])
	return allow, ask, deny
}

// stringList converts a decoded JSON array of strings. nil is a valid,
// empty list.
func stringList(v any) ([]string, bool) {
	if v == nil {
		return nil, true
	}
	arr, ok := v.([]any)
	if !ok {
		return nil, false
	}
	out := make([]string, 0, len(arr))
	for _, e := range arr {
		s, ok := e.(string)
		if !ok {
			return nil, false
		}
		out = append(out, s)
	}
	return out, true
}

// abbreviate shortens inline JSON for an error message.
func abbreviate(s string) string {
	s = strings.Join(strings.Fields(s), " ")
	if r := []rune(s); len(r) > 40 {
		s = string(r[:37]) + "..."
	}
	return "'" + s + "'"
}

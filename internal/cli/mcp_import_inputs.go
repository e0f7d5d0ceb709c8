package cli

import (
	"encoding/json"
	"fmt"
	"slices"
	"strings"

	"github.com/tailscale/hujson"
)

// vscodeInput is one of the "inputs" of a VS Code mcp.json: a value VS
// Code prompts for the first time a server needs it, and keeps.
type vscodeInput struct {
	ID       string `json:"id"`
	Type     string `json:"type"` // promptString, pickString
	Password bool   `json:"password"`
	Default  string `json:"default"`
}

// vscodeInputs are the declared inputs of a VS Code file, by id: its
// "inputs", or in a settings.json "mcp": {"inputs"}.
func vscodeInputs(v hujson.Value) map[string]vscodeInput {
	out := map[string]vscodeInput{}
	for _, ptr := range []string{"/inputs", "/mcp/inputs"} {
		iv := v.Find(ptr)
		if iv == nil {
			continue
		}
		std := iv.Clone()
		std.Standardize()
		var list []vscodeInput
		if json.Unmarshal(std.Pack(), &list) != nil {
			continue
		}
		for _, in := range list {
			if in.ID != "" {
				out[in.ID] = in
			}
		}
	}
	return out
}

// resolveInputs replaces in def each ${input:ID} that is not a secret: an
// input declared without "password": true holds a setting (a project id,
// a region), not a credential. One with a default becomes that default,
// written out; one without becomes ${ID} in the environment's spelling
// (${PROJECT_ID}), which Switchboard expands when the server starts, and
// which, unlike a secret, may stand in args and cwd too. A password input
// stays for inputsAsSecrets, and one the file does not declare for
// undeclaredInputs to refuse. The notes say what each became.
func resolveInputs(def []byte, inputs map[string]vscodeInput) ([]byte, []string) {
	if !strings.Contains(string(def), "${input:") || len(inputs) == 0 {
		return def, nil
	}
	v, err := hujson.Parse(def)
	if err != nil {
		return def, nil
	}
	var notes []string
	said := map[string]bool{}
	eachString(&v, func(s string) string {
		return placeholderRE().ReplaceAllStringFunc(s, func(m string) string {
			id, ok := strings.CutPrefix(m[2:len(m)-1], "input:")
			in, declared := inputs[id]
			if !ok || !declared || in.Password {
				return m
			}
			var to, note string
			if in.Default != "" {
				to = in.Default
				note = fmt.Sprintf("${input:%s} (not a password) became its default %q, written out: if you gave VS Code another value, change it with switchboard mcp add-json", id, in.Default)
			} else {
				name := envVarName(varWord(id))
				to = "${" + name + "}"
				note = fmt.Sprintf("${input:%s} (not a password) became %s: set %s in your environment before the server starts", id, to, name)
			}
			if !said[id] {
				said[id] = true
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

// undeclaredInputs are the ids of def's ${input:ID} that inputs does not
// declare, in order. VS Code stops at such a server ("Undefined input
// variable"), and nothing says whether it holds a password or a setting.
func undeclaredInputs(def []byte, inputs map[string]vscodeInput) []string {
	if !strings.Contains(string(def), "${input:") {
		return nil
	}
	var ids []string
	for _, m := range placeholderRE().FindAllStringSubmatch(string(def), -1) {
		id, ok := strings.CutPrefix(m[1], "input:")
		if _, declared := inputs[id]; ok && !declared && !slices.Contains(ids, id) {
			ids = append(ids, id)
		}
	}
	return ids
}

// undeclaredReason is why a server with the undeclared inputs ids is
// skipped.
func undeclaredReason(ids []string) string {
	refs := make([]string, len(ids))
	for i, id := range ids {
		refs[i] = "${input:" + id + "}"
	}
	return fmt.Sprintf("uses %s, which the file's \"inputs\" do not declare, so nothing says whether it is a password or a setting "+
		"(VS Code stops there too: \"Undefined input variable\"); declare it in \"inputs\" and import again, "+
		"or add the server with switchboard mcp add-json", strings.Join(refs, ", "))
}

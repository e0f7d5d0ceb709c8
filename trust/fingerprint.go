package trust

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"slices"
	"sort"
	"unicode/utf8"

	"github.com/switchboard-mcp/switchboard/config"
)

// encodingVersion is the first element of every encoding: a future change
// of what is fingerprinted changes every fingerprint (and so re-asks)
// instead of silently comparing unlike things.
const encodingVersion = "switchboard-launch-v1"

// Fields returns the names [Verdict.Changed] uses, in the order they are
// encoded and reported. The slice is a fresh copy: changing it cannot
// change what a fingerprint covers.
func Fields() []string { return slices.Clone(fields) }

// fields is Fields' list, unexported so that no importer can shorten what
// an approval covers.
var fields = []string{"type", "command", "args", "env", "cwd", "url", "headers", "headersHelper", "env_passthrough", "sandbox"}

// Encode returns the structural encoding of what def would run, as written
// (before ${VAR} expansion): the canonical JSON of
//
//	["switchboard-launch-v1", type, command, [args…], [[envKey, envValue]…],
//	 cwd, url, [[headerKey, headerValue]…], headersHelper, [env_passthrough…]]
//
// type is inferred when empty ([config.InferType]); env and headers are
// sorted by key; env_passthrough is sorted and deduplicated (its order
// means nothing; it decides which of the user's variables a repo server
// sees, so it is part of what is approved). A written "sandbox" field
// (docs/security.md, Sandbox) is appended, canonical (false, true, or {"fs": {"read",
// "write"}, "network"} with the lists as written); a definition without
// one encodes exactly as before the field existed, so approvals given
// then stay valid: its sandbox is the scope's default, which the user's
// settings decide, never the repository. Absent and empty lists or maps
// encode the same, since they run the same. Every string is a JSON string,
// so no separator can be forged: {"a":"b=c"} and {"a=b":"c"} encode as
// [["a","b=c"]] and [["a=b","c"]].
func Encode(def config.Server) []byte {
	b, err := json.Marshal(encoding(def))
	if err != nil {
		panic("trust: encoding a server definition: " + err.Error()) // strings, slices and arrays only
	}
	return b
}

// encoding is the value Encode marshals.
func encoding(def config.Server) []any {
	f := fieldValues(def)
	out := make([]any, 0, len(fields)+1)
	out = append(out, encodingVersion)
	for _, name := range fields {
		v, ok := f[name]
		if !ok {
			continue // "sandbox" not written
		}
		out = append(out, v)
	}
	return out
}

// fieldValues maps each of fields to its canonical value.
func fieldValues(def config.Server) map[string]any {
	pass := append([]string(nil), def.EnvPassthrough...)
	sort.Strings(pass)
	m := map[string]any{
		"type":            str(string(config.InferType(def))),
		"command":         str(def.Command),
		"args":            strs(def.Args),
		"env":             pairs(def.Env),
		"cwd":             str(def.Cwd),
		"url":             str(def.URL),
		"headers":         pairs(def.Headers),
		"headersHelper":   str(def.HeadersHelper),
		"env_passthrough": strs(dedupe(pass)),
	}
	if sb := def.Sandbox; sb != nil {
		m["sandbox"] = sandboxValue(sb)
	}
	return m
}

// sandboxValue is a written sandbox's canonical value.
func sandboxValue(sb *config.Sandbox) any {
	if sb.Off {
		return false
	}
	var fs any // null: the default view
	if sb.FS != nil {
		fs = map[string]any{"read": strs(sb.FS.Read), "write": strs(sb.FS.Write)}
	}
	var net any = false
	switch {
	case sb.Network.All:
		net = true
	case len(sb.Network.Allow) > 0:
		net = strs(sb.Network.Allow)
	}
	return map[string]any{"fs": fs, "network": net}
}

// fieldDigests returns the SHA-256 (hex) of each field's canonical JSON:
// what the store keeps to say which fields changed, without keeping
// values that may be secrets.
func fieldDigests(def config.Server) map[string]string {
	out := make(map[string]string, len(fields))
	for name, v := range fieldValues(def) {
		b, _ := json.Marshal(v)
		sum := sha256.Sum256(b)
		out[name] = hex.EncodeToString(sum[:])
	}
	return out
}

// Fingerprint is "sha256:" and the hex SHA-256 of [Encode](def). Two
// definitions have the same fingerprint exactly when they would run the
// same program the same way.
func Fingerprint(def config.Server) string {
	sum := sha256.Sum256(Encode(def))
	return "sha256:" + hex.EncodeToString(sum[:])
}

// str is a string's canonical value. encoding/json would turn every
// invalid UTF-8 byte into U+FFFD, making "\xff" and "\xfe" equal; such a
// string is encoded as ["bytes", hex] instead, which no JSON string equals.
func str(s string) any {
	if utf8.ValidString(s) {
		return s
	}
	return []string{"bytes", hex.EncodeToString([]byte(s))}
}

func strs(l []string) []any {
	out := make([]any, len(l))
	for i, s := range l {
		out[i] = str(s)
	}
	return out
}

// pairs returns m as [[key, value]…] sorted by key (never nil).
func pairs(m map[string]string) [][2]any {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	out := make([][2]any, 0, len(m))
	for _, k := range keys {
		out = append(out, [2]any{str(k), str(m[k])})
	}
	return out
}

func dedupe(sorted []string) []string {
	out := sorted[:0]
	for i, s := range sorted {
		if i == 0 || s != sorted[i-1] {
			out = append(out, s)
		}
	}
	return out
}

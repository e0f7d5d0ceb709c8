package config

import (
	"errors"
	"fmt"
	"os"
	"runtime"
	"strconv"
	"strings"
)

// A secret reference, ${secret:NAME}, stands for a value kept in the
// user's credential store (docs/configuration.md, Secret references). It
// is expanded only in env values, header values and the url: a value in
// a command line is visible to every user of the machine (ps), and a cwd
// or headersHelper is no place for a credential. Load leaves every
// reference as written in Effective and records the names a server uses
// in ResolvedServer.Secrets; the runtime resolves them at spawn or
// connect time through [ResolveSecrets], with a lookup it injects (this
// package never reads a credential store). A reference is never looked
// up for a server that is not allowed to start.

// secretOpen is how every secret reference starts.
const secretOpen = "${secret:"

// MaxSecretName is the longest secret name.
const MaxSecretName = 128

// SecretNameProblem returns why name cannot be a secret's name, or "" when
// it can: 1 to MaxSecretName letters, digits, '_', '.' or '-'.
func SecretNameProblem(name string) string {
	switch {
	case name == "":
		return "is empty"
	case len(name) > MaxSecretName:
		return fmt.Sprintf("is longer than %d characters", MaxSecretName)
	}
	for i := 0; i < len(name); i++ {
		if !isSecretNameByte(name[i]) {
			return fmt.Sprintf("holds %s: a secret's name uses only letters, digits, '_', '.' and '-'", describeByte(name, i))
		}
	}
	return ""
}

// ValidSecretName reports whether name can name a secret.
func ValidSecretName(name string) bool { return SecretNameProblem(name) == "" }

func isSecretNameByte(c byte) bool {
	return c == '_' || c == '.' || c == '-' || ('A' <= c && c <= 'Z') || ('a' <= c && c <= 'z') || ('0' <= c && c <= '9')
}

// describeByte names the character at s[i] for a message, quoted so that
// a space, a brace or a control byte is visible.
func describeByte(s string, i int) string {
	switch c := s[i]; {
	case c == ' ':
		return "a space"
	case c < 0x20 || c == 0x7f || c >= 0x80:
		return fmt.Sprintf(`\x%02x`, c)
	default:
		return strconv.Quote(string(c))
	}
}

// SecretRefError is a malformed ${secret:…} reference.
type SecretRefError struct {
	Text    string // the reference as written, up to 80 bytes
	Problem string
}

func (e *SecretRefError) Error() string {
	return fmt.Sprintf("%s is not a secret reference: %s", strconv.Quote(e.Text), e.Problem)
}

// parseSecretRef parses the reference that starts at s[i] ("${secret:")
// within s[:hi]. It returns the name and the offset just past the "}", or
// an error for a reference that does not end or whose name is not one.
func parseSecretRef(s string, i, hi int) (name string, end int, err error) {
	j := i + len(secretOpen)
	k := strings.IndexByte(s[j:hi], '}')
	if k < 0 {
		return "", -1, &SecretRefError{Text: clip(s[i:hi]), Problem: "it has no closing }"}
	}
	name = s[j : j+k]
	if why := SecretNameProblem(name); why != "" {
		return "", -1, &SecretRefError{Text: clip(s[i : j+k+1]), Problem: "the name " + why}
	}
	return name, j + k + 1, nil
}

func clip(s string) string {
	if len(s) > 80 {
		return s[:77] + "..."
	}
	return s
}

// SecretRefs returns the names of the secrets s refers to as
// ${secret:NAME} (sorted, without duplicates), and the first malformed
// reference, if any. It reads s exactly as expansion does: "$${secret:X}"
// is an escape, not a reference, and a reference inside a
// ${VAR:-default} counts.
func SecretRefs(s string) ([]string, error) {
	if !strings.Contains(s, secretOpen) {
		return nil, nil
	}
	seen := map[string]bool{}
	e := expander{s: s, lookup: func(string) (string, bool) { return "", false }, miss: map[string]bool{}, closeAt: matchBraces(s),
		secret: func(name string) (string, error) { seen[name] = true; return "", nil }}
	var b strings.Builder
	e.expand(&b, 0, len(s))
	if len(seen) == 0 {
		return nil, e.badRef
	}
	return sortedKeys(seen), e.badRef
}

// serverSecretRefs returns the secrets def refers to where they expand
// (env values, header values, url), and a diagnostic message for each
// problem: a malformed reference, or a reference in a field where it does
// not expand (command, args, cwd, headersHelper).
func serverSecretRefs(def Server) (names []string, problems []secretProblem) {
	seen := map[string]bool{}
	scan := func(field, key, v string, expands bool) {
		refs, err := SecretRefs(v)
		where := "" // the diagnostic names the field, and the entry in it
		if key != "" {
			where = "the value of " + strconv.Quote(key) + ": "
		}
		if field == "args" {
			where = "argument " + key + ": "
		}
		if err != nil {
			problems = append(problems, secretProblem{field: field, msg: where + err.Error(),
				fix: "write ${secret:NAME} with a name of letters, digits, '_', '.' and '-', or $${ for a literal ${"})
		}
		if len(refs) > 0 && !expands {
			problems = append(problems, secretProblem{field: field,
				msg: where + fmt.Sprintf("${secret:%s} is expanded only in env values, header values and url", refs[0]),
				fix: fmt.Sprintf(`pass it to the server in env instead, e.g. "env": {"%s": "${secret:%s}"} (a command line is visible to every user of the machine)`, envNameFor(refs[0]), refs[0])})
			return
		}
		for _, n := range refs {
			seen[n] = true
		}
	}
	scan("command", "", def.Command, false)
	for i, a := range def.Args {
		scan("args", strconv.Itoa(i+1), a, false)
	}
	scan("cwd", "", def.Cwd, false)
	scan("headersHelper", "", def.HeadersHelper, false)
	for _, k := range sortedKeys(def.Env) {
		scan("env", k, def.Env[k], true)
	}
	for _, k := range sortedKeys(def.Headers) {
		scan("headers", k, def.Headers[k], true)
	}
	scan("url", "", def.URL, true)
	return sortedKeys(seen), problems
}

type secretProblem struct{ field, msg, fix string }

// envNameFor suggests a variable name for a secret in a message.
func envNameFor(secret string) string {
	b := []byte(strings.ToUpper(secret))
	for i, c := range b {
		if !isVarByte(c, i == 0) {
			b[i] = '_'
		}
	}
	return string(b)
}

// SecretNames returns the secrets def refers to where they expand (env
// values, header values, url), sorted and without duplicates: what
// [ResolveSecrets] would look up. Load records the same list, for the
// winning definition, as ResolvedServer.Secrets.
func SecretNames(def Server) []string {
	names, _ := serverSecretRefs(def)
	return names
}

// SecretError is a secret that could not be used for a server: its
// lookup failed, or its value cannot be carried where it is referenced.
type SecretError struct {
	Secret string // the secret's name
	Field  string // env, headers or url
	Key    string // the env variable or header, "" for url
	Err    error
}

func (e *SecretError) Error() string {
	where := e.Field
	if e.Key != "" {
		where += " " + e.Key
	}
	return fmt.Sprintf("secret %s (%s): %v", e.Secret, where, e.Err)
}

func (e *SecretError) Unwrap() error { return e.Err }

// ResolveSecrets returns rs's definition expanded as Load expands it
// (see [Expand], with lookup), with each ${secret:NAME} in env values,
// header values and the url replaced by secret(NAME), in the same single
// pass: a variable's value is never scanned for references, so the
// environment cannot make a server read a secret its definition does not
// name. When rs names no secret it returns rs.Effective as it is.
//
// The first secret that cannot be used is returned as a *SecretError
// (fields in the order env, headers, url; keys sorted): one whose lookup
// failed (its error wrapped), or one whose value the field cannot carry —
// a NUL byte in an env value, a line break or other control character
// in a header value, a control character or space in the url — and then
// the definition returned is rs.Effective. A url that is not http(s)
// once expanded is an error too. secret is called at most once per name.
func ResolveSecrets(rs *ResolvedServer, lookup func(string) (string, bool), secret func(name string) (string, error)) (Server, error) {
	if len(rs.Secrets) == 0 {
		return rs.Effective, nil
	}
	cache := map[string]string{}
	var failed error
	get := func(field, key string) func(string) (string, error) {
		return func(name string) (string, error) {
			v, ok := cache[name]
			if !ok {
				var err error
				if v, err = secret(name); err != nil {
					err = &SecretError{Secret: name, Field: field, Key: key, Err: err}
					if failed == nil {
						failed = err
					}
					return "", err
				}
				cache[name] = v
			}
			if why := unfitFor(field, v); why != "" {
				err := &SecretError{Secret: name, Field: field, Key: key, Err: errors.New(why)}
				if failed == nil {
					failed = err
				}
				return "", err
			}
			return v, nil
		}
	}
	e := rs.Effective
	env, headers := map[string]string{}, map[string]string{}
	for _, k := range sortedKeys(rs.Written.Env) {
		env[k], _ = expandSecrets(rs.Written.Env[k], lookup, get("env", k))
	}
	for _, k := range sortedKeys(rs.Written.Headers) {
		headers[k], _ = expandSecrets(rs.Written.Headers[k], lookup, get("headers", k))
	}
	u, _ := expandSecrets(rs.Written.URL, lookup, get("url", ""))
	if failed != nil {
		return rs.Effective, failed
	}
	if len(rs.Written.Env) > 0 {
		e.Env = env
	}
	if len(rs.Written.Headers) > 0 {
		e.Headers = headers
	}
	if t := e.Type; (t == TypeHTTP || t == TypeSSE) && u != rs.Effective.URL {
		if msg := checkURL(u); msg != "" {
			names, _ := SecretRefs(rs.Written.URL)
			return rs.Effective, &SecretError{Secret: strings.Join(names, ", "), Field: "url", Err: errors.New("once expanded, " + msg)}
		}
	}
	e.URL = u
	return e, nil
}

// unfitFor says why value cannot be carried in field, or "".
func unfitFor(field, value string) string {
	switch field {
	case "env":
		if strings.IndexByte(value, 0) >= 0 {
			return "its value holds a NUL byte, which no environment variable can carry"
		}
	case "headers":
		for i := 0; i < len(value); i++ {
			if c := value[i]; c == '\r' || c == '\n' {
				return "its value holds a line break, which a header value cannot carry"
			} else if c < 0x20 && c != '\t' || c == 0x7f {
				return "its value holds a control character, which a header value cannot carry"
			}
		}
	case "url":
		for i := 0; i < len(value); i++ {
			if c := value[i]; c <= 0x20 || c == 0x7f {
				return "its value holds a space or control character, which a url cannot carry"
			}
		}
	}
	return ""
}

// expandSecrets is Expand with ${secret:NAME} replaced by secret(NAME).
// A reference whose lookup fails keeps its text; the error is the first
// such failure.
func expandSecrets(s string, lookup func(string) (string, bool), secret func(string) (string, error)) (string, error) {
	if !strings.Contains(s, "${") {
		return s, nil
	}
	if lookup == nil {
		lookup = os.LookupEnv
	}
	e := expander{s: s, lookup: lookup, windows: runtime.GOOS == "windows", secret: secret, miss: make(map[string]bool), closeAt: matchBraces(s)}
	var b strings.Builder
	e.expand(&b, 0, len(s))
	return b.String(), e.secretErr
}

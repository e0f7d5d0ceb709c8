package cli

import (
	"context"
	"fmt"
	"io"
	"net/url"
	"slices"
	"strconv"
	"strings"

	"github.com/tailscale/hujson"

	"github.com/switchboard-mcp/switchboard/config"
	"github.com/switchboard-mcp/switchboard/internal/lazyre"
	"github.com/switchboard-mcp/switchboard/internal/redact"
	"github.com/switchboard-mcp/switchboard/internal/secretstore"
	"github.com/switchboard-mcp/switchboard/internal/termsafe"
)

// credential is a literal credential in a server definition's env,
// headers or args: a value a shared (repository) file must not hold
// (docs/configuration.md, How the CLI edits files).
type credential struct {
	// Field is "env", "headers" or "args"; Key the variable or header it
	// is the value of, or the argument's index.
	Field, Key string
	// Flag is the option an argument is the value of ("--api-key"), or
	// the variable of a NAME=VALUE argument; "" for a bare token.
	Flag string
	// Var is the environment variable that is to hold it instead: the
	// definition gets ${Var}.
	Var string
	// Scheme is what stays before the reference in a header ("Bearer "),
	// an argument ("--api-key=") or a url; Rest what stays after it in a
	// url.
	Scheme, Rest string
	// Secret, when set, is the secret of the user's store that holds it:
	// the definition gets ${secret:Secret} instead of ${Var}.
	Secret string
	// value is the credential itself: never printed.
	value string
	// url is the url a url parameter's credential is in, and at:end the
	// value's text there (escaped as written): settleURLRefs makes Scheme
	// and Rest of each of several such credentials the url with the
	// others' references too.
	url     string
	at, end int
}

// what names where the credential is, for the person: "env GITHUB_TOKEN",
// "header Authorization", "argument --api-key".
func (c credential) what() string {
	switch c.Field {
	case "headers":
		return "header " + c.Key
	case "args":
		if c.Flag != "" {
			return "argument " + c.Flag
		}
		return "argument " + c.Key
	case "url":
		return "url parameter " + c.Key
	}
	return "env " + c.Key
}

// ref is what the definition holds instead of the credential.
func (c credential) ref() string {
	return c.Scheme + c.inner() + c.Rest
}

// inner is the reference alone: ${secret:NAME} or ${VAR}.
func (c credential) inner() string {
	if c.Secret != "" {
		return "${secret:" + c.Secret + "}"
	}
	return "${" + c.Var + "}"
}

// settleURLRefs sets Scheme and Rest of the url parameters' credentials
// of creds so that each one's ref is the whole url with every one of them
// replaced: a url holding two (?api_key=…&token=…) is written, and shown,
// with neither value. Call it once names and secrets are final.
func settleURLRefs(creds []credential) {
	var idx []int
	for i, c := range creds {
		if c.Field == "url" && c.url != "" {
			idx = append(idx, i)
		}
	}
	for _, i := range idx {
		var b strings.Builder
		last := 0
		for _, j := range idx {
			c := creds[j]
			b.WriteString(c.url[last:c.at])
			if j == i {
				creds[i].Scheme = b.String()
				b.Reset()
			} else {
				b.WriteString(c.inner())
			}
			last = c.end
		}
		b.WriteString(creds[i].url[last:])
		creds[i].Rest = b.String()
	}
}

// path is where the credential is in the definition, as a JSON pointer.
func (c credential) path() string {
	if c.Field == "url" {
		return "/url"
	}
	return "/" + c.Field + "/" + pointerToken(c.Key)
}

// literalCredentials returns the values of def's env, headers, args
// (argCredentials) and url query (urlCredentials) that are credentials written out in full, env and
// headers sorted by key, args in order, each with the
// environment variable that is to hold it. It is the one test of "is this
// a literal credential" for every command that writes a file shared
// through a repository (mcp add, add-json, import into project scope), and
// for whatever stores secrets elsewhere later (a keychain).
//
// A value is one when it holds no ${…} reference and
//   - env: its name says secret (token, key, secret, password, auth, …) and
//     the value looks like one (8+ characters, no spaces, not a path, a
//     number, a boolean or a plain URL), or the value has a known token's
//     shape (ghp_…, sk-…, xoxb-…, AKIA…, a JWT), or is a URL with a
//     password (postgres://user:pw@host);
//   - headers: the same, after an auth scheme ("Bearer ", "Basic ",
//     "token "), which stays; every header whose name says secret
//     (Authorization, Cookie, X-Api-Key…) counts.
//
// server names the variables of headers: GITHUB_TOKEN for github's
// Authorization, GITHUB_API_KEY for its X-Api-Key.
func literalCredentials(server string, def config.Server) []credential {
	var out []credential
	for _, k := range sortedKeys(def.Env) {
		v := strings.TrimSpace(def.Env[k])
		if isLiteralCredential(k, v) {
			out = append(out, credential{Field: "env", Key: k, Var: envVarName(k), value: v})
		}
	}
	for _, k := range sortedKeys(def.Headers) {
		scheme, v := splitScheme(strings.TrimSpace(def.Headers[k]))
		if isLiteralCredential(k, v) {
			out = append(out, credential{Field: "headers", Key: k, Var: headerVarName(server, k), Scheme: scheme, value: v})
		}
	}
	out = append(out, argCredentials(server, def.Args)...)
	out = append(out, urlCredentials(server, def.URL)...)
	// Two credentials must not share a variable unless they are the same.
	used := map[string]string{}
	for i, c := range out {
		name := c.Var
		for n := 2; used[name] != "" && used[name] != c.value; n++ {
			name = fmt.Sprintf("%s_%d", c.Var, n)
		}
		used[name] = c.value
		out[i].Var = name
	}
	settleURLRefs(out)
	return out
}

// argCredentials are the literal credentials of args: the value of a
// secret-named option (--api-key=sk_…, or --api-key and the next
// argument), of a secret-named NAME=VALUE (docker's -e TOKEN=…), or an
// argument of a known token's shape or a URL with a password
// (postgresql://user:pw@host/db). What stays before the value stays.
func argCredentials(server string, args []string) []credential {
	var out []credential
	for i := 0; i < len(args); i++ {
		a := strings.TrimSpace(args[i])
		c := credential{Field: "args", Key: strconv.Itoa(i)}
		switch name, v, ok := strings.Cut(a, "="); {
		case isLiteralCredential("", a): // a token's shape, a URL with a password
			c.value = a
			c.Var = envVarName(varWord(server) + "_TOKEN")
			if strings.Contains(a, "://") {
				c.Var = envVarName(varWord(server) + "_URL")
			}
		case ok && strings.HasPrefix(name, "-") && isLiteralCredential(strings.TrimLeft(name, "-"), v):
			c.Flag, c.Scheme, c.value = name, name+"=", v
			c.Var = envVarName(varWord(server) + "_" + varWord(name))
		case ok && config.IsVarName(name) && isLiteralCredential(name, v):
			c.Flag, c.Scheme, c.value = name, name+"=", v
			c.Var = name
		case !ok && strings.HasPrefix(a, "-") && len(a) > 1 && i+1 < len(args) && redact.IsSecretKey(strings.TrimLeft(a, "-")) &&
			!strings.HasPrefix(args[i+1], "-") && isLiteralCredential(strings.TrimLeft(a, "-"), strings.TrimSpace(args[i+1])):
			i++
			c.Key, c.Flag, c.value = strconv.Itoa(i), a, strings.TrimSpace(args[i])
			c.Var = envVarName(varWord(server) + "_" + varWord(a))
		default:
			continue
		}
		out = append(out, c)
	}
	return out
}

// urlCredentials are the literal credentials in the query of a url
// (?api_key=…, as hosted servers hand them out), in order: the value of
// each secret-named parameter. A url with a password is one as a whole.
func urlCredentials(server, u string) []credential {
	q := strings.IndexByte(u, '?')
	if q < 0 {
		return nil
	}
	var out []credential
	end := len(u)
	if h := strings.IndexByte(u[q:], '#'); h >= 0 {
		end = q + h
	}
	for start := q + 1; start < end; {
		stop := strings.IndexByte(u[start:end], '&')
		if stop < 0 {
			stop = end - start
		}
		seg := u[start : start+stop]
		if k, v, ok := strings.Cut(seg, "="); ok {
			key, err1 := url.QueryUnescape(k)
			val, err2 := url.QueryUnescape(v)
			if err1 == nil && err2 == nil && redact.IsSecretKey(key) && isLiteralCredential(key, val) {
				at := start + len(k) + 1
				out = append(out, credential{Field: "url", Key: key, Var: envVarName(varWord(server) + "_" + varWord(key)),
					Scheme: u[:at], Rest: u[at+len(v):], value: val, url: u, at: at, end: at + len(v)})
			}
		}
		start += stop + 1
	}
	return out
}

// tokenShape matches the well-known shapes of generated credentials.
var tokenShape = lazyre.New(`^(?:gh[pousr]_[A-Za-z0-9]{20,}|github_pat_\w{20,}|glpat-[\w-]{20,}|sk-[\w-]{20,}|sk_(?:live|test)_\w{16,}|xox[abpors]-[\w-]{10,}|AKIA[0-9A-Z]{16}|AIza[\w-]{30,}|eyJ[\w-]{8,}\.[\w-]{8,}\.[\w-]*|npm_[A-Za-z0-9]{30,})$`)

var notSecret = map[string]bool{"true": true, "false": true, "yes": true, "no": true, "on": true, "off": true, "null": true, "none": true}

func isLiteralCredential(key, v string) bool {
	if v == "" || strings.Contains(v, "${") {
		return false
	}
	if tokenShape().MatchString(v) {
		return true
	}
	if u, err := url.Parse(v); err == nil && u.Scheme != "" && u.Host != "" {
		_, hasPassword := u.User.Password()
		return hasPassword // a URL says where, unless it holds a password
	}
	if !redact.IsSecretKey(key) || len(v) < 8 || strings.ContainsAny(v, " \t") || notSecret[strings.ToLower(v)] {
		return false
	}
	if strings.HasPrefix(v, "/") || strings.HasPrefix(v, "~") || strings.HasPrefix(v, ".") || strings.Contains(v, `:\`) {
		return false // a path to a key file, not the key
	}
	return strings.Trim(v, "0123456789.") != ""
}

// authScheme is the scheme word of an Authorization-style header value.
var authScheme = lazyre.New(`^(?i:bearer|basic|token|bot|apikey|key)\s+`)

func splitScheme(v string) (scheme, rest string) {
	if m := authScheme().FindString(v); m != "" && len(m) < len(v) {
		return m, v[len(m):]
	}
	return "", v
}

// varWord makes an environment variable's name, or part of one, of s:
// upper case, anything but letters and digits as "_".
var notVarChar = lazyre.New(`[^A-Z0-9]+`)

func varWord(s string) string {
	return strings.Trim(notVarChar().ReplaceAllString(strings.ToUpper(s), "_"), "_")
}

func envVarName(key string) string {
	if config.IsVarName(key) {
		return key
	}
	name := varWord(key)
	if name == "" || name[0] >= '0' && name[0] <= '9' {
		name = "SECRET_" + name
	}
	return name
}

func headerVarName(server, header string) string {
	h := strings.ToLower(header)
	suffix := ""
	switch h {
	case "authorization", "proxy-authorization":
		suffix = "TOKEN"
	default:
		suffix = varWord(strings.TrimPrefix(h, "x-"))
	}
	return envVarName(varWord(server) + "_" + suffix)
}

// withCredentialRefs returns the definition raw (JSON) with each
// credential's value replaced by its reference, and the credentials
// replaced. Only its env, header, argument and url values change. keep, if set, may keep
// a credential in the user's secret store: it returns the secret's name,
// and the definition gets ${secret:NAME} (else ${VAR}). keptOnly, for the
// user's own files, replaces only the credentials keep kept: the others
// stay as they were typed.
func withCredentialRefs(name string, raw []byte, keep func(credential) (string, error), keptOnly bool) ([]byte, []credential, error) {
	def, _ := config.ParseServer(name, raw)
	creds := literalCredentials(name, def)
	if len(creds) == 0 {
		return raw, nil, nil
	}
	if keep != nil {
		for i := range creds {
			secret, err := keep(creds[i])
			if err != nil {
				return nil, nil, err
			}
			creds[i].Secret = secret
		}
	}
	if keptOnly {
		creds = slices.DeleteFunc(creds, func(c credential) bool { return c.Secret == "" })
		if len(creds) == 0 {
			return raw, nil, nil
		}
	}
	settleURLRefs(creds)
	v, err := hujson.Parse(raw)
	if err != nil {
		return nil, nil, err
	}
	var ops []map[string]string
	for _, c := range creds {
		ops = append(ops, map[string]string{"op": "replace", "path": c.path(), "value": c.ref()})
	}
	patch, _ := marshalNoEscape(ops) // a url's & stays &, not \u0026
	if err := v.Patch(patch); err != nil {
		return nil, nil, fmt.Errorf("keeping the credentials out of the file: %w", err)
	}
	return v.Pack(), creds, nil
}

func pointerToken(s string) string {
	return strings.ReplaceAll(strings.ReplaceAll(s, "~", "~0"), "/", "~1")
}

// credentialNotes says, one line each, which credentials were written as
// references and what to set: file is the file's name, shared through the
// repository unless own.
func credentialNotes(creds []credential, file string, own bool) []string {
	var out []string
	for _, c := range creds {
		what := c.what()
		if own {
			out = append(out, fmt.Sprintf("%s holds a credential: kept in your credential store as secret %s, written into %s as %q", what, c.Secret, file, c.ref()))
			continue
		}
		if c.Secret != "" {
			out = append(out, fmt.Sprintf("%s holds a credential, and %s is shared through the repository: kept in your credential store as secret %s, written as %q",
				what, file, c.Secret, c.ref()))
			continue
		}
		out = append(out, fmt.Sprintf("%s holds a credential, and %s is shared through the repository: written as %q; set %s in your environment (export %s=…) before the server starts, or keep it in your credential store instead: `switchboard secret set %s`, then write \"${secret:%s}\" (on a terminal Switchboard offers this)",
			what, file, c.ref(), c.Var, c.Var, c.Var, c.Var))
	}
	return out
}

// credentialRefs is raw as it is written into file of scope
// (withCredentialRefs): a file shared through the repository gets a
// reference for each literal credential; the user's own (own) keeps what
// was typed but for what the person, asked on a terminal, keeps in the
// credential store. creds are the credentials replaced.
func (f *Factory) credentialRefs(ctx context.Context, name string, raw []byte, scope config.Scope, file string) (out []byte, creds []credential, own bool, err error) {
	own = scope != config.ScopeProject
	if own && !f.IO.CanPrompt {
		return raw, nil, own, nil
	}
	ownFile := ""
	if own {
		ownFile = f.tilde(file)
	}
	out, creds, err = withCredentialRefs(name, raw, f.keepCredentials(ctx, ownFile), own)
	return out, creds, own, err
}

// printCredentialNotes prints credentialNotes as notes on w.
func printCredentialNotes(w io.Writer, creds []credential, file string, own bool) {
	for _, n := range credentialNotes(creds, file, own) {
		fmt.Fprintf(w, "note: %s\n", termsafe.Line(n))
	}
}

// keepCredentials returns, on a terminal, the question that offers to
// keep each credential in the user's secret store (stored at once when
// the answer is yes); nil when nobody can be asked, so that the file gets
// ${VAR} as before. A secret of the same name with another value is not
// replaced: the credential gets the next free name (NAME_2, …). own is
// the user's own file the credential would otherwise be written into (""
// for a file shared through the repository).
func (f *Factory) keepCredentials(ctx context.Context, own string) func(credential) (string, error) {
	if !f.IO.CanPrompt {
		return nil
	}
	return func(c credential) (string, error) {
		return f.offerSecret(ctx, c.what(), c.Var, c.value, own)
	}
}

// offerSecret asks whether to keep value (what it is: "env GITHUB_TOKEN")
// in the user's store as secret name, and stores it then. It returns the
// name it was stored under, or "" when the person said no. own is the
// user's own file the value would otherwise be written into; "" for a
// shared file, which must not hold it.
func (f *Factory) offerSecret(ctx context.Context, what, name, value, own string) (string, error) {
	store := f.secretStore()
	name, same := freeSecretName(ctx, store, name, value)
	q := fmt.Sprintf("%s holds a credential, which a shared file must not: keep it in your credential store as secret %s? [y/N] ", what, name)
	if own != "" {
		q = fmt.Sprintf("%s holds a credential: keep it in your credential store as secret %s rather than in %s? [y/N] ", what, name, own)
	}
	ok, err := askYesNo(ctx, f.IO, q)
	if err != nil || !ok {
		return "", err
	}
	if !same {
		loc, err := store.Set(ctx, name, value)
		if err != nil {
			return "", FailureErr(err, storeHint(err)+"; nothing was written")
		}
		fmt.Fprintf(f.IO.ErrOut, "Stored %s in %s.\n", name, f.tilde(loc.Name))
		printStoreNote(f.IO.ErrOut, loc, f.tilde)
	}
	return name, nil
}

// freeSecretName is name, or NAME_2, NAME_3…: the first that the store
// does not hold with another value. same reports that it holds value
// already.
func freeSecretName(ctx context.Context, store *secretstore.Store, name, value string) (string, bool) {
	base := name
	for n := 2; ; n++ {
		v, err := store.Get(ctx, name)
		if err != nil {
			return name, false
		}
		if v == value {
			return name, true
		}
		name = fmt.Sprintf("%s_%d", base, n)
	}
}

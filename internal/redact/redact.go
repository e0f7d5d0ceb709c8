// Package redact keeps secrets out of everything Switchboard prints or logs
// (docs/security.md, What is never logged): tool arguments, environment
// values and HTTP headers.
//
// One rule decides by key: a key that contains token, secret, password,
// passwd, key, auth, cookie or credential (any case) holds a secret, and
// its value becomes [Placeholder]. Header values are secrets whatever
// their name. Free text — an error that quotes a URL, a server's stderr —
// is scrubbed by [String]: values known to be secret are replaced wherever
// they appear, and so are the shapes secrets take in text
// (`Authorization: Bearer …`, `?access_token=…`, `API_KEY=…`,
// `https://user:pass@host`, PEM private keys, the private members of a
// JSON Web Key), and so are credentials recognised by their form alone
// (one maintained list, [TokenShapes]: GitHub, OpenAI, Anthropic, AWS,
// Slack, Google and Stripe keys, JSON Web Tokens…). [Handler] applies all of this to every slog
// record, so a logger wrapped once cannot leak through a forgotten call
// site.
//
// The package is internal: it is how Switchboard's own packages print; the
// host applies it to the logger an embedder hands in.
package redact

import (
	"bytes"
	"cmp"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"net/http"
	"net/url"
	"regexp"
	"slices"
	"strings"
	"sync"
	"unicode/utf16"

	"github.com/switchboard-mcp/switchboard/internal/lazyre"
)

// Placeholder replaces every redacted value.
const Placeholder = "<redacted>"

// MinSecretLen is the shortest known secret value [String] scrubs:
// replacing a one- or two-letter value everywhere would garble the text
// and such a value protects nothing.
const MinSecretLen = 4

// The expressions below are compiled on first use, not at start-up: every
// process of the switchboard binary links this package (the supervisor and
// test servers too) and most never redact anything.
var secretKey = lazyre.New(`(?i)token|secret|password|passwd|key|auth|cookie|credential`)

// IsSecretKey reports whether a key (an argument, env or field name) names
// a secret.
func IsSecretKey(key string) bool {
	// secretKey on ASCII without the expression: every argument's key is
	// asked, on every call the audit log records. Outside ASCII, (?i)
	// folds the Kelvin sign to k and the long s to s.
	lower, ok := lowerASCII(key)
	if !ok {
		return secretKey().MatchString(key)
	}
	return anyWord(lower, secretKeyWords)
}

// secretKeyWords are secretKey's words.
var secretKeyWords = []string{"token", "secret", "password", "passwd", "key", "auth", "cookie", "credential"}

// Value returns value, or Placeholder when key names a secret. Other
// values are scrubbed as free text.
func Value(key, value string) string {
	if IsSecretKey(key) {
		if value == "" {
			return ""
		}
		return Placeholder
	}
	return String(value)
}

// Args returns a deep copy of tool arguments with secrets redacted: a
// secret key's whole value (a scalar, or everything under it), and secret
// shapes inside other strings, keys included (a key is the caller's text
// as much as a value is). It never modifies args.
func Args(args map[string]any) map[string]any {
	if args == nil {
		return nil
	}
	out := make(map[string]any, len(args))
	for k, v := range args {
		if IsSecretKey(k) && v != nil {
			out[String(k)] = Placeholder
			continue
		}
		out[String(k)] = Any(v)
	}
	return out
}

// Any redacts a JSON-like value: maps and slices deeply (as [Args]),
// strings as free text, map[string]string as environment, http.Header
// entirely; json.RawMessage and []byte are decoded as JSON first; other
// values (structs) go through their JSON encoding. Numbers, booleans and
// nil are returned as they are.
func Any(v any) any {
	switch v := v.(type) {
	case nil, bool, float64, float32, int, int64, int32, uint, uint64, uint32, json.Number:
		return v
	case string:
		return String(v)
	case map[string]any:
		return Args(v)
	case []any:
		out := make([]any, len(v))
		for i, e := range v {
			out[i] = Any(e)
		}
		return out
	case []string:
		out := make([]string, len(v))
		for i, e := range v {
			out[i] = String(e)
		}
		return out
	case map[string]string:
		return Env(v)
	case http.Header:
		return Headers(v)
	case json.RawMessage:
		return anyJSON(v)
	case []byte:
		return anyJSON(v)
	case error:
		return String(v.Error())
	}
	b, err := json.Marshal(v)
	if err != nil {
		return String(fmt.Sprint(v))
	}
	return anyJSON(b)
}

func anyJSON(b []byte) any {
	var decoded any
	if err := json.Unmarshal(b, &decoded); err != nil {
		return String(string(b))
	}
	return Any(decoded)
}

var (
	envRef = lazyre.New(`\$\{(?:[A-Za-z_][A-Za-z0-9_]*|secret:[A-Za-z0-9_.-]+)\}`) // ${VAR}, ${secret:NAME}
	// innerRef is a reference whose default, if any, is empty or was
	// itself made of references (taken out first): ${A:-${secret:B}}.
	innerRef   = lazyre.New(`\$\{(?:[A-Za-z_][A-Za-z0-9_]*(?::-)?|secret:[A-Za-z0-9_.-]+)\}`)
	schemeWord = lazyre.New(`(?i)^(bearer|basic|token)\b`)
)

// withoutRefs is value with its references taken out, those in a
// default first: what is left is text written as it is.
func withoutRefs(value string) string {
	for {
		rest := innerRef().ReplaceAllString(value, "")
		if rest == value {
			return value
		}
		value = rest
	}
}

// ConfigValue returns a configured env (header false) or header (header
// true) value as it may be shown to the user. A value made only of ${VAR}
// (or ${secret:NAME}) references, a default made of references too
// (${A:-${secret:B}}) — for a header, after an optional Bearer/Basic/token word —
// names a secret without being one and is shown as written. Otherwise a
// header value is [Placeholder], and so is an env value that [Secrets]
// would scrub from text (a secret-named key, or a value that
// [LooksSecret]): every display of a value agrees with the scrub of the
// text around it. Other env values are scrubbed as free text.
func ConfigValue(key, value string, header bool) string {
	if refsOnly(value, header) {
		return value
	}
	if value == "" {
		return ""
	}
	if header || secretEnv(key, value) {
		return Placeholder
	}
	return String(value)
}

// refsOnly reports whether a configured env (header false) or header
// value is made only of references (see [ConfigValue]): it names secrets
// without holding one.
func refsOnly(value string, header bool) bool {
	rest := strings.TrimSpace(withoutRefs(value))
	if header {
		rest = strings.TrimSpace(schemeWord().ReplaceAllString(rest, ""))
	}
	return rest == "" && value != "" && envRef().MatchString(value)
}

// secretEnv reports whether an env entry holds a secret: its key names
// one, or its value has a credential's shape.
func secretEnv(key, value string) bool { return IsSecretKey(key) || LooksSecret(value) }

var secretFlag = lazyre.New(`(?i)^--?[A-Za-z0-9_\-]*(?:token|secret|password|passwd|key|auth|cookie|credential)[A-Za-z0-9_\-]*$`)

// CommandArgs returns a copy of a command's arguments with secrets
// redacted, word by word: the argument after a secret-named flag
// (--api-key VALUE), the shapes of [String] in each argument
// (--token=VALUE, URLs), and the known secret values (see [Secrets])
// wherever they appear. Redacting each word on its own keeps the others
// whole: a line redacted as one text can lose its quoting.
func CommandArgs(args []string, known ...string) []string {
	if args == nil {
		return nil
	}
	out := make([]string, len(args))
	for i, a := range args {
		if i > 0 && secretFlag().MatchString(args[i-1]) && !strings.HasPrefix(a, "-") && !envRef().MatchString(a) {
			out[i] = Placeholder
			continue
		}
		out[i] = String(a, known...)
	}
	return out
}

// Headers returns a copy of h with every value redacted: header values
// are credentials more often than not, whatever their name.
func Headers(h http.Header) http.Header {
	if h == nil {
		return nil
	}
	out := make(http.Header, len(h))
	for k, vs := range h {
		out[k] = make([]string, len(vs))
		for i := range vs {
			out[k][i] = Placeholder
		}
	}
	return out
}

// HeaderMap is [Headers] for a map of single values, as config holds them.
func HeaderMap(m map[string]string) map[string]string {
	if m == nil {
		return nil
	}
	out := make(map[string]string, len(m))
	for k := range m {
		out[k] = Placeholder
	}
	return out
}

// Env returns a copy of an environment map with the values of secret keys
// redacted (see [Value]).
func Env(m map[string]string) map[string]string {
	if m == nil {
		return nil
	}
	out := make(map[string]string, len(m))
	for k, v := range m {
		out[k] = Value(k, v)
	}
	return out
}

// Environ is [Env] for KEY=VALUE lists such as os.Environ.
func Environ(kv []string) []string {
	if kv == nil {
		return nil
	}
	out := make([]string, len(kv))
	for i, e := range kv {
		k, v, ok := strings.Cut(e, "=")
		if !ok {
			out[i] = String(e)
			continue
		}
		out[i] = k + "=" + Value(k, v)
	}
	return out
}

// Secrets returns the values of env and headers that [String] should
// scrub from text: every header value, and the env values whose key names
// a secret or that look like a credential (see [LooksSecret]), but those
// made only of references (${VAR}, ${secret:NAME}), which [ConfigValue]
// shows as written.
func Secrets(env, headers map[string]string) []string {
	var out []string
	for k, v := range env {
		if secretEnv(k, v) && !refsOnly(v, false) {
			out = append(out, v)
		}
	}
	for _, v := range headers {
		if refsOnly(v, true) {
			continue
		}
		out = append(out, v)
		// "Bearer abc": the credential alone can appear in text too.
		if _, cred, ok := strings.Cut(v, " "); ok {
			out = append(out, strings.TrimSpace(cred))
		}
	}
	return out
}

// LooksSecret reports whether a value has the shape of a generated
// credential: at least 20 characters without spaces, mixing letters and
// digits, and not a path or URL.
func LooksSecret(v string) bool {
	if len(v) < 20 || strings.ContainsAny(v, " \t/\\") {
		return false
	}
	return lettersAndDigits(v)
}

// The shapes a secret takes in free text. Each keeps what names the secret
// and replaces the secret itself.
type pattern struct {
	// re is compiled when a text first meets the pattern's need: most
	// processes redact only text that meets none (a server state's
	// reason, plain arguments of an audit line), and a gateway compiled
	// all eight at start-up for its servers' first state (~90 KB).
	re   func() *regexp.Regexp
	repl string
	// keep, if set, leaves a match that is not a secret as it is.
	keep func(match string) bool
}

// need is what every match of a pattern holds: one byte of anyOf (when
// set), each of all, and — on ASCII text — one of words in any case. It
// is checked before the expression runs: an expression costs ~0.5 µs a
// byte of text, and most text (a tool's arguments, a log line) holds
// none of it.
type need struct {
	anyOf string
	all   []string
	words []string
}

func (n *need) met(s, lower string, ascii bool) bool {
	if n.anyOf != "" && !strings.ContainsAny(s, n.anyOf) {
		return false
	}
	for _, a := range n.all {
		if !strings.Contains(s, a) {
			return false
		}
	}
	// Outside ASCII a word may be there in any case: (?i) also folds the
	// Kelvin sign to k and the long s to s.
	return n.words == nil || !ascii || anyWord(lower, n.words)
}

// anyWord reports whether lower holds one of words.
func anyWord(lower string, words []string) bool {
	for _, w := range words {
		if strings.Contains(lower, w) {
			return true
		}
	}
	return false
}

// lowerASCII returns s in lower case, or false when s holds a byte
// outside ASCII.
func lowerASCII(s string) (string, bool) {
	for i := 0; i < len(s); i++ {
		if s[i] >= 0x80 {
			return "", false
		}
	}
	return strings.ToLower(s), true
}

var patterns = sync.OnceValue(func() []pattern {
	return []pattern{
		// Authorization: Bearer abc, Cookie: a=b; c=d — to the end of the line.
		{lazyre.New(`(?i)\b((?:proxy-)?authorization|(?:set-)?cookie|x-api-key|api-key)(["']?\s*[:=]\s*)("[^"\r\n]*"|[^\r\n"]+)`), "${1}${2}" + Placeholder, nil},
		// Bearer abc / Basic abc wherever they appear.
		{lazyre.New(`(?i)\b(bearer|basic)(\s+)[A-Za-z0-9\-._~+/]+=*`), "${1}${2}" + Placeholder, nil},
		// https://user:password@host
		{lazyre.New(`(?i)\b([a-z][a-z0-9+.\-]*://[^/\s:@]*:)[^/\s@]+@`), "${1}" + Placeholder + "@", nil},
		// ?access_token=abc&… — query, form and fragment (#access_token=,
		// as OAuth's implicit flow returns it) parameters with a secret name.
		{lazyre.New(`(?i)([?&;#][^=&\s#?]*(?:token|secret|password|passwd|key|auth|cookie|credential|signature|sig|code)[^=&\s#?]*=)[^&\s#"'<>]*[^&\s#"'<>:.,;)]`), "${1}" + Placeholder, refValue},
		// --api-key abc, -password abc: a secret-named flag and its value.
		{lazyre.New(`(?i)((?:^|\s)--?[A-Za-z0-9_\-]*(?:token|secret|password|passwd|key|auth|cookie|credential)[A-Za-z0-9_\-]*[ \t]+)([^\s\-$][^\s]*)`), "${1}" + Placeholder, nil},
		// A PEM private key (PKCS#1, PKCS#8, EC, OpenSSH, encrypted): the
		// armour stays, the body goes; a block cut off before its END line goes
		// to the end of the text.
		{lazyre.New(`(?s)(-----BEGIN [A-Z0-9 ]*PRIVATE KEY-----).*?(-----END [A-Z0-9 ]*PRIVATE KEY-----|\z)`), "${1}" + Placeholder + "${2}", nil},
		// The private members of a JSON Web Key (RFC 7518 §6.2.2 and RFC 7518 §6.3.2):
		// "d", and RSA's "p", "q", "dp", "dq", "qi", when they hold a
		// base64url value long enough to be key material.
		{lazyre.New(`("(?:d|p|q|dp|dq|qi)"[ \t]*:[ \t]*)"[A-Za-z0-9_\-]{16,}={0,2}"`), "${1}\"" + Placeholder + "\"", nil},
		// API_TOKEN=abc, password: abc, "client_secret": "abc" — but not
		// keymap.js:12:3, a position in a file whose name holds "key", nor
		// ${secret:NAME}, a reference that names a secret without being one.
		{lazyre.New(`(?i)((?:\$\{)?["']?[A-Za-z0-9_.\-]*(?:token|secret|password|passwd|key|auth|cookie|credential)[A-Za-z0-9_.\-]*["']?[ \t]*[:=][ \t]*)("[^"\r\n]*"|'[^'\r\n]*'|(?:\$\{(?:[^\s{}]|\{[^\s{}]*\})*\}|[^\s,;&})"'<>])+)`), "${1}" + Placeholder, notSecretValue},
	}
})

// nameWords are what a secret's name (?:token|secret|password|passwd|key|
// auth|cookie|credential) holds ("passw" is in both spellings), then what
// a query parameter's name may hold instead: sig(nature), code.
var nameWords = [...]string{"token", "secret", "passw", "key", "auth", "cookie", "credential", "sig", "code"}

// shapeNeeds are the patterns' needs, in their order (static data: the
// binary an embedder links carries no code for them).
var shapeNeeds = [...]need{
	{anyOf: ":=", words: []string{"authorization", "cookie", "api-key"}}, // Authorization: …
	{words: []string{"bearer", "basic"}},                                 // Bearer abc
	{all: []string{"://", "@"}},                                          // https://user:password@host
	{anyOf: "?&;#", all: []string{"="}, words: nameWords[:]},             // ?access_token=abc
	{all: []string{"-"}, words: nameWords[:7]},                           // --api-key abc
	{all: []string{"-----BEGIN "}},                                       // a PEM private key
	{all: []string{`"`, ":"}},                                            // a JSON Web Key's private members
	{anyOf: ":=", words: nameWords[:7]},                                  // API_TOKEN=abc
}

// position is a file name with an extension, a colon and a line number
// (and a column): what a stack trace or a compiler prints.
var position = lazyre.New(`^[A-Za-z0-9_.\-]*\.[A-Za-z][A-Za-z0-9]*:[0-9]+(?::[0-9]+)?:?$`)

// notSecretValue reports whether a match of the "API_TOKEN=abc" shape is
// a file position or a secret reference, ${secret:NAME} (as config
// writes it; its name ends at the first "}", so a malformed one, with a
// space, keeps its first word here and the rest outside the match).
func notSecretValue(m string) bool {
	return strings.HasPrefix(m, "${secret:") || position().MatchString(m) || refValue(m) || errorWords(m)
}

// oauth2Word is golang.org/x/oauth2's error prefix and the word after
// it ("oauth2: cannot fetch token", "oauth2: token expired"): its name
// holds "auth", but it is a library naming itself.
var oauth2Word = lazyre.New(`^(?i:oauth2):[ \t]*[a-z]+$`)

// errorWords reports whether a match of the "password: abc" shape is
// one that error messages print without a secret in it: x/oauth2's
// prefix, and a value of three digits at most (an HTTP status after
// "fetch token:", a count): no credential is that short, and hiding
// them made every OAuth failure read "<redacted> fetch token:
// <redacted> Bad Request".
func errorWords(m string) bool {
	if oauth2Word().MatchString(m) {
		return true
	}
	i := strings.IndexAny(m, ":=")
	v := strings.TrimSpace(m[i+1:])
	return len(v) > 0 && len(v) <= 3 && strings.Trim(v, "0123456789") == ""
}

// refValue reports whether the value of a name=value or name: value match
// (after its first '=' or ':') is made only of references, ${VAR} and
// ${secret:NAME}, quoted or not: it names a secret without holding one,
// and is shown as written (--api-key=${secret:gh}, ?token=${TOKEN}).
func refValue(m string) bool {
	i := strings.IndexAny(m, "=:")
	if i < 0 {
		return false
	}
	v := strings.TrimSpace(m[i+1:])
	if len(v) >= 2 && (v[0] == '"' || v[0] == '\'') && v[len(v)-1] == v[0] {
		v = v[1 : len(v)-1]
	}
	return refsOnly(v, false)
}

// https://<token>@host: a userinfo without a password that is a credential
// itself (git hosts take tokens so). Only a token-shaped one goes: git@
// and bob@ stay.
var userOnly = lazyre.New(`(?i)\b[a-z][a-z0-9+.\-]*://[^/\s:@?#]+@`)

func tokenUser(m string) string {
	i := strings.Index(m, "://") + 3
	if !LooksSecret(m[i : len(m)-1]) {
		return m
	}
	return m[:i] + Placeholder + "@"
}

// String scrubs free text: the shapes secrets take (see the package doc),
// the credentials of a known shape ([TokenShapes]: ghp_…, sk-…, AKIA…, JSON
// Web Tokens…) and every occurrence of the given secret values of at least
// [MinSecretLen] bytes. No given secret survives in the result.
func String(s string, secrets ...string) string {
	return scrub(scrubTokens(shapes(s, true)), secrets)
}

// shapes replaces the shapes secrets take in s. With filter, a pattern
// whose may check fails is not run: the same result, as the check is a
// necessary condition of a match (FuzzShapesFilter compares both).
func shapes(s string, filter bool) string {
	lower, ascii := lowerASCII(s)
	for i, p := range patterns() {
		if filter && !shapeNeeds[i].met(s, lower, ascii) {
			continue
		}
		re := p.re()
		if !re.MatchString(s) {
			continue
		}
		if p.keep == nil {
			s = re.ReplaceAllString(s, p.repl)
		} else {
			s = re.ReplaceAllStringFunc(s, func(m string) string {
				if p.keep(m) {
					return m
				}
				return re.ReplaceAllString(m, p.repl)
			})
		}
		lower, ascii = lowerASCII(s)
	}
	if (!filter || strings.Contains(s, "://") && strings.Contains(s, "@")) && userOnly().MatchString(s) {
		s = userOnly().ReplaceAllStringFunc(s, tokenUser)
	}
	return s
}

func scrub(s string, secrets []string) string {
	if len(secrets) == 0 {
		return s
	}
	return replaceLongestFirst(s, longestFirst(secrets))
}

// longestFirst is a copy of secrets, the longest first (so that a secret
// containing another goes whole), those of one length in their order.
func longestFirst(secrets []string) []string {
	out := slices.Clone(secrets)
	slices.SortStableFunc(out, func(a, b string) int { return cmp.Compare(len(b), len(a)) })
	return out
}

// replaceLongestFirst replaces every secret (ordered by longestFirst) in s.
func replaceLongestFirst(s string, secrets []string) string {
	for _, sec := range secrets {
		if len(sec) >= MinSecretLen {
			s = strings.ReplaceAll(s, sec, Placeholder)
		}
	}
	// A secret that overlaps the placeholder (or another replacement) may
	// have been formed again; a shorter mark shrinks the text at every
	// replacement, so this ends.
	for again := true; again; {
		again = false
		for _, sec := range secrets {
			if len(sec) >= MinSecretLen && strings.Contains(s, sec) {
				s = strings.ReplaceAll(s, sec, "***")
				again = true
			}
		}
	}
	return s
}

// Set is a set of known secret values to scrub from text, such as the
// configured env and header values of every server. It is safe for
// concurrent use; the zero value is an empty set.
type Set struct {
	mu     sync.RWMutex
	values map[string]struct{}
	list   []string
	// byHead indexes the values by their first two bytes, and heads has
	// a bit set for each such pair, so that Known looks at a text once,
	// however many values there are.
	byHead map[uint16][]string
	heads  *[1 << 10]uint64
	// longest is list ordered by longestFirst, as scrub replaces them,
	// made anew by Add: what a reader took under the lock never changes.
	longest []string
}

func head(s string) uint16 { return uint16(s[0])<<8 | uint16(s[1]) }

// Add adds values, with the forms a value takes when a program prints it
// as it sent it (EncodedForms) and, from [MinFoldedLen] bytes, in upper
// and in lower case (CaseForms); those shorter than [MinSecretLen] are
// ignored.
func (s *Set) Add(values ...string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	n := len(s.list)
	defer func() {
		if len(s.list) > n {
			s.longest = longestFirst(s.list)
		}
	}()
	var forms []string
	for _, v := range values {
		if len(v) >= MinSecretLen {
			forms = append(forms, v)
			forms = append(forms, EncodedForms(v)...)
			forms = append(forms, CaseForms(v)...)
		}
	}
	for _, v := range forms {
		if len(v) < MinSecretLen {
			continue
		}
		if _, dup := s.values[v]; dup {
			continue
		}
		if s.values == nil {
			s.values = map[string]struct{}{}
			s.byHead = map[uint16][]string{}
			s.heads = new([1 << 10]uint64)
		}
		s.values[v] = struct{}{}
		s.list = append(s.list, v)
		h := head(v)
		s.byHead[h] = append(s.byHead[h], v)
		s.heads[h>>6] |= 1 << (h & 63)
	}
}

// MinFoldedLen is the shortest value a [Set] knows in upper and in lower
// case too. A hex token is the same credential in either case, and a
// program may print it so (a digest printed with %X, a header value
// upper-cased); a short value in another case is as likely an ordinary
// word (a password of "Summer" and the word "summer"), so below this
// length only the value as given is replaced.
const MinFoldedLen = 16

// CaseForms returns v in upper and in lower case, those that differ from
// v, when v is at least [MinFoldedLen] bytes long. Mixed case is not
// tried: a value's other mixes are too many, and a program that changes
// a value's case changes all of it.
func CaseForms(v string) []string {
	if len(v) < MinFoldedLen {
		return nil
	}
	var out []string
	for _, f := range []string{strings.ToUpper(v), strings.ToLower(v)} {
		if f != v && !slices.Contains(out, f) {
			out = append(out, f)
		}
	}
	return out
}

// MinEncodedLen is the shortest value whose encoded forms a [Set] knows,
// and the shortest such form it keeps: a few characters of base64 occur
// in any long base64 text.
const MinEncodedLen = 8

// EncodedForms returns the forms other than v itself in which a program
// that sent v prints it: query- and path-escaped (as Go and JavaScript
// escape, either case of hex), as in a url it called,
// escaped in a JSON string, as in its configuration printed as JSON, and
// base64 (standard and url alphabets), as in a Basic authorization
// header — for base64, the characters that stand for v alone at each of
// the three places v can start within a longer encoded text ("user:" +
// v). Values shorter than [MinEncodedLen] have none.
func EncodedForms(v string) []string {
	if len(v) < MinEncodedLen {
		return nil
	}
	var out []string
	add := func(f string) {
		if f != v && len(f) >= MinEncodedLen && !slices.Contains(out, f) {
			out = append(out, f)
		}
	}
	for _, f := range []string{url.QueryEscape(v), url.PathEscape(v), uriComponent(v)} {
		add(f)
		add(lowerHex(f)) // RFC 3986 allows either case; some encoders write %2b
	}
	// Inside a JSON string: as Go writes it (<, > and & escaped too), as
	// most others do, and as Python's json.dumps does (non-ASCII escaped).
	if b, err := json.Marshal(v); err == nil {
		add(string(b[1 : len(b)-1]))
	}
	var plain bytes.Buffer
	enc := json.NewEncoder(&plain)
	enc.SetEscapeHTML(false)
	if enc.Encode(v) == nil {
		j := strings.TrimSuffix(plain.String(), "\n")
		j = j[1 : len(j)-1]
		add(j)
		add(asciiJSON(j))
	}
	for k := 0; k < 3; k++ {
		// Encoded after k other bytes, v's bits start at bit 8k: the
		// characters whose six bits are all v's are those from
		// ceil(8k/6) to floor(8(k+len(v))/6).
		b := append(make([]byte, k), v...)
		lo, hi := (8*k+5)/6, 8*(k+len(v))/6
		for _, enc := range []*base64.Encoding{base64.RawStdEncoding, base64.RawURLEncoding} {
			add(enc.EncodeToString(b)[lo:hi])
		}
	}
	return out
}

// uriComponent is v as JavaScript's encodeURIComponent writes it: every
// byte percent-escaped but letters, digits and -_.!~*'() (a space is
// %20, not Go's "+").
func uriComponent(v string) string {
	var b strings.Builder
	for i := 0; i < len(v); i++ {
		c := v[i]
		if 'a' <= c && c <= 'z' || 'A' <= c && c <= 'Z' || '0' <= c && c <= '9' || strings.IndexByte("-_.!~*'()", c) >= 0 {
			b.WriteByte(c)
			continue
		}
		fmt.Fprintf(&b, "%%%02X", c)
	}
	return b.String()
}

// lowerHex is the percent-escaped s with its escapes' hex digits in
// lower case.
func lowerHex(s string) string {
	b := []byte(s)
	for i := 0; i+2 < len(b); i++ {
		if b[i] == '%' {
			for j := i + 1; j <= i+2; j++ {
				if 'A' <= b[j] && b[j] <= 'F' {
					b[j] += 'a' - 'A'
				}
			}
			i += 2
		}
	}
	return string(b)
}

// asciiJSON is the body of a JSON string with each non-ASCII character
// written as \uXXXX (lower-case hex; a pair for one beyond the BMP), as
// Python's json.dumps writes it.
func asciiJSON(j string) string {
	var b strings.Builder
	for _, r := range j {
		switch {
		case r < 0x80:
			b.WriteRune(r)
		case r > 0xFFFF:
			r1, r2 := utf16.EncodeRune(r)
			fmt.Fprintf(&b, "\\u%04x\\u%04x", r1, r2)
		default:
			fmt.Fprintf(&b, "\\u%04x", r)
		}
	}
	return b.String()
}

// String is [String] with the set's values (nil Set: no known values).
//
// A host's set holds every secret-named variable of its environment, and
// a gateway's audit log scrubs each string it writes: so the text is
// looked at once for any of the values (by their first two bytes, as
// Known does), and only a text that holds one has them replaced.
func (s *Set) String(text string) string {
	text = scrubTokens(shapes(text, true))
	if s == nil {
		return text
	}
	s.mu.RLock()
	longest := s.longest
	found := s.holdsLocked(text)
	s.mu.RUnlock()
	if !found {
		return text
	}
	return replaceLongestFirst(text, longest)
}

// holdsLocked reports whether text holds one of the set's values; s.mu is
// held (Add changes byHead in place).
func (s *Set) holdsLocked(text string) bool {
	held := false
	s.eachHeldLocked(text, func(string) bool { held = true; return false })
	return held
}

// eachHeldLocked calls found with each of the set's values at each place
// text holds it, looking at the text once by the values' first two bytes,
// until found returns false; s.mu is held.
func (s *Set) eachHeldLocked(text string, found func(v string) bool) {
	if s.heads == nil {
		return
	}
	for i := 0; i+MinSecretLen <= len(text); i++ {
		h := head(text[i:])
		if s.heads[h>>6]&(1<<(h&63)) == 0 {
			continue
		}
		for _, v := range s.byHead[h] {
			if strings.HasPrefix(text[i:], v) && !found(v) {
				return
			}
		}
	}
}

// HoldsAtLeast reports whether text holds one of the set's values that is
// at least n bytes long (a nil Set holds none). A name that must be sent
// back as it is cannot have a value replaced, only be refused: a short
// value (a password that is also a word) would refuse ordinary names.
func (s *Set) HoldsAtLeast(text string, n int) bool {
	if s == nil {
		return false
	}
	s.mu.RLock()
	defer s.mu.RUnlock()
	held := false
	s.eachHeldLocked(text, func(v string) bool {
		held = len(v) >= n
		return !held
	})
	return held
}

// Error returns err with its message scrubbed by [Set.String]; errors.Is
// and errors.As still see err. A nil err gives nil.
func (s *Set) Error(err error) error {
	if err == nil {
		return nil
	}
	msg := s.String(err.Error())
	if msg == err.Error() {
		return err
	}
	return &scrubbedError{msg: msg, err: err}
}

type scrubbedError struct {
	msg string
	err error
}

func (e *scrubbedError) Error() string { return e.msg }
func (e *scrubbedError) Unwrap() error { return e.err }

// CommandArgs is [CommandArgs] with the set's values as the known ones.
func (s *Set) CommandArgs(args []string) []string {
	if s == nil {
		return CommandArgs(args)
	}
	s.mu.RLock()
	list := s.list
	s.mu.RUnlock()
	return CommandArgs(args, list...)
}

// Strings applies [Set.String] to each element of a copy of lines.
func (s *Set) Strings(lines []string) []string {
	if lines == nil {
		return nil
	}
	out := make([]string, len(lines))
	for i, l := range lines {
		out[i] = s.String(l)
	}
	return out
}

// ArgsSummary renders tool arguments as compact JSON for a question put to
// a person, secrets redacted (Args) and cut to maxRunes ("…" marks a cut).
func ArgsSummary(args map[string]any, maxRunes int) string {
	if len(args) == 0 {
		return "no arguments"
	}
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(Args(args)); err != nil {
		return "arguments that cannot be shown"
	}
	b := bytes.TrimSpace(buf.Bytes())
	if r := []rune(string(b)); len(r) > maxRunes {
		return string(r[:maxRunes]) + "…"
	}
	return string(b)
}

// Known replaces in text every value of the set (at least [MinSecretLen]
// bytes) with [Placeholder], and counts the values it replaced; unlike
// [Set.String] it leaves everything else alone: it is for data (a tool's
// result), where only a value Switchboard knows to be secret goes. A nil
// Set knows no values.
func (s *Set) Known(text string) (string, int) {
	if s == nil {
		return text, 0
	}
	s.mu.RLock()
	longest := s.longest
	found := map[string]bool(nil)
	s.eachHeldLocked(text, func(v string) bool {
		if found == nil {
			found = map[string]bool{}
		}
		found[v] = true
		return true
	})
	s.mu.RUnlock()
	if len(found) == 0 {
		return text, 0
	}
	return replaceLongestFirst(text, longest), len(found)
}

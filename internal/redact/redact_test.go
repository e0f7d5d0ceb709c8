package redact

import (
	"bytes"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"net/url"
	"slices"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

func TestValueAndIsSecretKey(t *testing.T) {
	for _, k := range []string{"API_TOKEN", "token", "client_secret", "PASSWORD", "db_passwd", "apiKey", "X-Api-Key",
		"Authorization", "auth", "Cookie", "AWS_CREDENTIALS", "GITHUB_PERSONAL_ACCESS_TOKEN"} {
		if got := Value(k, "s3cr3t-value"); got != Placeholder {
			t.Errorf("Value(%q) = %q, want %q", k, got, Placeholder)
		}
	}
	for _, k := range []string{"NODE_ENV", "path", "query", "name", "DEBUG", "url"} {
		if got := Value(k, "plain"); got != "plain" {
			t.Errorf("Value(%q, plain) = %q, want it unchanged", k, got)
		}
	}
	if got := Value("url", "https://x.test/?access_token=abcd1234"); got != "https://x.test/?access_token="+Placeholder {
		t.Errorf("a non-secret key's value is still scrubbed as text: %q", got)
	}
	if got := Value("token", ""); got != "" {
		t.Errorf("empty secret = %q, want empty (nothing to hide, and emptiness is useful to see)", got)
	}
}

func TestArgsDeep(t *testing.T) {
	in := map[string]any{
		"path":     "/tmp/x",
		"password": "planted-secret-3",
		"count":    3.0,
		"nested": map[string]any{
			"apiKey": "k-123456",
			"list":   []any{map[string]any{"token": "t-999999", "ok": true}, "Bearer abc.def.ghi"},
		},
		"auth":   map[string]any{"user": "me", "pass": "pw-777777"},
		"url":    "https://h.test/cb?code=xyz987&state=1",
		"absent": nil,
	}
	orig, _ := json.Marshal(in)
	got := Args(in)
	want := map[string]any{
		"path":     "/tmp/x",
		"password": Placeholder,
		"count":    3.0,
		"nested": map[string]any{
			"apiKey": Placeholder,
			"list":   []any{map[string]any{"token": Placeholder, "ok": true}, "Bearer " + Placeholder},
		},
		"auth":   Placeholder,
		"url":    "https://h.test/cb?code=" + Placeholder + "&state=1",
		"absent": nil,
	}
	if d := cmp.Diff(want, got); d != "" {
		t.Errorf("Args (-want +got):\n%s", d)
	}
	if after, _ := json.Marshal(in); !bytes.Equal(orig, after) {
		t.Errorf("Args modified its input")
	}
}

func TestAnyShapes(t *testing.T) {
	type req struct {
		Password string `json:"password"`
		Name     string `json:"name"`
	}
	if d := cmp.Diff(map[string]any{"password": Placeholder, "name": "n"}, Any(req{"pw-123456", "n"})); d != "" {
		t.Errorf("struct: %s", d)
	}
	if d := cmp.Diff(map[string]any{"secret": Placeholder}, Any(json.RawMessage(`{"secret":"abcdef"}`))); d != "" {
		t.Errorf("raw JSON: %s", d)
	}
	if got := Any(errors.New("GET https://u:hunter22@h.test/ failed")); got != "GET https://u:"+Placeholder+"@h.test/ failed" {
		t.Errorf("error: %q", got)
	}
}

func TestHeadersEnv(t *testing.T) {
	h := http.Header{"Authorization": {"Bearer planted-secret-2"}, "X-Team": {"blue", "green"}}
	if d := cmp.Diff(http.Header{"Authorization": {Placeholder}, "X-Team": {Placeholder, Placeholder}}, Headers(h)); d != "" {
		t.Errorf("Headers: %s", d)
	}
	if h.Get("Authorization") != "Bearer planted-secret-2" {
		t.Error("Headers modified its input")
	}
	if d := cmp.Diff(map[string]string{"X-Team": Placeholder}, HeaderMap(map[string]string{"X-Team": "blue"})); d != "" {
		t.Errorf("HeaderMap: %s", d)
	}
	env := map[string]string{"API_TOKEN": "planted-secret-1", "NODE_ENV": "production"}
	if d := cmp.Diff(map[string]string{"API_TOKEN": Placeholder, "NODE_ENV": "production"}, Env(env)); d != "" {
		t.Errorf("Env: %s", d)
	}
	if d := cmp.Diff([]string{"API_TOKEN=" + Placeholder, "HOME=/home/me", "odd"}, Environ([]string{"API_TOKEN=x1234", "HOME=/home/me", "odd"})); d != "" {
		t.Errorf("Environ: %s", d)
	}
}

func TestString(t *testing.T) {
	tests := []struct{ in, want string }{
		{`Post "https://api.test/mcp?access_token=tok123456&x=1": dial tcp: refused`,
			`Post "https://api.test/mcp?access_token=` + Placeholder + `&x=1": dial tcp: refused`},
		{"Authorization: Bearer abc.def", "Authorization: " + Placeholder},
		{"sent header authorization=Basic dXNlcjpwYXNz", "sent header authorization=" + Placeholder},
		{"token is Bearer eyJhbGciOi.x.y done", "token is Bearer " + Placeholder + " done"},
		{"API_TOKEN=planted-secret-1 node server.js", "API_TOKEN=" + Placeholder + " node server.js"},
		{`{"client_secret": "abc", "name": "x"}`, `{"client_secret": ` + Placeholder + `, "name": "x"}`},
		{"password: hunter2", "password: " + Placeholder},
		{"connect https://bob:hunter22@db.test:5432/x", "connect https://bob:" + Placeholder + "@db.test:5432/x"},
		{"Cookie: session=abc; theme=dark", "Cookie: " + Placeholder},
		{"nothing secret here: 42 tools, state connected", "nothing secret here: 42 tools, state connected"},
		{"load: -----BEGIN PRIVATE KEY-----\nMIGHAgEAMBMGByqGSM49AgEGCCqGSM49\nAwEHBG0wawIBAQQg\n-----END PRIVATE KEY-----\nok",
			"load: -----BEGIN PRIVATE KEY-----" + Placeholder + "-----END PRIVATE KEY-----\nok"},
		{"-----BEGIN EC PRIVATE KEY-----\nMHcCAQEEIBkg4LVWM9nuwNSk3yByxZpYRTBnVJk5oY", "-----BEGIN EC PRIVATE KEY-----" + Placeholder},
		{"-----BEGIN PUBLIC KEY-----\nMFkwEwYHKoZIzj0CAQYIKoZIzj0DAQcDQgAE\n-----END PUBLIC KEY-----",
			"-----BEGIN PUBLIC KEY-----\nMFkwEwYHKoZIzj0CAQYIKoZIzj0DAQcDQgAE\n-----END PUBLIC KEY-----"},
		{`dpop key {"kty":"EC","crv":"P-256","x":"f83OJ3D2xF1Bg8vub9tLe1gHMzV76e8Tus9uPHvRVEU","d":"jpsQnnGQmL-YBIffH1136cLyQ70ylvAJdHmvBwu7Hnk"}`,
			`dpop key {"kty":"EC","crv":"P-256","x":"f83OJ3D2xF1Bg8vub9tLe1gHMzV76e8Tus9uPHvRVEU","d":"` + Placeholder + `"}`},
		{`{"d": "short", "q": "what is it?"}`, `{"d": "short", "q": "what is it?"}`},
	}
	for _, tt := range tests {
		if got := String(tt.in); got != tt.want {
			t.Errorf("String(%q)\n got %q\nwant %q", tt.in, got, tt.want)
		}
	}
	if got := String("server said: hello planted-secret-9!", "planted-secret-9"); got != "server said: hello "+Placeholder+"!" {
		t.Errorf("known secret: %q", got)
	}
	if got := String("a b c", "b"); got != "a b c" {
		t.Errorf("a secret shorter than MinSecretLen is not scrubbed (it would garble text): %q", got)
	}
	// A secret that overlaps the placeholder must still not survive.
	for _, sec := range []string{"dacted>", "<red", "d>ab", "ted><re"} {
		for _, text := range []string{sec, sec + sec, "x" + sec + "ab" + sec + "b", sec + "ab"} {
			if got := String(text, sec); strings.Contains(got, sec) {
				t.Errorf("String(%q, %q) = %q still holds it", text, sec, got)
			}
		}
	}
}

func TestSecretsAndSet(t *testing.T) {
	sec := Secrets(map[string]string{"API_TOKEN": "planted-secret-1", "MODE": "fast", "X": "ghp_1234567890abcdefghij"},
		map[string]string{"Authorization": "Bearer planted-secret-2"})
	var s Set
	s.Add(sec...)
	s.Add("ab") // too short: ignored
	text := "env planted-secret-1 mode fast, X ghp_1234567890abcdefghij, cred planted-secret-2 ab"
	got := s.String(text)
	for _, v := range []string{"planted-secret-1", "planted-secret-2", "ghp_1234567890abcdefghij"} {
		if strings.Contains(got, v) {
			t.Errorf("Set.String left %q in %q", v, got)
		}
	}
	if !strings.Contains(got, "mode fast") || !strings.HasSuffix(got, " ab") {
		t.Errorf("Set.String removed more than the secrets: %q", got)
	}
	var nilSet *Set
	if nilSet.String("password=x1") != "password="+Placeholder {
		t.Error("a nil Set still scrubs shapes")
	}
}

func TestHandler(t *testing.T) {
	var buf bytes.Buffer
	var known Set
	known.Add("planted-secret-4")
	log := slog.New(HandlerWith(slog.NewJSONHandler(&buf, nil), &known)).With("token", "planted-secret-5")
	log.Info("stderr: planted-secret-4 and Authorization: Bearer planted-secret-6",
		"server", "fs",
		"tools", 3,
		"args", map[string]any{"password": "planted-secret-3", "path": "/tmp"},
		"headers", http.Header{"X-Key": {"planted-secret-2"}},
		"error", errors.New("GET ?api_key=planted-secret-7 failed"),
		slog.Group("env", "API_TOKEN", "planted-secret-1", "MODE", "fast"),
		"reason", "exited: planted-secret-4",
	)
	out := buf.String()
	for _, v := range []string{"planted-secret-1", "planted-secret-2", "planted-secret-3", "planted-secret-4",
		"planted-secret-5", "planted-secret-6", "planted-secret-7"} {
		if strings.Contains(out, v) {
			t.Errorf("log line holds %s: %s", v, out)
		}
	}
	for _, keep := range []string{`"server":"fs"`, `"tools":3`, `"path":"/tmp"`, `"MODE":"fast"`} {
		if !strings.Contains(out, keep) {
			t.Errorf("log line lost %s: %s", keep, out)
		}
	}
	// Wrapping twice does not redact twice.
	h := Handler(slog.NewTextHandler(&buf, nil))
	if Handler(h) != h {
		t.Error("Handler(Handler(h)) wraps again")
	}
}

func TestConfigValue(t *testing.T) {
	tests := []struct {
		key, value string
		header     bool
		want       string
	}{
		{"Authorization", "Bearer ${GITHUB_TOKEN}", true, "Bearer ${GITHUB_TOKEN}"},
		{"Authorization", "Bearer planted-secret-2", true, Placeholder},
		{"Authorization", "Bearer ${T:-sk-live-default}", true, Placeholder},
		{"X-Team", "blue", true, Placeholder},
		{"API_TOKEN", "${API_TOKEN}", false, "${API_TOKEN}"},
		{"API_TOKEN", "planted-secret-1", false, Placeholder},
		{"TZ", "UTC", false, "UTC"},
		{"DB_URL", "${DATABASE_URL:-postgres://localhost/dev}", false, "${DATABASE_URL:-postgres://localhost/dev}"},
		{"DB_URL", "postgres://me:pw1234@db/x", false, "postgres://me:" + Placeholder + "@db/x"},
		// Secret references are shown as written, their names whole: in
		// a default, escaped ($${…} is literal text), malformed, mixed
		// with text. A header's literal text is still a secret.
		{"V", "${UNSETV:-${secret:MYSEC}}", false, "${UNSETV:-${secret:MYSEC}}"},
		{"V", "$${secret:MYSEC}", false, "$${secret:MYSEC}"},
		{"V", "${secret:my key}", false, "${secret:my key}"},
		{"V", "pre-${secret:MYSEC}", false, "pre-${secret:MYSEC}"},
		{"Authorization", "Bearer ${UNSETV:-${secret:MYSEC}}", true, "Bearer ${UNSETV:-${secret:MYSEC}}"},
		{"Authorization", "Bearer ${UNSETV:-${secret:MYSEC}-x}", true, Placeholder},
		{"X-K", "$${secret:MYSEC}", true, Placeholder},
	}
	for _, tt := range tests {
		if got := ConfigValue(tt.key, tt.value, tt.header); got != tt.want {
			t.Errorf("ConfigValue(%q, %q, %v) = %q, want %q", tt.key, tt.value, tt.header, got, tt.want)
		}
	}
}

// TestStringKeepsSecretReferences: a ${secret:NAME} reference names a
// secret without being one, so the text scrub leaves its name whole (in
// a url, a default, an escape, a malformed one), while a secret-named
// value around it still goes, and so does a token-shaped name.
func TestStringKeepsSecretReferences(t *testing.T) {
	for _, tt := range []struct{ in, want string }{
		{"https://h/mcp?k=${UNSETV:-${secret:MYSEC}}", "https://h/mcp?k=${UNSETV:-${secret:MYSEC}}"},
		{"https://h/$${secret:MYSEC}", "https://h/$${secret:MYSEC}"},
		{"https://h/${secret:my key}", "https://h/${secret:my key}"},
		{"secret: hunter22 and ${secret:API.key-2}", "secret: " + Placeholder + " and ${secret:API.key-2}"},
		{"${password:abc123}", "${password:" + Placeholder + "}"},
		{"${SECRET:abc123}", "${SECRET:" + Placeholder + "}"},
		{"https://h/mcp?api_key=${secret:K}", "https://h/mcp?api_key=${secret:K}"},
		{"https://h/mcp?api_key=${K}x", "https://h/mcp?api_key=" + Placeholder},
		{"--api-token=${secret:gh}", "--api-token=${secret:gh}"},
		{`"token": "${TOKEN}"`, `"token": "${TOKEN}"`},
		{"API_KEY=${A:-${secret:B}}", "API_KEY=${A:-${secret:B}}"},
		{"--api-token=${VAR}abc", "--api-token=" + Placeholder},
		{"--api-token=abc${VAR}", "--api-token=" + Placeholder},
		{"token=${secret:A}hunter2", "token=" + Placeholder},
	} {
		if got := String(tt.in); got != tt.want {
			t.Errorf("String(%q) = %q, want %q", tt.in, got, tt.want)
		}
	}
	// A header made only of references is no value to scrub elsewhere.
	if got := Secrets(map[string]string{"TOKEN": "${secret:A}"}, map[string]string{"Authorization": "Bearer ${UNSETV:-${secret:B}}", "X": "v4lue"}); !slices.Equal(got, []string{"v4lue"}) {
		t.Errorf("Secrets = %q, want only v4lue", got)
	}
}

func TestSetError(t *testing.T) {
	var s Set
	s.Add("planted-secret-8")
	base := errors.New("boom")
	err := s.Error(fmt.Errorf("server said planted-secret-8: %w", base))
	if strings.Contains(err.Error(), "planted-secret-8") || !errors.Is(err, base) {
		t.Errorf("Set.Error = %q (errors.Is base: %v)", err, errors.Is(err, base))
	}
	if s.Error(base) != base || s.Error(nil) != nil {
		t.Error("an error with nothing to scrub is returned as it is")
	}
	if got := String("run server --api-key sk-123456 --verbose"); got != "run server --api-key "+Placeholder+" --verbose" {
		t.Errorf("flag value: %q", got)
	}
}

func TestCommandArgs(t *testing.T) {
	got := CommandArgs([]string{"server", "--api-key", "sk-123456", "--token=abc12345", "--verbose", "--auth", "${AUTH}", "https://u:pw123456@h/"})
	want := []string{"server", "--api-key", Placeholder, "--token=" + Placeholder, "--verbose", "--auth", "${AUTH}", "https://u:" + Placeholder + "@h/"}
	if d := cmp.Diff(want, got); d != "" {
		t.Errorf("CommandArgs (-want +got):\n%s", d)
	}
}

// Command arguments keep real secrets out whatever characters they hold:
// database URLs, passwords with shell characters or spaces, JSON, query
// tokens (review 15: a rule that showed "non-inert" values printed them).
// A known secret goes wherever it appears.
func TestCommandArgsHidesRealisticSecrets(t *testing.T) {
	for _, tc := range []struct {
		args   []string
		secret string
	}{
		{[]string{"-y", "@modelcontextprotocol/server-postgres", "postgresql://app:Pa$$w0rd@db.internal/prod"}, "Pa$$w0rd"},
		{[]string{"mysql://root:s3cr3t&x(1)@localhost/db"}, "s3cr3t&x(1)"},
		{[]string{"--password", "Tr0ub4dor&3"}, "Tr0ub4dor&3"},
		{[]string{"--password", "correct horse battery staple"}, "correct horse battery staple"},
		{[]string{"--password=hunter2$"}, "hunter2$"},
		{[]string{"--db-password", "x9!K$m2#Lq"}, "x9!K$m2#Lq"},
		{[]string{"--api-key", "ab\\cd1234"}, "ab\\cd1234"},
		{[]string{"--header", "Cookie: sessionid=abc123def456; csrftoken=zz99yy88"}, "abc123def456"},
		{[]string{"--config", `{"password": "my pass phrase"}`}, "my pass phrase"},
		{[]string{"https://api.example.com/v1?api_key=k3y$abc"}, "k3y$abc"},
		{[]string{"--header", "Cookie: theme=dark; sid=s%3Aq8Zk2mW9.xYz"}, "s%3Aq8Zk2mW9.xYz"},
		{[]string{"--label", "x-known-secret-value-y"}, "known-secret-value"},
	} {
		got := strings.Join(CommandArgs(tc.args, "known-secret-value"), " ")
		if strings.Contains(got, tc.secret) {
			t.Errorf("CommandArgs(%q) = %q shows the secret %q", tc.args, got, tc.secret)
		}
	}
}

func TestArgsSummary(t *testing.T) {
	if got := ArgsSummary(nil, 400); got != "no arguments" {
		t.Errorf("no args: %q", got)
	}
	got := ArgsSummary(map[string]any{"path": "/tmp/<x>", "api_key": "planted-secret"}, 400)
	if strings.Contains(got, "planted-secret") || !strings.Contains(got, `"/tmp/<x>"`) {
		t.Errorf("summary %q: want the secret redacted and the path unescaped", got)
	}
	long := ArgsSummary(map[string]any{"text": strings.Repeat("é", 1000)}, 10)
	if r := []rune(long); len(r) != 11 || r[10] != '…' {
		t.Errorf("cut summary %q: want 10 runes and …", long)
	}
}

// Known replaces only the set's values (not the shapes String removes),
// counts the distinct values it found, and finds them wherever they are.
func TestSetKnown(t *testing.T) {
	s := &Set{}
	s.Add("tok_live_abc123", "tok_live_abc123xyz", "zz", "hunter22")
	for _, tc := range []struct {
		in, want string
		n        int
	}{
		{"nothing here, password: x, ghp_Zq8xW2vN4mT6kP0rS3uY5bA7cD9eF1gH2jK4", "nothing here, password: x, ghp_Zq8xW2vN4mT6kP0rS3uY5bA7cD9eF1gH2jK4", 0},
		{"key=tok_live_abc123xyz;", "key=<redacted>;", 2},
		{"a hunter22 b tok_live_abc123 zz", "a <redacted> b <redacted> zz", 2},
		{"hunter22", "<redacted>", 1},
	} {
		got, n := s.Known(tc.in)
		if got != tc.want || n != tc.n {
			t.Errorf("Known(%q) = %q, %d; want %q, %d", tc.in, got, n, tc.want, tc.n)
		}
	}
	var empty *Set
	if got, n := empty.Known("hunter22"); got != "hunter22" || n != 0 {
		t.Errorf("nil set: %q %d", got, n)
	}
	if got, n := (&Set{}).Known("hunter22"); got != "hunter22" || n != 0 {
		t.Errorf("empty set: %q %d", got, n)
	}
}

// A known value is replaced in the forms a program that sent it prints:
// escaped in a url, and base64-encoded after any prefix (a Basic header's
// "user:"), with both alphabets.
func TestSetKnowsEncodedForms(t *testing.T) {
	const v = "s3cr+t/valu=e~42"
	var s Set
	s.Add(v)
	texts := []string{"GET /x?k=" + url.QueryEscape(v), "GET /p/" + url.PathEscape(v) + "/y",
		"GET /x?k=" + strings.ToLower(url.QueryEscape(v)), // %2b: some encoders write lower-case hex
		"GET /x?k=s3cr%2Bt%2Fvalu%3De~42&q=1",             // JavaScript's encodeURIComponent
	}
	// encodeURIComponent keeps !'()* that Go escapes, and writes a space %20.
	var js1 Set
	js1.Add("it's (a) pass*word!")
	if got, n := js1.Known("GET /x?k=it's%20(a)%20pass*word!&q=1"); n != 1 || got != "GET /x?k=<redacted>&q=1" {
		t.Errorf("the JavaScript-escaped value: %q, %d", got, n)
	}
	for _, prefix := range []string{"", "u:", "us:", "user:"} {
		for _, enc := range []*base64.Encoding{base64.StdEncoding, base64.URLEncoding, base64.RawStdEncoding} {
			texts = append(texts, "Basic "+enc.EncodeToString([]byte(prefix+v+":suffix")))
			texts = append(texts, "Basic "+enc.EncodeToString([]byte(prefix+v)))
		}
	}
	for _, text := range texts {
		if got, n := s.Known(text); n == 0 || !strings.Contains(got, Placeholder) {
			t.Errorf("Known(%q) = %q, %d: the value's form was not found", text, got, n)
		}
	}
	// In JSON, as Go, most others and Python's json.dumps write it.
	var js Set
	js.Add(`pä"ss\w<rd>&🔑`)
	for _, text := range []string{
		`{"password":"p\u00e4\"ss\\w<rd>&\ud83d\udd11"}`, // Python: json.dumps
		`{"password":"pä\"ss\\w\u003crd\u003e\u0026🔑"}`,  // Go: json.Marshal
		`{"password":"pä\"ss\\w<rd>&🔑"}`,
	} {
		if got, n := js.Known(text); got != `{"password":"<redacted>"}` || n != 1 {
			t.Errorf("Known(%s) = %s, %d", text, got, n)
		}
	}
	var short Set
	short.Add("ab+/c")
	if got, n := short.Known(base64.StdEncoding.EncodeToString([]byte("ab+/c"))); n != 0 {
		t.Errorf("a short value's base64 was replaced: %q", got)
	}
}

// A value of MinFoldedLen bytes or more is known in upper and in lower
// case too (a hex token printed with %X is the same token); a shorter one
// only as given (a password "Summer" leaves the word "summer" alone), and
// mixed case is not tried.
func TestSetKnowsCaseChangedValues(t *testing.T) {
	var s Set
	s.Add("9f86d081884c7d659a2feaa0c55ad015", "Tok_Live_Abc1234567", "Summer2024")
	for _, tc := range []struct {
		in, want string
	}{
		{"digest 9F86D081884C7D659A2FEAA0C55AD015.", "digest <redacted>."},
		{"TOK_LIVE_ABC1234567 tok_live_abc1234567", "<redacted> <redacted>"},
		{"SUMMER2024 summer2024", "SUMMER2024 summer2024"},
		{"tOK_lIVE_aBC1234567", "tOK_lIVE_aBC1234567"},
	} {
		if got, _ := s.Known(tc.in); got != tc.want {
			t.Errorf("Known(%q) = %q, want %q", tc.in, got, tc.want)
		}
	}
	if !s.HoldsAtLeast("tool_9F86D081884C7D659A2FEAA0C55AD015", 12) {
		t.Error("an upper-cased value in a name is not found")
	}
}

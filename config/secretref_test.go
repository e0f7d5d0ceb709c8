package config

import (
	"errors"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

func TestSecretNameProblem(t *testing.T) {
	for _, tc := range []struct{ name, want string }{
		{"GITHUB_TOKEN", ""},
		{"team.api-key_2", ""},
		{strings.Repeat("a", MaxSecretName), ""},
		{"", "is empty"},
		{strings.Repeat("a", MaxSecretName+1), "is longer than 128 characters"},
		{"my key", "holds a space: a secret's name uses only letters, digits, '_', '.' and '-'"},
		{"a}b", `holds "}": a secret's name uses only letters, digits, '_', '.' and '-'`},
		{"a/b", `holds "/": a secret's name uses only letters, digits, '_', '.' and '-'`},
		{"a\x00b", `holds \x00: a secret's name uses only letters, digits, '_', '.' and '-'`},
		{"é", `holds \xc3: a secret's name uses only letters, digits, '_', '.' and '-'`},
	} {
		if got := SecretNameProblem(tc.name); got != tc.want {
			t.Errorf("SecretNameProblem(%q) = %q, want %q", tc.name, got, tc.want)
		}
	}
}

func TestSecretRefs(t *testing.T) {
	for _, tc := range []struct {
		in    string
		names []string
		bad   string // the error's text, "" for none
	}{
		{"plain", nil, ""},
		{"${secret:A}", []string{"A"}, ""},
		{"Bearer ${secret:gh.token} and ${secret:A} ${secret:A}", []string{"A", "gh.token"}, ""},
		{"$${secret:A}", nil, ""},                // an escape
		{"$$${secret:A}", nil, ""},               // "$" then the escape "$${"
		{"${X:-${secret:B}}", []string{"B"}, ""}, // in a default
		{"${secret:A:-x}", nil, `"${secret:A:-x}" is not a secret reference: the name holds ":": a secret's name uses only letters, digits, '_', '.' and '-'`},
		{"${secret:my key}", nil, `"${secret:my key}" is not a secret reference: the name holds a space: a secret's name uses only letters, digits, '_', '.' and '-'`},
		{"${secret:}", nil, `"${secret:}" is not a secret reference: the name is empty`},
		{"x ${secret:A", nil, `"${secret:A" is not a secret reference: it has no closing }`},
		{"${secret:a}b}", []string{"a"}, ""}, // the name ends at the first }
		{"${SECRET:A} ${secret_A}", nil, ""}, // not references (nor variables)
	} {
		names, err := SecretRefs(tc.in)
		if diff := cmp.Diff(tc.names, names); diff != "" {
			t.Errorf("SecretRefs(%q) names (-want +got):\n%s", tc.in, diff)
		}
		got := ""
		if err != nil {
			got = err.Error()
		}
		if got != tc.bad {
			t.Errorf("SecretRefs(%q) error = %q, want %q", tc.in, got, tc.bad)
		}
	}
}

// Load keeps references as written, records the names where they expand,
// and makes a server with a malformed reference, or one in a field where
// it does not expand, invalid with a diagnostic at its entry.
func TestLoadSecretRefs(t *testing.T) {
	f := newFixture(t)
	user := f.write(filepath.Join(f.home, "mcp.json"), `{"mcpServers": {
  "gh": {"command": "gh-mcp", "env": {"GITHUB_TOKEN": "${secret:GITHUB_TOKEN}", "MODE": "${MODE:-x}"}},
  "api": {"url": "https://api.example.com/mcp?k=${secret:api.key}", "headers": {"Authorization": "Bearer ${secret:API_TOKEN}"}},
  "whole": {"type": "http", "url": "${secret:ENDPOINT}"},
  "inargs": {"command": "x", "args": ["--token", "${secret:T}"]},
  "badname": {"command": "x", "env": {"T": "${secret:my key}"}}
}}`)
	r := f.load(f.opts())

	gh := r.Server("gh")
	if diff := cmp.Diff([]string{"GITHUB_TOKEN"}, gh.Secrets); diff != "" {
		t.Errorf("gh secrets (-want +got):\n%s", diff)
	}
	if gh.Effective.Env["GITHUB_TOKEN"] != "${secret:GITHUB_TOKEN}" || gh.Availability != Available || len(gh.Diagnostics) != 0 {
		t.Errorf("gh: effective env %v, availability %s, diagnostics %v", gh.Effective.Env, gh.Availability, gh.Diagnostics)
	}
	if gh.MissingEnv != nil {
		t.Errorf("gh: a secret reference is not a missing variable: %v", gh.MissingEnv)
	}
	api := r.Server("api")
	if diff := cmp.Diff([]string{"API_TOKEN", "api.key"}, api.Secrets); diff != "" {
		t.Errorf("api secrets (-want +got):\n%s", diff)
	}
	whole := r.Server("whole")
	if whole.Availability != Available || len(whole.Diagnostics) != 0 {
		t.Errorf("whole: a url made of a secret is checked once resolved, got %s %v", whole.Availability, whole.Diagnostics)
	}

	want := map[string]string{
		"inargs": user + `:5:3: server "inargs": field "args": argument 2: ${secret:T} is expanded only in env values, header values and url` +
			` (fix: pass it to the server in env instead, e.g. "env": {"T": "${secret:T}"} (a command line is visible to every user of the machine))`,
		"badname": user + `:6:3: server "badname": field "env": the value of "T": "${secret:my key}" is not a secret reference: the name holds a space: a secret's name uses only letters, digits, '_', '.' and '-'` +
			" (fix: write ${secret:NAME} with a name of letters, digits, '_', '.' and '-', or $${ for a literal ${)",
	}
	for name, msg := range want {
		rs := r.Server(name)
		if rs.Availability != Invalid {
			t.Errorf("%s availability = %s, want invalid", name, rs.Availability)
		}
		if err := rs.Err(); err == nil || err.Error() != msg {
			t.Errorf("%s error:\n got %v\nwant %s", name, err, msg)
		}
	}
}

func resolvedWith(t *testing.T, def Server) *ResolvedServer {
	t.Helper()
	eff, _ := expandServer(def, func(string) (string, bool) { return "", false })
	names, problems := serverSecretRefs(def)
	if len(problems) > 0 {
		t.Fatalf("problems: %v", problems)
	}
	return &ResolvedServer{Name: "s", Written: def, Effective: eff, Secrets: names}
}

func TestResolveSecrets(t *testing.T) {
	env := map[string]string{"HOST": "api.example.com", "INJECT": "${secret:OTHER}"}
	store := map[string]string{
		"TOKEN": "tok_12345678", "ML": "line1\nline2", "NUL": "a\x00b", "SP": "a b", "OTHER": "never-read",
		"EP": "https://h.example/mcp", "BAD_EP": "ftp://h.example",
	}
	var asked []string
	secret := func(name string) (string, error) {
		asked = append(asked, name)
		v, ok := store[name]
		if !ok {
			return "", errors.New("not set")
		}
		return v, nil
	}

	t.Run("single pass", func(t *testing.T) {
		asked = nil
		rs := resolvedWith(t, Server{URL: "https://${HOST}/mcp?k=${secret:TOKEN}", Type: TypeHTTP,
			Headers: map[string]string{"Authorization": "Bearer ${secret:TOKEN}", "X-Env": "${INJECT}"},
			Env:     map[string]string{"A": "${secret:ML}"}})
		got, err := ResolveSecrets(rs, mapLookup(env), secret)
		if err != nil {
			t.Fatal(err)
		}
		want := rs.Effective
		want.URL = "https://api.example.com/mcp?k=tok_12345678"
		want.Headers = map[string]string{"Authorization": "Bearer tok_12345678", "X-Env": "${secret:OTHER}"}
		want.Env = map[string]string{"A": "line1\nline2"}
		if diff := cmp.Diff(want, got); diff != "" {
			t.Errorf("resolved (-want +got):\n%s", diff)
		}
		// A variable's value is never read for references, and each
		// secret is asked for once.
		if diff := cmp.Diff([]string{"ML", "TOKEN"}, asked); diff != "" {
			t.Errorf("asked (-want +got):\n%s", diff)
		}
		if rs.Effective.Headers["Authorization"] != "Bearer ${secret:TOKEN}" {
			t.Errorf("rs.Effective was changed: %v", rs.Effective.Headers)
		}
	})
	t.Run("no secrets", func(t *testing.T) {
		asked = nil
		rs := resolvedWith(t, Server{Command: "x", Env: map[string]string{"A": "$${secret:TOKEN}"}})
		got, err := ResolveSecrets(rs, mapLookup(env), secret)
		if err != nil || got.Env["A"] != "${secret:TOKEN}" || len(asked) != 0 {
			t.Errorf("got %v, %v, asked %v", got.Env, err, asked)
		}
	})

	for _, tc := range []struct {
		name string
		def  Server
		want string
	}{
		{"missing", Server{Command: "x", Env: map[string]string{"A": "${secret:NOPE}"}}, "secret NOPE (env A): not set"},
		{"nul in env", Server{Command: "x", Env: map[string]string{"A": "${secret:NUL}"}}, "secret NUL (env A): its value holds a NUL byte, which no environment variable can carry"},
		{"newline in header", Server{URL: "https://h/mcp", Headers: map[string]string{"X-K": "${secret:ML}"}}, "secret ML (headers X-K): its value holds a line break, which a header value cannot carry"},
		{"space in url", Server{URL: "https://h/mcp?k=${secret:SP}"}, "secret SP (url): its value holds a space or control character, which a url cannot carry"},
		{"url not http", Server{Type: TypeHTTP, URL: "${secret:BAD_EP}"}, "secret BAD_EP (url): once expanded, the url scheme must be http or https, not \"ftp\""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			rs := resolvedWith(t, tc.def)
			got, err := ResolveSecrets(rs, mapLookup(env), secret)
			var se *SecretError
			if !errors.As(err, &se) || err.Error() != tc.want {
				t.Fatalf("err = %v, want %s", err, tc.want)
			}
			if diff := cmp.Diff(rs.Effective, got); diff != "" {
				t.Errorf("on error the definition is Effective's (-want +got):\n%s", diff)
			}
		})
	}
	rs := resolvedWith(t, Server{Type: TypeHTTP, URL: "${secret:EP}"})
	if got, err := ResolveSecrets(rs, nil, secret); err != nil || got.URL != "https://h.example/mcp" {
		t.Errorf("a url made of a secret: %q, %v", got.URL, err)
	}
}

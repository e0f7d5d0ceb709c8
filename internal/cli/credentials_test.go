package cli

import (
	"encoding/json"
	"maps"
	"slices"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/switchboard-mcp/switchboard/config"
)

// TestLiteralCredentials: what a shared file must not hold, and what it
// may (issue 29, point 12).
func TestLiteralCredentials(t *testing.T) {
	def := config.Server{
		Env: map[string]string{
			"GITHUB_TOKEN":                   "ghp_abcdefghijklmnopqrstuvwxyz0123456789",
			"API_KEY":                        "3f9a1c7e5b2d4a6c",
			"DATABASE_URL":                   "postgres://app:s3cret@db:5432/prod",
			"SLACK":                          "xoxb-1234567890-abcdefghij",
			"already":                        "${MY_TOKEN}",
			"AUTH_MODE":                      "oauth",
			"GOOGLE_APPLICATION_CREDENTIALS": "/home/me/key.json",
			"TOKEN_TTL":                      "3600",
			"AUTH_URL":                       "https://auth.example.com/token",
			"LOG_LEVEL":                      "debug",
			"USE_AUTH":                       "true",
			"lower-key":                      "abcdefgh12345678",
		},
		Headers: map[string]string{
			"Authorization": "Bearer sk-ant-abcdefghijklmnopqrstuvwxyz",
			"X-Api-Key":     "8f2a9c1d7e6b5a4c3d2e1f0a",
			"Accept":        "application/json",
			"Cookie":        "${COOKIE}",
		},
	}
	var got []credential
	for _, c := range literalCredentials("my-api", def) {
		c.value = ""
		got = append(got, c)
	}
	want := []credential{
		{Field: "env", Key: "API_KEY", Var: "API_KEY"},
		{Field: "env", Key: "DATABASE_URL", Var: "DATABASE_URL"},
		{Field: "env", Key: "GITHUB_TOKEN", Var: "GITHUB_TOKEN"},
		{Field: "env", Key: "SLACK", Var: "SLACK"},
		{Field: "env", Key: "lower-key", Var: "LOWER_KEY"},
		{Field: "headers", Key: "Authorization", Var: "MY_API_TOKEN", Scheme: "Bearer "},
		{Field: "headers", Key: "X-Api-Key", Var: "MY_API_API_KEY"},
	}
	if diff := cmp.Diff(want, got, cmp.AllowUnexported(credential{})); diff != "" {
		t.Errorf("literalCredentials (-want +got):\n%s", diff)
	}
}

// The rewrite changes only the values, keeps the scheme, and leaves a
// definition without credentials byte for byte.
// Arguments hold credentials too, as the public configurations write
// them: Stripe's --api-key=sk_…, docker's -e NAME=VALUE, a database URL.
func TestLiteralCredentialsInArgs(t *testing.T) {
	def := config.Server{Args: []string{
		"-y", "@stripe/mcp", "--tools=all", "--api-key=sk_test_51Habcdefghijklmnopqrstuvwxyz",
		"run", "-e", "GITHUB_PERSONAL_ACCESS_TOKEN=ghp_abcdefghijklmnopqrstuvwxyz0123456789", "-e", "LOG_LEVEL=debug",
		"--token", "3f9a1c7e5b2d4a6c", "--key-file", "/home/me/key.pem", "--max-tokens", "4096",
		"postgresql://app:s3cret@localhost:5432/db", "https://example.com/mcp", "${workspaceFolder}",
		"xoxb-1234567890-abcdefghij", "--api-key=${STRIPE_KEY}",
	}}
	var got []credential
	for _, c := range literalCredentials("stripe", def) {
		c.value = ""
		got = append(got, c)
	}
	want := []credential{
		{Field: "args", Key: "3", Flag: "--api-key", Var: "STRIPE_API_KEY", Scheme: "--api-key="},
		{Field: "args", Key: "6", Flag: "GITHUB_PERSONAL_ACCESS_TOKEN", Var: "GITHUB_PERSONAL_ACCESS_TOKEN", Scheme: "GITHUB_PERSONAL_ACCESS_TOKEN="},
		{Field: "args", Key: "10", Flag: "--token", Var: "STRIPE_TOKEN"},
		{Field: "args", Key: "15", Var: "STRIPE_URL"},
		{Field: "args", Key: "18", Var: "STRIPE_TOKEN_2"},
	}
	if diff := cmp.Diff(want, got, cmp.AllowUnexported(credential{})); diff != "" {
		t.Errorf("literalCredentials (-want +got):\n%s", diff)
	}
	out, _, err := withCredentialRefs("stripe", []byte(`{"command":"npx","args":["-y","@stripe/mcp","--api-key=sk_test_51Habcdefghijklmnopqrstuvwxyz"]}`), nil, false)
	if err != nil || string(out) != `{"command":"npx","args":["-y","@stripe/mcp","--api-key=${STRIPE_API_KEY}"]}` {
		t.Errorf("withCredentialRefs = %s, %v", out, err)
	}
}

// Hosted servers hand out urls with the key in the query (Smithery's
// ?api_key=…): the value becomes a ${VAR}, the rest of the url stays.
func TestLiteralCredentialsInURL(t *testing.T) {
	for _, tc := range []struct{ url, want string }{
		{"https://server.smithery.ai/@upstash/context7-mcp/mcp?api_key=3f9a1c7e-5b2d-4a6c&profile=x", "https://server.smithery.ai/@upstash/context7-mcp/mcp?api_key=${SMITHERY_API_KEY}&profile=x"},
		{"https://x.example/mcp?profile=p&token=ghp_abcdefghijklmnopqrstuvwxyz0123456789#f", "https://x.example/mcp?profile=p&token=${SMITHERY_TOKEN}#f"},
		// Each secret parameter its own variable, the others as they were.
		{"https://x.example/mcp?api_key=AAAAAAAAAA&mode=fast&token=BBBBBBBBBB&access_token=CCCCCCCCCC#top",
			"https://x.example/mcp?api_key=${SMITHERY_API_KEY}&mode=fast&token=${SMITHERY_TOKEN}&access_token=${SMITHERY_ACCESS_TOKEN}#top"},
		{"https://x.example/mcp?token=AAAAAAAAAA&token=BBBBBBBBBB", "https://x.example/mcp?token=${SMITHERY_TOKEN}&token=${SMITHERY_TOKEN_2}"},
		{"https://x.example/mcp?api_key=${KEY}", ""},
		{"https://x.example/mcp?max_tokens=4096&key=short", ""},
		{"https://x.example/sse", ""},
	} {
		raw, _ := json.Marshal(map[string]string{"url": tc.url})
		out, creds, err := withCredentialRefs("smithery", raw, nil, false)
		if err != nil {
			t.Fatal(err)
		}
		var got struct{ URL string }
		_ = json.Unmarshal(out, &got)
		if tc.want == "" {
			if len(creds) != 0 || got.URL != tc.url {
				t.Errorf("%s: = %s, %v; want it unchanged", tc.url, got.URL, creds)
			}
			continue
		}
		if got.URL != tc.want {
			t.Errorf("%s: = %s, want %s", tc.url, got.URL, tc.want)
		}
		// What a note shows is what is written.
		for _, c := range creds {
			if c.ref() != tc.want {
				t.Errorf("%s: %s shown as %s, want %s", tc.url, c.what(), c.ref(), tc.want)
			}
		}
	}
}

func TestWithCredentialRefs(t *testing.T) {
	raw := []byte(`{"type":"http","url":"https://a.example/mcp","headers":{"Authorization":"Bearer sk-ant-abcdefghijklmnopqrstuvwxyz","a/b~c":"ghp_abcdefghijklmnopqrstuvwxyz0123456789"}}`)
	out, creds, err := withCredentialRefs("gh", raw, nil, false)
	if err != nil {
		t.Fatal(err)
	}
	want := `{"type":"http","url":"https://a.example/mcp","headers":{"Authorization":"Bearer ${GH_TOKEN}","a/b~c":"${GH_A_B_C}"}}`
	if string(out) != want || len(creds) != 2 {
		t.Errorf("got %s (%d credentials), want %s", out, len(creds), want)
	}
	clean := []byte(`{"command":"x", "env": {"A": "${A_TOKEN}"}}`)
	if out, creds, _ := withCredentialRefs("x", clean, nil, false); string(out) != string(clean) || creds != nil {
		t.Errorf("a clean definition changed: %s", out)
	}
	// The user's own file (keptOnly): only what was kept in the store
	// becomes a reference; a credential the person kept in the file stays.
	keepAuth := func(c credential) (string, error) {
		if c.Key == "Authorization" {
			return "GH_TOKEN", nil
		}
		return "", nil
	}
	out, creds, err = withCredentialRefs("gh", raw, keepAuth, true)
	want = `{"type":"http","url":"https://a.example/mcp","headers":{"Authorization":"Bearer ${secret:GH_TOKEN}","a/b~c":"ghp_abcdefghijklmnopqrstuvwxyz0123456789"}}`
	if err != nil || string(out) != want || len(creds) != 1 {
		t.Errorf("kept only: got %s (%d credentials, %v), want %s", out, len(creds), err, want)
	}
	if out, creds, _ := withCredentialRefs("gh", raw, func(credential) (string, error) { return "", nil }, true); string(out) != string(raw) || creds != nil {
		t.Errorf("nothing kept, yet the file changed: %s", out)
	}
	// Two in one url, one kept in the store: each is its own reference,
	// and what stays typed stays as it was.
	raw = []byte(`{"url":"https://x.example/mcp?api_key=AAAAAAAAAA&token=BBBBBBBBBB"}`)
	keepToken := func(c credential) (string, error) {
		if c.Key == "token" {
			return "X_TOKEN", nil
		}
		return "", nil
	}
	out, creds, err = withCredentialRefs("x", raw, keepToken, true)
	want = `{"url":"https://x.example/mcp?api_key=AAAAAAAAAA&token=${secret:X_TOKEN}"}`
	if err != nil || string(out) != want || len(creds) != 1 || creds[0].ref() != "https://x.example/mcp?api_key=AAAAAAAAAA&token=${secret:X_TOKEN}" {
		t.Errorf("url, token kept: got %s (%+v, %v), want %s", out, creds, err, want)
	}
	keepBoth := func(c credential) (string, error) { return c.Var, nil }
	out, _, err = withCredentialRefs("x", raw, keepBoth, false)
	want = `{"url":"https://x.example/mcp?api_key=${secret:X_API_KEY}&token=${secret:X_TOKEN}"}`
	if err != nil || string(out) != want {
		t.Errorf("url, both kept: got %s (%v), want %s", out, err, want)
	}
}

// Whatever the values, the rewritten definition is valid JSON with the same
// keys, and holds none of the credentials it found.
func FuzzWithCredentialRefs(f *testing.F) {
	f.Add("GITHUB_TOKEN", "ghp_abcdefghijklmnopqrstuvwxyz0123456789", "Authorization", "Bearer sk-abcdefghijklmnopqrstuvwxyz")
	f.Add("a/b~c", "postgres://u:p@h/db", "X-Api-Key", "${KEY}")
	f.Add("", "", "", "")
	f.Fuzz(func(t *testing.T, envKey, envValue, header, headerValue string) {
		def := map[string]any{"command": "x", "env": map[string]string{envKey: envValue}, "headers": map[string]string{header: headerValue}}
		raw, err := json.Marshal(def)
		if err != nil {
			return
		}
		out, creds, err := withCredentialRefs("srv", raw, nil, false)
		if err != nil {
			t.Fatalf("%s: %v", raw, err)
		}
		type fields struct {
			Env     map[string]string `json:"env"`
			Headers map[string]string `json:"headers"`
		}
		var before, back fields
		_ = json.Unmarshal(raw, &before) // keys as JSON has them (invalid UTF-8 made U+FFFD)
		if err := json.Unmarshal(out, &back); err != nil {
			t.Fatalf("%s is not JSON: %v", out, err)
		}
		if !cmp.Equal(slices.Sorted(maps.Keys(before.Env)), slices.Sorted(maps.Keys(back.Env))) ||
			!cmp.Equal(slices.Sorted(maps.Keys(before.Headers)), slices.Sorted(maps.Keys(back.Headers))) {
			t.Fatalf("keys changed: %s -> %s", raw, out)
		}
		for _, c := range creds {
			got := back.Env[c.Key]
			if c.Field == "headers" {
				got = back.Headers[c.Key]
			}
			if got != c.ref() {
				t.Fatalf("%s %q = %q, want %q", c.Field, c.Key, got, c.ref())
			}
		}
	})
}

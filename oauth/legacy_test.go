package oauth

import (
	"encoding/json"
	"net/url"
	"strings"
	"testing"
)

func TestLegacyIssuerRewrite(t *testing.T) {
	const origin = "http://127.0.0.1:8080"
	for _, tc := range []struct {
		body   string
		accept bool
	}{
		{`{"issuer":"http://127.0.0.1:8080/oauth","token_endpoint":"http://127.0.0.1:8080/oauth/token"}`, true},
		{`{"issuer":"HTTP://127.0.0.1:8080/a/b/"}`, true},
		{`{"issuer":"http://127.0.0.1:8080"}`, false},  // matches: nothing to do
		{`{"issuer":"http://127.0.0.1:8080/"}`, false}, // matches, trailing slash
		{`{"issuer":"https://attacker.example.com"}`, false},
		{`{"issuer":"https://127.0.0.1:8080/oauth"}`, false}, // another scheme
		{`{"issuer":"http://127.0.0.1:8081/oauth"}`, false},  // another port
		{`{"issuer":"http://127.0.0.1/oauth"}`, false},       // default port is another origin string
		{`{"issuer":"http://127.0.0.1:8080.attacker.example/oauth"}`, false},
		{`{"issuer":"http://user@127.0.0.1:8080/oauth"}`, false},
		{`{"issuer":"http://127.0.0.1:8080/oauth?x=1"}`, false},
		{`{"issuer":"http://127.0.0.1:8080/oauth#f"}`, false},
		{`{"issuer":"/oauth"}`, false},
		{`{"issuer":"http://127.0.0.1:8080/oauth","ISSUER":"https://attacker.example.com"}`, false},
		{`{"issuer":7}`, false},
		{`{}`, false},
		{`not json`, false},
	} {
		out, issuer, ok := legacyIssuerRewrite([]byte(tc.body), origin)
		if ok != tc.accept {
			t.Errorf("%s: accepted = %v, want %v", tc.body, ok, tc.accept)
			continue
		}
		if !ok {
			continue
		}
		var before, after map[string]any
		_ = json.Unmarshal([]byte(tc.body), &before)
		if err := json.Unmarshal(out, &after); err != nil {
			t.Fatalf("%s: rewritten metadata is not JSON: %v", tc.body, err)
		}
		if after["issuer"] != origin || issuer != before["issuer"] {
			t.Errorf("%s: issuer %v (replaced %q), want %s replacing %v", tc.body, after["issuer"], issuer, origin, before["issuer"])
		}
		delete(before, "issuer")
		delete(after, "issuer")
		if len(before) != len(after) || (before["token_endpoint"] != after["token_endpoint"]) {
			t.Errorf("%s: other fields changed: %v", tc.body, after)
		}
	}
}

// FuzzLegacyIssuerRewrite: whatever the metadata, an accepted issuer is a
// different URL of exactly the given origin, and only the issuer changes.
func FuzzLegacyIssuerRewrite(f *testing.F) {
	f.Add([]byte(`{"issuer":"http://127.0.0.1:8080/oauth","authorization_endpoint":"http://127.0.0.1:8080/oauth/authorize"}`), "http://127.0.0.1:8080")
	f.Add([]byte(`{"issuer":"https://attacker.example.com"}`), "https://mcp.example.com")
	f.Add([]byte(`{"issuer":"https://mcp.example.com/"}`), "https://mcp.example.com")
	f.Add([]byte(`{"Issuer":"https://mcp.example.com/x","issuer":"https://mcp.example.com/y"}`), "https://mcp.example.com")
	f.Fuzz(func(t *testing.T, body []byte, origin string) {
		out, issuer, ok := legacyIssuerRewrite(body, origin)
		if !ok {
			if out != nil || issuer != "" {
				t.Fatalf("refused with a result")
			}
			return
		}
		u, err := url.Parse(issuer)
		if err != nil || originOf(issuer) != origin || strings.TrimSuffix(issuer, "/") == origin ||
			u.User != nil || u.RawQuery != "" || u.Fragment != "" {
			t.Fatalf("accepted issuer %q for origin %q", issuer, origin)
		}
		var before, after map[string]json.RawMessage
		if json.Unmarshal(body, &before) != nil || json.Unmarshal(out, &after) != nil {
			t.Fatalf("accepted or produced metadata that is not a JSON object")
		}
		var got string
		if json.Unmarshal(after["issuer"], &got) != nil || got != origin {
			t.Fatalf("issuer rewritten to %s, want %q", after["issuer"], origin)
		}
		if len(before) != len(after) {
			t.Fatalf("fields added or dropped: %d → %d", len(before), len(after))
		}
		for k := range after {
			if k != "issuer" && strings.EqualFold(k, "issuer") {
				t.Fatalf("a second issuer key %q survived", k)
			}
		}
	})
}

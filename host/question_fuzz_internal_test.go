package host

import (
	"encoding/json"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// FuzzRefuseQuestion feeds refuseQuestion a server's question as it comes
// off the wire (mode, URL, message, requested schema): it never panics,
// its reason is one valid UTF-8 line of bounded length, a form over the
// field bound is always refused, and a URL question is refused unless its
// address is https (or http on loopback) without a user name.
func FuzzRefuseQuestion(f *testing.F) {
	f.Add("", "", "Your name?", `{"type":"object","properties":{"name":{"type":"string"}}}`)
	f.Add("", "", "Log in", `{"type":"object","properties":{"githubToken":{"type":"string","title":"GitHub token"}}}`)
	f.Add("url", "https://github.com@evil.example/login", "Sign in", ``)
	f.Add("url", "http://127.0.0.1:8080/cb", "Sign in", ``)
	f.Add("url", "javascript:alert(1)", "", ``)
	f.Add("", "", "", `{"properties":{"pin":{"enum":["a"]},"cvv":{"type":"boolean"}}}`)
	f.Add("", "", "", `{"properties":{"x":{"title":"token `+strings.Repeat("\u202e", 900)+`"}}}`)
	f.Fuzz(func(t *testing.T, mode, addr, msg, schema string) {
		p := &mcp.ElicitParams{Mode: mode, URL: addr, Message: msg}
		if schema != "" {
			var v any
			if json.Unmarshal([]byte(schema), &v) != nil {
				return
			}
			p.RequestedSchema = v
		}
		why := refuseQuestion(p, true)
		if strings.ContainsAny(why, "\n\r") || len(why) > 1024 || !utf8.ValidString(why) && utf8.ValidString(schema+addr) {
			t.Fatalf("reason %q: not one bounded line", why)
		}
		if refuseQuestion(p, false) == "" {
			t.Fatal("a question outside any call was let through")
		}
		if m, ok := p.RequestedSchema.(map[string]any); ok && mode != "url" && addr == "" {
			if props, ok := m["properties"].(map[string]any); ok && len(props) > maxQuestionFields && why == "" {
				t.Fatalf("a form of %d fields was let through", len(props))
			}
		}
		if mode == "url" && why == "" && !strings.HasPrefix(strings.ToLower(addr), "https:") && !strings.HasPrefix(strings.ToLower(addr), "http:") {
			t.Fatalf("URL question to %q let through", addr)
		}
	})
}

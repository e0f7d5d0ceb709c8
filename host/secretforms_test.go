package host_test

import (
	"encoding/base64"
	"net/url"
	"strings"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// TestSecretsInTheFormsServersPrintThem: a server that prints the secret
// Switchboard gave it as it went out — query-escaped in a url it called,
// inside the base64 of a Basic authorization header it sent — does not
// hand it to the model. Before, only the value as it is was replaced, and
// both forms reached the model whole.
func TestSecretsInTheFormsServersPrintThem(t *testing.T) {
	const token = "tok+live/9c8b7a6f=5e4d3c2b1a0f"
	smug := stdio("smug", "smuggler", "-encoded")
	smug.Effective.Env = map[string]string{"SMUGGLER_API_TOKEN": token}
	smug.Written.Env = smug.Effective.Env
	h := newHost(t, cfgOf(smug), nil)

	res := mustCall(t, h, "mcp__smug__encoded", map[string]any{})
	var texts []string
	for _, c := range res.Content {
		if tc, ok := c.(*mcp.TextContent); ok {
			texts = append(texts, tc.Text)
		}
	}
	if len(texts) != 2 {
		t.Fatalf("result: %s", unescapedJSON(t, res))
	}
	if got := texts[0]; strings.Contains(got, url.QueryEscape(token)) || got != "GET https://api.example.com/v1?key=<redacted>" {
		t.Errorf("the query-escaped token reached the model: %q", got)
	}
	got := texts[1]
	if !strings.HasPrefix(got, "Authorization: Basic ") || !strings.Contains(got, "<redacted>") {
		t.Fatalf("the Basic header was not redacted: %q", got)
	}
	// What is left of the base64 on either side holds no run of the
	// token's bytes.
	for _, part := range strings.Split(strings.TrimPrefix(got, "Authorization: Basic "), "<redacted>") {
		for cut := 0; cut < 4 && cut < len(part); cut++ {
			b, _ := base64.RawStdEncoding.DecodeString(strings.TrimRight(part[cut:], "="))
			for i := 0; i+6 <= len(token); i++ {
				if strings.Contains(string(b), token[i:i+6]) {
					t.Fatalf("the Basic header still carries %q of the token: %q", token[i:i+6], got)
				}
			}
		}
	}
}

package gateway_test

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/switchboard-mcp/switchboard/gateway"
	"github.com/switchboard-mcp/switchboard/host"
	"github.com/switchboard-mcp/switchboard/policy"
)

// FuzzPermissionQuestion: whatever the arguments, the value of a secret
// key never reaches the question a client shows.
func FuzzPermissionQuestion(f *testing.F) {
	f.Add("api_token", "ghp_0123456789abcdefghij", `{"repo":"o/r"}`)
	f.Add("password", "hunter2hunter2", `{}`)
	f.Add("Authorization", "Bearer abcdefghijkl", `{"nested":{"x":1}}`)
	f.Fuzz(func(t *testing.T, key, secret, rest string) {
		args := map[string]any{}
		_ = json.Unmarshal([]byte(rest), &args)
		if args == nil {
			args = map[string]any{}
		}
		args[key] = secret
		q := gateway.PermissionQuestion(host.PermitRequest{Tool: "mcp__s__t", Args: args}, policy.Decision{Action: policy.Ask, Reason: "r"})
		if !strings.HasPrefix(q.Message, "Allow mcp__s__t with ") {
			t.Fatalf("message %q", q.Message)
		}
		secretKey := false
		for _, w := range []string{"token", "secret", "password", "passwd", "key", "auth", "cookie", "credential"} {
			if strings.Contains(strings.ToLower(key), w) {
				secretKey = true
			}
		}
		if !secretKey || len(secret) < 4 {
			return
		}
		enc, _ := json.Marshal(secret)
		inner := strings.Trim(string(enc), `"`)
		// The value may legitimately appear elsewhere (in another argument
		// or the tool name); only check values that do not.
		if strings.Contains(rest, secret) || strings.Contains(rest, inner) || strings.Contains(key, secret) || strings.Contains("mcp__s__t r", inner) || strings.Contains(`{}":,`, inner) {
			return
		}
		if strings.Contains(q.Message, inner) {
			t.Errorf("question shows the secret %q of %q: %s", secret, key, q.Message)
		}
	})
}

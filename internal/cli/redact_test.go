package cli

import (
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/switchboard-mcp/switchboard/internal/testserver/testhttp"
)

// TestNoSecretInOutputOrLogs (docs/security.md, What is never logged): the
// real commands, at --log-level
// debug, with secrets planted in env, headers, tool arguments and a
// server's stderr; no planted value may appear on stdout, stderr or in any
// file under the logs directory.
func TestNoSecretInOutputOrLogs(t *testing.T) {
	w := newRTWorld(t)
	web := testhttp.Start(t, "echo", testhttp.Options{RequireHeader: "Authorization: Bearer planted-secret-2"})
	echo := w.server("echo")
	echo["env"] = map[string]string{"API_TOKEN": "planted-secret-1", "MODE": "fast"}
	leaky := w.server("exit-init", "-message", "fatal: token planted-secret-1 was rejected (db password planted-secret-4)")
	leaky["env"] = map[string]string{"API_TOKEN": "planted-secret-1", "DB_PASSWORD": "planted-secret-4"}
	w.userServers(map[string]any{
		"echo":  echo,
		"leaky": leaky,
		"web": map[string]any{"type": "http", "url": web.URL,
			"headers": map[string]string{"Authorization": "Bearer planted-secret-2"}},
		"webref": map[string]any{"type": "http", "url": web.URL + "?access_token=planted-secret-5",
			"headers": map[string]string{"Authorization": "Bearer ${WEB_TOKEN}"}},
	})
	w.writeJSON(filepath.Join(w.sb, "settings.json"), map[string]any{"permissions": map[string]any{"allow": []string{"mcp__echo", "mcp__web"}}})

	var all strings.Builder
	run := func(wantCode int, args ...string) string {
		t.Helper()
		args = append(args, "--log-level", "debug")
		out, errOut, code := w.run(false, args...)
		if code != wantCode {
			t.Errorf("%s: exit %d, want %d\nstdout:\n%s\nstderr:\n%s", strings.Join(args, " "), code, wantCode, out, errOut)
		}
		all.WriteString(out + errOut)
		return out + errOut
	}
	run(0, "status")
	status := run(0, "status", "--json")
	run(0, "tools")
	run(0, "tools", "--json")
	// The echo tool refuses arguments it does not know (an isError result,
	// exit 1), after the call was made and logged with them.
	call := run(1, "call", "mcp__echo__echo", `{"text":"hello","password":"planted-secret-3"}`)
	run(1, "call", "mcp__web__echo", `{"text":"over http","token":"planted-secret-3"}`)
	run(0, "call", "mcp__web__echo", `{"text":"over http"}`)
	get := run(0, "mcp", "get", "echo")
	run(0, "mcp", "get", "web")
	run(0, "mcp", "get", "webref", "--json")
	run(0, "mcp", "list")
	run(0, "mcp", "list", "--json")

	// The test proves something only if the secrets' neighbours did show.
	for what, s := range map[string]string{
		"status shows the leaky server's stderr": "fatal: token",
		"debug logging is on":                    "calling tool",
		"mcp get shows the env keys":             "API_TOKEN=<redacted>",
		"mcp get shows plain values":             "MODE=fast",
		"the call reached the tool":              "unexpected additional properties",
		"the call over HTTP ran":                 "over http",
		"a ${VAR} header is shown as written":    "Bearer ${WEB_TOKEN}",
	} {
		if !strings.Contains(all.String(), s) {
			t.Errorf("%s: %q is nowhere in the output", what, s)
		}
	}
	if !strings.Contains(status, "fatal: token") || !strings.Contains(call, "password") || !strings.Contains(get, "API_TOKEN") {
		t.Errorf("outputs lack what they are about:\nstatus: %s\ncall: %s\nget: %s", status, call, get)
	}

	logs := map[string]string{}
	err := filepath.WalkDir(filepath.Join(w.sb, "logs"), func(path string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		b, err := os.ReadFile(path)
		logs[path] = string(b)
		return err
	})
	if err != nil || len(logs) == 0 {
		t.Fatalf("no log files under %s (%v)", filepath.Join(w.sb, "logs"), err)
	}
	for path, text := range logs {
		if !strings.Contains(text, "calling tool") {
			t.Errorf("%s has no debug line for the calls; the check below would prove little", path)
		}
		for _, secret := range planted {
			if strings.Contains(text, secret) {
				t.Errorf("log %s holds %s", path, secret)
			}
		}
	}
	for _, secret := range planted {
		if strings.Contains(all.String(), secret) {
			t.Errorf("stdout/stderr holds %s:\n%s", secret, all.String())
		}
	}
}

var planted = []string{"planted-secret-1", "planted-secret-2", "planted-secret-3", "planted-secret-4", "planted-secret-5"}

// Issue 28 point 13: `mcp get` printed an env value such as GH=ghp_… in
// clear where `status` scrubs it (the value has a token's shape, though
// its key names no secret). Every display of an env or header value goes
// through the scrub status applies.
func TestMCPGetScrubsEnvLikeStatus(t *testing.T) {
	w := newRTWorld(t)
	const token = "ghp_Zq8xW2vN4mT6kP0rS3uY5bA7cD9eF1gH2jK4"
	echo := w.server("echo")
	echo["env"] = map[string]string{"GH": token, "MODE": "fast"}
	// The witness: status scrubs the value from what a server prints.
	leaky := w.server("exit-init", "-message", "fatal: rejected "+token)
	leaky["env"] = map[string]string{"GH": token}
	w.userServers(map[string]any{"echo": echo, "leaky": leaky})
	outputs := map[string]string{}
	for _, args := range [][]string{{"status"}, {"mcp", "get", "echo"}, {"mcp", "get", "echo", "--json"}} {
		out, errOut, code := w.run(false, args...)
		if code != 0 {
			t.Errorf("%s: exit %d\nstdout:\n%s\nstderr:\n%s", strings.Join(args, " "), code, out, errOut)
		}
		outputs[strings.Join(args, " ")] = out + errOut
	}
	for cmd, out := range outputs {
		if strings.Contains(out, token) {
			t.Errorf("%s shows the token:\n%s", cmd, out)
		}
	}
	for cmd, s := range map[string]string{"status": "fatal: rejected <redacted>", "mcp get echo": "GH=<redacted>", "mcp get echo --json": `"GH": "<redacted>"`} {
		if !strings.Contains(outputs[cmd], s) {
			t.Errorf("%s does not show %q:\n%s", cmd, s, outputs[cmd])
		}
	}
	if !strings.Contains(outputs["mcp get echo"], "MODE=fast") {
		t.Errorf("mcp get hides a plain value too:\n%s", outputs["mcp get echo"])
	}
}

package cli

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/switchboard-mcp/switchboard/gateway"
)

// serve --http's second line says what a client must send — the keys of
// the auth file, the token of --token-file, or nothing on a loopback
// gateway without either — and where the console is, never a token; it
// asks for a credential exactly when the guard does.
func TestServeCallersLine(t *testing.T) {
	dir := t.TempDir()
	file := filepath.Join(dir, gateway.AuthFileName)
	if _, err := gateway.AddKey(file, "alice", nil, time.Now()); err != nil {
		t.Fatal(err)
	}
	empty := filepath.Join(dir, "empty.json")
	if err := os.WriteFile(empty, []byte("{}\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	const token = "tok-abcdefghijklmnopqrst"
	for _, tt := range []struct {
		name  string
		opts  *ServeOptions
		want  []string
		never []string
	}{
		{"nothing", &ServeOptions{auth: gateway.NewAuth(&gateway.AuthOptions{File: filepath.Join(dir, "none.json")})},
			[]string{"callers need no credential", "switchboard gateway key add NAME adds one"}, []string{"Bearer"}},
		{"token", &ServeOptions{Token: token, auth: gateway.NewAuth(&gateway.AuthOptions{File: filepath.Join(dir, "none.json"), SharedToken: token})},
			[]string{"callers send Authorization: Bearer with the gateway's token (--token-file or $SWITCHBOARD_GATEWAY_TOKEN)"}, []string{token, "a key of"}},
		{"keys", &ServeOptions{auth: gateway.NewAuth(&gateway.AuthOptions{File: file})},
			[]string{"callers send Authorization: Bearer with a key of " + file}, []string{"token"}},
		// An auth file without a usable key still asks every caller for one
		// (fail closed): the line must not say none is needed.
		{"an auth file without keys", &ServeOptions{auth: gateway.NewAuth(&gateway.AuthOptions{File: empty})},
			[]string{"callers send Authorization: Bearer with a key of " + empty + ", which holds no usable key now"}, []string{"no credential"}},
	} {
		line := tt.opts.callersLine()
		for _, w := range tt.want {
			if !strings.Contains(line, w) {
				t.Errorf("%s: %q, want %q", tt.name, line, w)
			}
		}
		for _, n := range tt.never {
			if strings.Contains(line, n) {
				t.Errorf("%s: %q says %q", tt.name, line, n)
			}
		}
	}
}

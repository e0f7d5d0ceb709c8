package cli

import (
	"bufio"
	"context"
	"encoding/hex"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/switchboard-mcp/switchboard/gateway"
	"github.com/switchboard-mcp/switchboard/internal/testserver"
)

// setSecret runs `switchboard secret set [--principal P] NAME` with the
// value on stdin.
func (w *gatewayWorld) setSecret(t *testing.T, principal, name, value string) {
	t.Helper()
	args := []string{"secret", "set", name}
	if principal != "" {
		args = append(args, "--principal", principal)
	}
	cmd := w.command(t, args...)
	cmd.Stdin = strings.NewReader(value + "\n")
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("secret set %s (principal %q): %v\n%s", name, principal, err, out)
	}
}

// TestGatewayPerMemberCredentials is issue 31's point 6 on a real `serve
// --http` with keys: the echo test server reads its TEAM_TOKEN from
// ${secret:TEAM_TOKEN}, and the auth file marks it perMember. Alice's and
// Bob's calls reach processes of their own that got their own values,
// never each other's nor the gateway's; Carol, who has none, is refused
// with the command that adds hers, except on the server whose fallback
// is the gateway's value; the shared token's caller uses the gateway's;
// the audit names whose credential each call used, never a value.
func TestGatewayPerMemberCredentials(t *testing.T) {
	w := newGatewayWorld(t)
	w.clientProtocol = "2025-11-25"
	cmd, args := testserver.Command("echo")
	def := map[string]any{"type": "stdio", "command": cmd, "args": args, "env": map[string]string{"TEAM_TOKEN": "${secret:TEAM_TOKEN}"}}
	writeJSON(t, filepath.Join(w.sbHome, "mcp.json"), map[string]any{"mcpServers": map[string]any{"team": def, "teamfb": def}})
	w.permissions(t, []string{"mcp__team", "mcp__teamfb"}, nil)
	const shared = "shared-gateway-token-0123456789"
	w.env = append(w.env, TokenEnv+"="+shared, "SWITCHBOARD_SECRET_STORE=file")
	alice := w.addKey(t, "alice")
	bob := w.addKey(t, "bob")
	carol := w.addKey(t, "carol")
	dave := w.addKey(t, "dave")
	w.editAuth(t, func(f *gateway.AuthFile) {
		f.PerMember = map[string]*gateway.PerMember{"team": {}, "teamfb": {Fallback: gateway.FallbackShared}}
		f.Principals["dave"].Deny = []string{"mcp__team__env"}
	})
	const (
		gatewayValue = "gateway-value-5d1e"
		aliceValue   = "alice-value-93b7"
		bobValue     = "bob-value-27c4"
	)
	w.setSecret(t, "", "TEAM_TOKEN", gatewayValue)
	w.setSecret(t, "alice", "TEAM_TOKEN", aliceValue)
	w.setSecret(t, "bob", "TEAM_TOKEN", bobValue)
	w.setSecret(t, "dave", "TEAM_TOKEN", "dave-value-0c5e")
	if out, err := w.command(t, "secret", "list", "--principal", "alice").CombinedOutput(); err != nil || !strings.Contains(string(out), "TEAM_TOKEN") || strings.Contains(string(out), aliceValue) {
		t.Errorf("secret list --principal alice: %v\n%s", err, out)
	}
	for _, p := range []string{"token", " alice", "a\x07b"} {
		if out, err := w.command(t, "secret", "set", "--principal", p, "TEAM_TOKEN").CombinedOutput(); err == nil || !strings.Contains(string(out), "--principal") {
			t.Errorf("secret set --principal %q: %v\n%s; want a usage error", p, err, out)
		}
	}

	base, auditFile, stop := startAuditedGateway(t, w)
	defer stop()
	ctx, cancel := context.WithTimeout(context.Background(), 90*time.Second)
	defer cancel()

	values := []string{gatewayValue, aliceValue, bobValue}
	// got calls tool as key's holder and checks that the one value it
	// got is want.
	got := func(key, tool, want string) string {
		t.Helper()
		c := w.teamClient(t, ctx, base, key, "deny")
		// Hex-encoded: the gateway keeps the values it gave a server out
		// of results (docs/security.md, What the model reads).
		enveloped, isErr := callText(t, ctx, c.cs, tool, map[string]any{"names": []string{"TEAM_TOKEN"}, "hex": true})
		if isErr {
			t.Fatalf("%s: error %q", tool, enveloped)
		}
		b, err := hex.DecodeString(hexRE.FindString(enveloped))
		if err != nil || len(b) == 0 {
			t.Fatalf("%s answered %q, not hex", tool, enveloped)
		}
		txt := string(b)
		for _, v := range values {
			if strings.Contains(txt, v) != (v == want) {
				t.Errorf("%s: %q; want the value %s and no other", tool, txt, want)
			}
		}
		pid, isErr := callText(t, ctx, c.cs, strings.Replace(tool, "__env", "__pid", 1), nil)
		if isErr {
			t.Fatalf("pid: %q", pid)
		}
		return pidRE.FindString(pid)
	}
	alicePID := got(alice, "team__env", aliceValue)
	bobPID := got(bob, "team__env", bobValue)
	sharedPID := got(shared, "team__env", gatewayValue)
	if alicePID == bobPID || alicePID == sharedPID || bobPID == sharedPID {
		t.Errorf("upstream processes: alice %s, bob %s, shared %s; want one each", alicePID, bobPID, sharedPID)
	}
	// A second session of alice's uses her connection again; her own
	// value, passed back as an argument, is redacted in the audit line as
	// the gateway's would be.
	if again := got(alice, "team__env", aliceValue); again != alicePID {
		t.Errorf("alice's second session reached pid %s, her first %s", again, alicePID)
	}
	ac := w.teamClient(t, ctx, base, alice, "deny")
	if txt, isErr := callText(t, ctx, ac.cs, "team__echo", map[string]any{"text": "mine: " + aliceValue}); isErr || !strings.Contains(txt, "mine: ") {
		t.Errorf("alice's echo: isError %v, %q", isErr, txt)
	}

	// Dave's own connection has the gateway's rules: his deny holds.
	dc := w.teamClient(t, ctx, base, dave, "deny")
	if txt, isErr := callText(t, ctx, dc.cs, "team__env", map[string]any{"names": []string{"TEAM_TOKEN"}}); !isErr || strings.Contains(txt, "dave-value") || !strings.Contains(txt, "denied") {
		t.Errorf("dave, denied mcp__team__env: isError %v, %q", isErr, txt)
	}

	// Carol has no value: refused on team, the gateway's on teamfb.
	cc := w.teamClient(t, ctx, base, carol, "deny")
	txt, isErr := callText(t, ctx, cc.cs, "team__env", map[string]any{"names": []string{"TEAM_TOKEN"}})
	if !isErr || !strings.Contains(txt, "carol has no value of TEAM_TOKEN") || !strings.Contains(txt, "switchboard secret set --principal carol TEAM_TOKEN") || !strings.Contains(txt, "switchboard gateway secret set TEAM_TOKEN --url") {
		t.Errorf("carol without a value: isError %v, %q; want the refusal with the command", isErr, txt)
	}
	for _, v := range values {
		if strings.Contains(txt, v) {
			t.Errorf("carol's refusal holds a value: %q", txt)
		}
	}
	got(carol, "teamfb__env", gatewayValue)

	// Carol sends her own value to the running gateway; Bob rotates his:
	// their next calls use them (Bob's over a new connection).
	const carolValue, bobNew = "carol-value-6a02", "bob-value-rotated-81f3"
	values = append(values, carolValue, bobNew)
	member := func(key string, args ...string) ([]byte, error) {
		cmd := w.command(t, append([]string{"gateway", "secret"}, args...)...)
		cmd.Env = append(cmd.Env, MemberKeyEnv+"="+key)
		if len(args) > 0 && args[0] == "set" {
			cmd.Stdin = strings.NewReader(args[len(args)-1] + "\n") // the value, read from stdin
			cmd.Args = cmd.Args[:len(cmd.Args)-1]
		}
		return cmd.CombinedOutput()
	}
	for _, c := range []struct{ key, value string }{{carol, carolValue}, {bob, bobNew}} {
		if out, err := member(c.key, "set", "TEAM_TOKEN", "--url", base+"/mcp", c.value); err != nil {
			t.Fatalf("gateway secret set: %v\n%s", err, out)
		}
	}
	got(carol, "team__env", carolValue)
	if pid := got(bob, "team__env", bobNew); pid == bobPID {
		t.Errorf("bob's rotated value reached his old process %s", pid)
	}
	for _, c := range []struct {
		key  string
		args []string
		want string
	}{
		{shared, []string{"set", "TEAM_TOKEN", "--url", base, "x"}, "403"},
		{alice, []string{"set", "OTHER", "--url", base, "x"}, "no per-member server of this gateway uses secret OTHER"},
		{alice, []string{"set", "TEAM_TOKEN", "--url", "http://gw.example.com", "x"}, "plain http would carry your key"},
		{"sbk_00000000_forged", []string{"rm", "TEAM_TOKEN", "--url", base}, "refused the key (401)"},
	} {
		if out, err := member(c.key, c.args...); err == nil || !strings.Contains(string(out), c.want) {
			t.Errorf("gateway secret %v: %v\n%s; want %q", c.args, err, out, c.want)
		}
	}

	stop()
	b, lines := readAudit(t, auditFile)
	for _, v := range values {
		if strings.Contains(string(b), v) {
			t.Errorf("the audit log holds a value:\n%s", b)
		}
	}
	var rows []string
	for _, e := range lines {
		rows = append(rows, e.Principal+" "+e.Tool+" "+e.Credential)
	}
	want := []string{
		"alice mcp__team__env alice", "alice mcp__team__pid alice",
		"bob mcp__team__env bob", "bob mcp__team__pid bob",
		"token mcp__team__env shared", "token mcp__team__pid shared",
		"alice mcp__team__env alice", "alice mcp__team__pid alice",
		"alice mcp__team__echo alice",
		"dave mcp__team__env dave",
		"carol mcp__team__env none",
		"carol mcp__teamfb__env shared", "carol mcp__teamfb__pid shared",
		"carol mcp__team__env carol", "carol mcp__team__pid carol",
		"bob mcp__team__env bob", "bob mcp__team__pid bob",
	}
	if strings.Join(rows, "\n") != strings.Join(want, "\n") {
		t.Errorf("audit (principal tool credential):\n%s\nwant:\n%s", strings.Join(rows, "\n"), strings.Join(want, "\n"))
	}
}

// startAuditedGateway starts `serve --http` on loopback with an audit
// log; stop may be called more than once.
func startAuditedGateway(t *testing.T, w *gatewayWorld) (base, auditFile string, stop func()) {
	t.Helper()
	auditFile = filepath.Join(w.dir, "audit", "calls.jsonl")
	base, stopServe := startHTTPGateway(t, w, "--http", "127.0.0.1:0", "--audit-log", auditFile)
	var once sync.Once
	return base, auditFile, func() { once.Do(stopServe) }
}

// readAudit returns the audit log's bytes and its lines.
func readAudit(t *testing.T, file string) ([]byte, []gateway.AuditEntry) {
	t.Helper()
	b, err := os.ReadFile(file)
	if err != nil {
		t.Fatal(err)
	}
	var lines []gateway.AuditEntry
	sc := bufio.NewScanner(strings.NewReader(string(b)))
	for sc.Scan() {
		var e gateway.AuditEntry
		if err := json.Unmarshal(sc.Bytes(), &e); err != nil {
			t.Fatalf("audit line %q: %v", sc.Text(), err)
		}
		lines = append(lines, e)
	}
	return b, lines
}

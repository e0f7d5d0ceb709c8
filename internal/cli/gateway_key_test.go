package cli

import (
	"context"
	"encoding/json"
	"errors"
	"io"
	"log/slog"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/switchboard-mcp/switchboard/gateway"
)

// addKey runs `switchboard gateway key add NAME --group …` and returns the
// key it printed.
func (w *gatewayWorld) addKey(t testing.TB, name string, groups ...string) string {
	t.Helper()
	args := []string{"gateway", "key", "add", name}
	for _, g := range groups {
		args = append(args, "--group", g)
	}
	out, err := w.command(t, args...).Output()
	if err != nil {
		t.Fatalf("gateway key add %s: %v", name, err)
	}
	key := strings.TrimSpace(string(out))
	if !strings.HasPrefix(key, gateway.KeyPrefix) || strings.Contains(key, "\n") {
		t.Fatalf("gateway key add printed %q, want one key", out)
	}
	return key
}

// editAuth changes the gateway auth file as an administrator would by
// hand, keeping its mode.
func (w *gatewayWorld) editAuth(t *testing.T, edit func(*gateway.AuthFile)) {
	t.Helper()
	path := filepath.Join(w.sbHome, gateway.AuthFileName)
	f, _, err := gateway.ReadAuthFile(path)
	if err != nil {
		t.Fatal(err)
	}
	edit(f)
	writeJSON(t, path, f)
}

type teamClient struct {
	cs    *mcp.ClientSession
	mu    sync.Mutex
	asked []string
}

func (w *gatewayWorld) teamClient(t *testing.T, ctx context.Context, base, key, answer string) *teamClient {
	t.Helper()
	c := &teamClient{}
	opts := &mcp.ClientOptions{
		Capabilities: &mcp.ClientCapabilities{Elicitation: &mcp.ElicitationCapabilities{}},
		ElicitationHandler: func(_ context.Context, req *mcp.ElicitRequest) (*mcp.ElicitResult, error) {
			c.mu.Lock()
			c.asked = append(c.asked, req.Params.Message)
			c.mu.Unlock()
			return &mcp.ElicitResult{Action: "accept", Content: map[string]any{"decision": answer}}, nil
		},
	}
	hc := &http.Client{Transport: bearerTransport{token: key}}
	var so *mcp.ClientSessionOptions
	if w.clientProtocol != "" {
		so = &mcp.ClientSessionOptions{ProtocolVersion: w.clientProtocol}
	}
	cs, err := mcp.NewClient(&mcp.Implementation{Name: "team-test"}, opts).Connect(ctx, &mcp.StreamableClientTransport{Endpoint: base + "/mcp", HTTPClient: hc}, so)
	if err != nil {
		t.Fatalf("connect: %v", err)
	}
	t.Cleanup(func() { cs.Close() })
	c.cs = cs
	return c
}

func (c *teamClient) questions() int {
	c.mu.Lock()
	defer c.mu.Unlock()
	return len(c.asked)
}

func initStatus(t *testing.T, base, key, session string) (int, string) {
	t.Helper()
	body := `{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"curl","version":"1"}}}`
	if session != "" {
		body = `{"jsonrpc":"2.0","id":2,"method":"tools/list","params":{}}`
	}
	req, _ := http.NewRequest("POST", base+"/mcp", strings.NewReader(body))
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json, text/event-stream")
	if key != "" {
		req.Header.Set("Authorization", "Bearer "+key)
	}
	if session != "" {
		req.Header.Set("Mcp-Session-Id", session)
		req.Header.Set("Mcp-Protocol-Version", "2025-11-25")
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	io.Copy(io.Discard, resp.Body)
	resp.Body.Close()
	return resp.StatusCode, resp.Header.Get("Mcp-Session-Id")
}

// TestGatewayTeam is issue 19's first "done means" on a real `serve
// --http`: principals with keys from `gateway key add`, rules scoped to a
// principal and a group (alice's call is allowed, bob's denied, carol's
// asked of her own session only, offered "always" for her own entry), a
// rate limit answered with when to retry, a session that another
// principal cannot use, the shared token as one more principal, a
// revoked key refused within a second without a restart, and an audit
// line per call that never holds a planted secret.
func TestGatewayTeam(t *testing.T) {
	w := newGatewayWorld(t)
	// Clients with sessions, as Claude Code's: a session is its
	// principal's, and the audit names it. (A 2026-07-28 client has none:
	// TestGatewayTeamStateless.)
	w.clientProtocol = "2025-11-25"
	w.servers(t, "alpha")
	w.permissions(t, nil, nil) // no rule: every call is asked for
	const shared = "shared-gateway-token-0123456789"
	w.env = append(w.env, TokenEnv+"="+shared)
	alice := w.addKey(t, "alice", "eng")
	bob := w.addKey(t, "bob", "eng")
	carol := w.addKey(t, "carol")
	erin := w.addKey(t, "erin")
	w.editAuth(t, func(f *gateway.AuthFile) {
		f.Principals["group:eng"] = &gateway.AuthEntry{Allow: []string{"mcp__alpha"}}
		f.Principals["bob"].Deny = []string{"mcp__alpha__echo"}
		f.Principals["erin"].Allow = []string{"mcp__alpha__echo"}
		f.Principals["erin"].RateLimit = &gateway.RateLimit{Tools: map[string]int{"mcp__alpha": 2}}
		f.Principals["token"] = &gateway.AuthEntry{Allow: []string{"mcp__alpha__add"}}
	})
	if fi, err := os.Stat(filepath.Join(w.sbHome, gateway.AuthFileName)); err != nil || fi.Mode().Perm() != 0o600 {
		t.Fatalf("auth file: %v, mode %v; want 0600", err, fi.Mode())
	}
	raw, _ := os.ReadFile(filepath.Join(w.sbHome, gateway.AuthFileName))
	for _, k := range []string{alice, bob, carol, erin} {
		if strings.Contains(string(raw), strings.SplitN(k, "_", 3)[2]) {
			t.Fatalf("the auth file holds a key in clear:\n%s", raw)
		}
	}
	base, auditFile, stop := startAuditedGateway(t, w)
	defer stop()
	ctx, cancel := context.WithTimeout(context.Background(), 90*time.Second)
	defer cancel()

	const planted = "planted-s3cret-value-7f3a"
	ac := w.teamClient(t, ctx, base, alice, "deny")
	if txt, isErr := callText(t, ctx, ac.cs, "alpha__echo", map[string]any{"text": "from alice"}); isErr || !strings.Contains(txt, "from alice") {
		t.Errorf("alice (group:eng allows mcp__alpha): isError %v, %q", isErr, txt)
	}
	// A secret argument reaches the server (which refuses the unknown
	// argument), never the audit log.
	if _, isErr := callText(t, ctx, ac.cs, "alpha__echo", map[string]any{"text": "with a secret", "password": planted}); !isErr {
		t.Errorf("the echo server took an unknown argument")
	}
	bc := w.teamClient(t, ctx, base, bob, "once")
	if txt, isErr := callText(t, ctx, bc.cs, "alpha__echo", map[string]any{"text": "from bob"}); !isErr || !strings.Contains(txt, `denied by rule "mcp__alpha__echo"`) || !strings.Contains(txt, "gateway rules for bob") {
		t.Errorf("bob (denied for bob, allowed for his group): isError %v, %q", isErr, txt)
	}
	cc := w.teamClient(t, ctx, base, carol, "once")
	if txt, isErr := callText(t, ctx, cc.cs, "alpha__echo", map[string]any{"text": "from carol"}); isErr {
		t.Errorf("carol answered once, yet: %q", txt)
	}
	if cc.questions() != 1 || ac.questions() != 0 || bc.questions() != 0 {
		t.Errorf("questions: carol %d, alice %d, bob %d; want only carol's own session asked, once", cc.questions(), ac.questions(), bc.questions())
	} else if q := cc.asked[0]; !strings.Contains(q, "Allow mcp__alpha__echo") || !strings.Contains(q, `always: write the allow rule "mcp__alpha__echo" to carol's entry in ~/.switchboard/gateway-auth.json`) {
		// "always" writes to carol's own entry, never to settings that
		// apply to every principal.
		t.Errorf("carol's question: %q; want always offered for her entry only", q)
	}

	// Erin may call alpha's tools twice a minute.
	ec := w.teamClient(t, ctx, base, erin, "deny")
	for i := range 3 {
		txt, isErr := callText(t, ctx, ec.cs, "alpha__echo", map[string]any{"text": "erin"})
		if i < 2 && isErr {
			t.Errorf("erin's call %d: %q", i+1, txt)
		}
		if i == 2 && (!isErr || !strings.Contains(txt, "rate limit: erin may make 2 calls per minute of mcp__alpha") || !strings.Contains(txt, "try again in")) {
			t.Errorf("erin's third call: isError %v, %q; want the rate limit and when to retry", isErr, txt)
		}
	}

	// The shared token is a principal too, with its own rules.
	tc := w.teamClient(t, ctx, base, shared, "deny")
	if txt, isErr := callText(t, ctx, tc.cs, "alpha__add", map[string]any{"a": 2, "b": 3}); isErr || !strings.Contains(txt, "5") {
		t.Errorf("shared token: isError %v, %q", isErr, txt)
	}

	// A session is its principal's: bob cannot use carol's.
	code, sid := initStatus(t, base, carol, "")
	if code != 200 || sid == "" {
		t.Fatalf("carol's initialize: %d, session %q", code, sid)
	}
	if code, _ := initStatus(t, base, bob, sid); code != http.StatusForbidden {
		t.Errorf("bob with carol's session: status %d, want 403", code)
	}
	if code, _ := initStatus(t, base, "sbk_00000000_forged", ""); code != http.StatusUnauthorized {
		t.Errorf("a forged key: status %d, want 401", code)
	}

	// Revoked while serving: refused without a restart. The time it took
	// is logged (docs/gateway.md: about 0.2 s), not asserted; 10 s is a
	// guard against a reload that never comes.
	if code, _ := initStatus(t, base, bob, ""); code != 200 {
		t.Fatalf("bob before revoke: %d", code)
	}
	if out, err := w.command(t, "gateway", "key", "revoke", "bob").CombinedOutput(); err != nil {
		t.Fatalf("revoke: %v\n%s", err, out)
	}
	revoked := time.Now()
	for {
		code, _ := initStatus(t, base, bob, "")
		if code == http.StatusUnauthorized {
			t.Logf("revoked key refused after %v", time.Since(revoked).Round(time.Millisecond))
			break
		}
		if time.Since(revoked) > 10*time.Second {
			t.Fatalf("bob's revoked key still gets %d after %v", code, time.Since(revoked))
		}
		time.Sleep(20 * time.Millisecond)
	}
	if code, _ := initStatus(t, base, alice, ""); code != 200 {
		t.Errorf("alice after bob's revoke: %d", code)
	}

	// The audit log: one line per call, with its decision; never the
	// planted secret.
	stop()
	b, lines := readAudit(t, auditFile)
	if strings.Contains(string(b), planted) {
		t.Errorf("the audit log holds the planted secret:\n%s", b)
	}
	type row struct {
		principal, decision, rule, answer, errText string
		asked                                      bool
	}
	var got []row
	for _, e := range lines {
		got = append(got, row{e.Principal, e.Decision, e.Rule, e.Answer, e.Error, e.Asked})
		if e.Tool != "mcp__alpha__echo" && e.Tool != "mcp__alpha__add" {
			t.Errorf("audit tool %q", e.Tool)
		}
		if e.ArgsHMAC == "" || e.Session == "" {
			t.Errorf("audit line without args hash or session: %+v", e)
		}
	}
	want := []row{
		{"alice", "allow", "mcp__alpha", "", "", false},
		{"alice", "allow", "mcp__alpha", "", "the call ended with an error result", false},
		{"bob", "deny", "mcp__alpha__echo", "", "refused by a deny rule", false},
		{"carol", "ask", "", "once", "", true},
		{"erin", "allow", "mcp__alpha__echo", "", "", false},
		{"erin", "allow", "mcp__alpha__echo", "", "", false},
		{"erin", "rate_limited", "", "", "refused: over a rate limit", false},
		{"token", "allow", "mcp__alpha__add", "", "", false},
	}
	if len(got) != len(want) {
		t.Fatalf("audit has %d lines, want %d:\n%s", len(got), len(want), b)
	}
	for i := range want {
		if got[i] != want[i] {
			t.Errorf("audit line %d: %+v, want %+v", i+1, got[i], want[i])
		}
	}
	if len(lines) > 1 {
		if v := lines[1].Args["password"]; v != "[REDACTED]" && v != "<redacted>" {
			t.Errorf("the password argument in the audit line: %v", v)
		}
		if lines[1].Args["text"] != "with a secret" {
			t.Errorf("the text argument in the audit line: %v", lines[1].Args["text"])
		}
		if lines[0].ArgsHMAC == lines[1].ArgsHMAC {
			t.Error("two calls with other arguments have one hash")
		}
	}
}

// TestGatewayKeyCommands checks the key commands' files: hashed keys, mode
// 0600, comments kept, list never shows a key, revoke keeps the rules.
func TestGatewayKeyCommands(t *testing.T) {
	w := newGatewayWorld(t)
	path := filepath.Join(w.sbHome, gateway.AuthFileName)
	if err := os.WriteFile(path, []byte("// the team's gateway\n{\"principals\": {\"group:eng\": {\"deny\": [\"mcp__prod\"]}}}\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	k1 := w.addKey(t, "alice", "eng")
	k2 := w.addKey(t, "alice", "ops")
	if k1 == k2 {
		t.Fatal("two keys alike")
	}
	raw, _ := os.ReadFile(path)
	if !strings.Contains(string(raw), "// the team's gateway") {
		t.Errorf("the comment is gone:\n%s", raw)
	}
	f, _, err := gateway.ReadAuthFile(path)
	if err != nil {
		t.Fatal(err)
	}
	a := f.Principals["alice"]
	if a == nil || len(a.Keys) != 2 || strings.Join(a.Groups, ",") != "eng,ops" || a.Keys[0].SHA256 != gateway.KeyHash(k1) {
		t.Fatalf("alice: %+v", a)
	}
	out, err := w.command(t, "gateway", "key", "list").Output()
	if err != nil {
		t.Fatal(err)
	}
	if strings.Contains(string(out), k1) || !strings.Contains(string(out), "alice") || !strings.Contains(string(out), a.Keys[0].ID) {
		t.Errorf("list:\n%s", out)
	}
	if out, err := w.command(t, "gateway", "key", "revoke", "alice").CombinedOutput(); err != nil || !strings.Contains(string(out), "Revoked 2 key(s)") {
		t.Fatalf("revoke: %v %s", err, out)
	}
	if out, err := w.command(t, "gateway", "key", "revoke", "nobody").CombinedOutput(); err == nil {
		t.Errorf("revoking an unknown principal worked: %s", out)
	}
	f, _, _ = gateway.ReadAuthFile(path)
	if len(f.Principals["alice"].Keys) != 0 || len(f.Principals["group:eng"].Deny) != 1 {
		t.Errorf("after revoke: %+v %+v", f.Principals["alice"], f.Principals["group:eng"])
	}
	if fi, _ := os.Stat(path); fi.Mode().Perm() != 0o600 {
		t.Errorf("mode %v", fi.Mode())
	}
	a2 := gateway.NewAuth(&gateway.AuthOptions{File: path})
	if _, err := a2.Authenticate(context.Background(), k1); err == nil {
		t.Error("a revoked key authenticates")
	}
	// A file others can write accepts no key.
	k3 := w.addKey(t, "carol")
	os.Chmod(path, 0o622)
	if _, err := gateway.NewAuth(&gateway.AuthOptions{File: path}).Authenticate(context.Background(), k3); err == nil {
		t.Error("a key of a group-writable auth file authenticates")
	}
}

// TestGatewayTeamStateless: principals, their rules and the audit log
// hold with --stateless too, where every request is a session of its own.
func TestGatewayTeamStateless(t *testing.T) {
	w := newGatewayWorld(t)
	w.servers(t, "alpha")
	w.permissions(t, nil, nil)
	alice := w.addKey(t, "alice", "eng")
	bob := w.addKey(t, "bob")
	w.editAuth(t, func(f *gateway.AuthFile) {
		f.Principals["group:eng"] = &gateway.AuthEntry{Allow: []string{"mcp__alpha__echo"}}
	})
	auditFile := filepath.Join(w.dir, "audit.jsonl")
	base, stopServe := startHTTPGateway(t, w, "--http", "127.0.0.1:0", "--stateless", "--audit-log", auditFile)
	var once sync.Once
	stop := func() { once.Do(stopServe) }
	defer stop()
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	ac := w.teamClient(t, ctx, base, alice, "deny")
	if txt, isErr := callText(t, ctx, ac.cs, "alpha__echo", map[string]any{"text": "stateless"}); isErr {
		t.Errorf("alice: %q", txt)
	}
	bc := w.teamClient(t, ctx, base, bob, "deny")
	if txt, isErr := callText(t, ctx, bc.cs, "alpha__echo", map[string]any{"text": "stateless"}); !isErr || !strings.Contains(txt, "refused") {
		t.Errorf("bob (no rule; he answers deny): isError %v, %q", isErr, txt)
	}
	if code, _ := initStatus(t, base, "", ""); code != http.StatusUnauthorized {
		t.Errorf("no key: %d", code)
	}
	stop()
	b, _ := os.ReadFile(auditFile)
	var who []string
	for _, l := range strings.Split(strings.TrimSpace(string(b)), "\n") {
		var e gateway.AuditEntry
		if json.Unmarshal([]byte(l), &e) == nil {
			who = append(who, e.Principal+":"+e.Decision+":"+e.Answer)
		}
	}
	if got := strings.Join(who, " "); got != "alice:allow: bob:ask:deny" {
		t.Errorf("audit: %s\n%s", got, b)
	}
}

// TestGatewayTeamAlways is the principal-scoped "always" on a real `serve
// --http`: alice answers always through a Go SDK client's elicitation
// handler; the allow rule goes to her entry of the auth file (its
// comments kept, mode 0600), so her next calls — on a new session, with
// the file watcher off so that only the writer can have told the
// gateway, and after a restart — run without asking, while bob's same
// call is still asked. A deny written to her entry beats her rule, and
// once the rules are taken out of the file she is asked again.
func TestGatewayTeamAlways(t *testing.T) {
	w := newGatewayWorld(t)
	w.servers(t, "alpha")
	w.permissions(t, nil, nil) // no rule: every call is asked for
	alice := w.addKey(t, "alice")
	bob := w.addKey(t, "bob")
	path := filepath.Join(w.sbHome, gateway.AuthFileName)
	raw, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	const comment = "// The team's gateway: written by hand, kept by every edit."
	if err := os.WriteFile(path, append([]byte(comment+"\n"), raw...), 0o600); err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 120*time.Second)
	defer cancel()
	echo := func(c *teamClient, text string) (string, bool) {
		t.Helper()
		return callText(t, ctx, c.cs, "alpha__echo", map[string]any{"text": text})
	}
	rules := func() (allowAlice, allowBob []string) {
		t.Helper()
		f, _, err := gateway.ReadAuthFile(path)
		if err != nil {
			t.Fatal(err)
		}
		return f.Principals["alice"].Allow, f.Principals["bob"].Allow
	}

	// First run, watcher off: what alice's next session sees can only
	// come from the writer.
	base, stop := startHTTPGateway(t, w, "--http", "127.0.0.1:0", "--no-watch")
	ac := w.teamClient(t, ctx, base, alice, "always")
	if txt, isErr := echo(ac, "first"); isErr || !strings.Contains(txt, "first") {
		t.Fatalf("alice answered always: isError %v, %q", isErr, txt)
	}
	if ac.questions() != 1 {
		t.Fatalf("alice was asked %d times, want once", ac.questions())
	}
	const want = `always: write the allow rule "mcp__alpha__echo" to alice's entry in ~/.switchboard/gateway-auth.json`
	if q := ac.asked[0]; !strings.Contains(q, want) {
		t.Errorf("alice's question %q; want it to say %q", q, want)
	}
	if a, b := rules(); strings.Join(a, ",") != "mcp__alpha__echo" || len(b) != 0 {
		t.Errorf("allow rules after alice's always: alice %q, bob %q; want the rule in alice's entry only", a, b)
	}
	raw, _ = os.ReadFile(path)
	if !strings.HasPrefix(string(raw), comment) {
		t.Errorf("the auth file lost its comment:\n%s", raw)
	}
	if fi, err := os.Stat(path); err != nil || fi.Mode().Perm() != 0o600 {
		t.Errorf("auth file after the edit: %v %v; want mode 0600", fi.Mode(), err)
	}
	a2 := w.teamClient(t, ctx, base, alice, "deny")
	if txt, isErr := echo(a2, "second session"); isErr || a2.questions() != 0 {
		t.Errorf("alice's new session (watcher off): isError %v, %q, asked %d times; want it run unasked", isErr, txt, a2.questions())
	}
	bc := w.teamClient(t, ctx, base, bob, "once")
	if txt, isErr := echo(bc, "from bob"); isErr || bc.questions() != 1 {
		t.Errorf("bob's same call: isError %v, %q, asked %d times; want asked once", isErr, txt, bc.questions())
	} else if q := bc.asked[0]; !strings.Contains(q, `to bob's entry in ~/.switchboard/gateway-auth.json`) {
		t.Errorf("bob's question %q; want always offered for his own entry", q)
	}
	stop()

	// After a restart (watcher on), the rule holds.
	base, stopServe := startHTTPGateway(t, w, "--http", "127.0.0.1:0")
	var once sync.Once
	stop = func() { once.Do(stopServe) }
	defer stop()
	a3 := w.teamClient(t, ctx, base, alice, "deny")
	if txt, isErr := echo(a3, "after restart"); isErr || a3.questions() != 0 {
		t.Errorf("alice after a restart: isError %v, %q, asked %d times; want it run unasked", isErr, txt, a3.questions())
	}
	b2 := w.teamClient(t, ctx, base, bob, "deny")
	if _, isErr := echo(b2, "bob again"); !isErr || b2.questions() != 1 {
		t.Errorf("bob after the restart (he answers deny): isError %v, asked %d times; want asked and refused", isErr, b2.questions())
	}

	// until calls echo on c until done says the gateway has read the
	// file again (the watcher's reload; a call in between still sees the
	// old rules).
	until := func(c *teamClient, what string, done func(txt string, isErr bool) bool) {
		t.Helper()
		for {
			txt, isErr := echo(c, what)
			if done(txt, isErr) {
				return
			}
			if ctx.Err() != nil {
				t.Fatalf("%s: the gateway never applied the edited auth file; last %q", what, txt)
			}
			time.Sleep(50 * time.Millisecond)
		}
	}
	// A deny in her own entry beats her allow rule, unasked.
	w.editAuth(t, func(f *gateway.AuthFile) { f.Principals["alice"].Deny = []string{"mcp__alpha__echo"} })
	until(a3, "denied", func(txt string, isErr bool) bool {
		return isErr && strings.Contains(txt, `denied by rule "mcp__alpha__echo"`)
	})
	if a3.questions() != 0 {
		t.Errorf("alice was asked %d times under her deny", a3.questions())
	}
	// Rules taken out of the file: she is asked again (and answers deny).
	w.editAuth(t, func(f *gateway.AuthFile) { f.Principals["alice"].Allow, f.Principals["alice"].Deny = nil, nil })
	until(a3, "asked again", func(string, bool) bool { return a3.questions() > 0 })
	if a, _ := rules(); len(a) != 0 {
		t.Errorf("alice's allow rules after deny: %q; a deny must write nothing", a)
	}
}

// TestGatewayKeyForSharedTokenPrincipal: "token" is the shared token's
// caller, so `gateway key add token` is refused (a key of it would get the
// rules written for the shared token), and a key of "token" written into
// the file by hand makes the gateway accept no key, with the reason in its
// log, until `gateway key revoke token` takes it out.
func TestGatewayKeyForSharedTokenPrincipal(t *testing.T) {
	w := newGatewayWorld(t)
	path := filepath.Join(w.sbHome, gateway.AuthFileName)
	for name, why := range map[string]string{"token": "shared token", "group:eng": "is a group"} {
		cmd := w.command(t, "gateway", "key", "add", name)
		var stderr strings.Builder
		cmd.Stderr = &stderr
		out, err := cmd.Output()
		var ee *exec.ExitError
		if !errors.As(err, &ee) || ee.ExitCode() != 2 || len(out) != 0 {
			t.Errorf("gateway key add %s: %v, printed %q; want exit 2 and no key", name, err, out)
		}
		if !strings.Contains(stderr.String(), why) || !strings.Contains(stderr.String(), "hint:") {
			t.Errorf("gateway key add %s does not say why (%q) with a hint:\n%s", name, why, stderr.String())
		}
	}
	if _, err := os.Stat(path); err == nil {
		t.Errorf("a refused key add wrote %s", path)
	}

	// A key of "token" already in the file.
	alice := w.addKey(t, "alice")
	tokenKey, id, err := gateway.NewKey()
	if err != nil {
		t.Fatal(err)
	}
	w.editAuth(t, func(f *gateway.AuthFile) {
		f.Principals[gateway.SharedTokenPrincipal] = &gateway.AuthEntry{
			Keys:  []gateway.AuthKey{{ID: id, SHA256: gateway.KeyHash(tokenKey), Created: time.Now().UTC().Truncate(time.Second)}},
			Allow: []string{"mcp__alpha"},
		}
	})
	var logBuf strings.Builder
	a := gateway.NewAuth(&gateway.AuthOptions{File: path, Logger: slog.New(slog.NewTextHandler(&logBuf, nil))})
	if p, err := a.Authenticate(context.Background(), tokenKey); err == nil {
		t.Errorf("a key of %q authenticates, as %+v", gateway.SharedTokenPrincipal, p)
	}
	if _, err := a.Authenticate(context.Background(), alice); err == nil {
		t.Error("the file with a key of \"token\" still accepts keys (it should fail closed)")
	}
	if !strings.Contains(logBuf.String(), "no key is accepted") || !strings.Contains(logBuf.String(), "gateway key revoke token") {
		t.Errorf("the log does not say why no key is accepted:\n%s", logBuf.String())
	}
	if out, err := w.command(t, "gateway", "key", "revoke", "token").CombinedOutput(); err != nil {
		t.Fatalf("gateway key revoke token: %v\n%s", err, out)
	}
	a = gateway.NewAuth(&gateway.AuthOptions{File: path})
	if _, err := a.Authenticate(context.Background(), alice); err != nil || a.LoadErr() != nil {
		t.Errorf("after the revoke: %v (load: %v)", err, a.LoadErr())
	}
	if _, err := a.Authenticate(context.Background(), tokenKey); err == nil {
		t.Error("the revoked key of \"token\" authenticates")
	}
}

package gateway_test

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/switchboard-mcp/switchboard/gateway"
	"github.com/switchboard-mcp/switchboard/host"
	"github.com/switchboard-mcp/switchboard/policy"
)

func readAudit(t *testing.T, path string) []gateway.AuditEntry {
	t.Helper()
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	var out []gateway.AuditEntry
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		var e gateway.AuditEntry
		if err := json.Unmarshal(sc.Bytes(), &e); err != nil {
			t.Fatalf("audit line %q: %v", sc.Text(), err)
		}
		out = append(out, e)
	}
	return out
}

// A call whose server asks the client questions spans several requests
// (each answer is a retry): it is one audit line, with the decision made
// on the first.
func TestAuditCallWithUpstreamQuestions(t *testing.T) {
	path := filepath.Join(t.TempDir(), "audit.jsonl")
	audit, err := gateway.OpenAudit(path, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer audit.Close()
	a := &answering{answer: func(msg string) *mcp.ElicitResult {
		if msg == "[alpha] Your name?" {
			return accept("name", "Ada")
		}
		return accept("colour", "teal")
	}}
	p := policy.New(policy.RulesFrom(policy.Source{Scope: policy.ScopeUser}, []string{"mcp__alpha"}, nil, nil)...)
	permit := gateway.NewPermit(p, nil, &host.PermitOptions{Asker: &gateway.Asker{}})
	f := startWith(t, fixtureOpts{client: a.options(), prompter: gateway.Prompter{}, permit: permit}, &gateway.Options{Audit: audit}, stdio("alpha", "elicit"))
	got, res := callText(t, f.session, &mcp.CallToolParams{Name: "alpha__ask_twice", Arguments: map[string]any{}})
	if res.IsError || !strings.Contains(got, "name: Ada, colour: teal") {
		t.Fatalf("ask_twice: %q", got)
	}
	waitRelayIdle(t, f.g)
	lines := readAudit(t, path)
	if len(lines) != 1 {
		t.Fatalf("%d audit lines for one call: %+v", len(lines), lines)
	}
	e := lines[0]
	if e.Tool != "mcp__alpha__ask_twice" || e.Decision != "allow" || e.Rule != "mcp__alpha" || e.IsError || e.ResultBytes == 0 {
		t.Errorf("audit line: %+v", e)
	}
}

// The log is rotated by size, keeps Keep old files, and is private.
func TestAuditRotation(t *testing.T) {
	path := filepath.Join(t.TempDir(), "logs", "audit.jsonl")
	l, err := gateway.OpenAudit(path, &gateway.AuditOptions{MaxSize: 400, Keep: 2})
	if err != nil {
		t.Fatal(err)
	}
	for i := range 20 {
		if err := l.Write(&gateway.AuditEntry{Time: time.Unix(int64(i), 0), Tool: "mcp__a__b", Principal: "alice"}); err != nil {
			t.Fatal(err)
		}
	}
	l.Close()
	for _, p := range []string{path, path + ".1", path + ".2"} {
		fi, err := os.Stat(p)
		if err != nil {
			t.Fatalf("%s: %v", p, err)
		}
		if fi.Size() > 400 || fi.Mode().Perm() != 0o600 {
			t.Errorf("%s: %d bytes, mode %v", p, fi.Size(), fi.Mode())
		}
	}
	if _, err := os.Stat(path + ".3"); err == nil {
		t.Error("more rotated files than Keep")
	}
	// The newest lines are in the file itself, whole.
	lines := readAudit(t, path)
	if len(lines) == 0 || lines[len(lines)-1].Time.Unix() != 19 {
		t.Errorf("newest lines: %+v", lines)
	}
}

func writeAuth(t *testing.T, f *gateway.AuthFile) string {
	t.Helper()
	path := filepath.Join(t.TempDir(), gateway.AuthFileName)
	b, _ := json.Marshal(f)
	if err := os.WriteFile(path, b, 0o600); err != nil {
		t.Fatal(err)
	}
	return path
}

// A principal's limits (its own and its groups') say when to retry, take
// nothing from the budget when they refuse, and refill with time.
func TestRateLimit(t *testing.T) {
	key, id, _ := gateway.NewKey()
	path := writeAuth(t, &gateway.AuthFile{Principals: map[string]*gateway.AuthEntry{
		"alice":     {Groups: []string{"eng"}, Keys: []gateway.AuthKey{{ID: id, SHA256: gateway.KeyHash(key)}}, RateLimit: &gateway.RateLimit{PerMinute: 3}},
		"group:eng": {RateLimit: &gateway.RateLimit{Tools: map[string]int{"mcp__github__create_issue": 1}}},
	}})
	now := time.Unix(1_000_000, 0)
	a := gateway.NewAuth(&gateway.AuthOptions{File: path, Now: func() time.Time { return now }})
	p, err := a.Authenticate(context.Background(), key)
	if err != nil {
		t.Fatal(err)
	}
	if err := a.Limit(p, "github", "create_issue"); err != nil {
		t.Fatal(err)
	}
	var rl *gateway.RateLimitedError
	err = a.Limit(p, "github", "create_issue")
	if !errors.As(err, &rl) || rl.Entry != "group:eng" || rl.RetryAfter != time.Minute || !strings.Contains(err.Error(), "try again in 60.0s") {
		t.Fatalf("second create_issue: %v", err)
	}
	// The refusal took nothing: two more calls of another tool fit the 3
	// per minute.
	for i := range 2 {
		if err := a.Limit(p, "github", "get_me"); err != nil {
			t.Fatalf("get_me %d: %v", i, err)
		}
	}
	err = a.Limit(p, "github", "get_me")
	if !errors.As(err, &rl) || rl.Entry != "alice" || rl.RetryAfter != 20*time.Second {
		t.Fatalf("fourth call: %v", err)
	}
	now = now.Add(20 * time.Second)
	if err := a.Limit(p, "github", "get_me"); err != nil {
		t.Errorf("after 20s: %v", err)
	}
	if err := a.Limit(nil, "github", "get_me"); err != nil {
		t.Errorf("no principal: %v", err)
	}
}

// Keys are hashed, compared whole, and only keys of a usable file count;
// the shared token is a principal of its own.
func TestAuthenticate(t *testing.T) {
	key, id, _ := gateway.NewKey()
	if !strings.HasPrefix(key, gateway.KeyPrefix+id+"_") || len(key) < 40 {
		t.Fatalf("key %q", key)
	}
	path := writeAuth(t, &gateway.AuthFile{Principals: map[string]*gateway.AuthEntry{
		"alice": {Groups: []string{"ops", "eng"}, Keys: []gateway.AuthKey{{ID: id, SHA256: gateway.KeyHash(key)}}},
	}})
	a := gateway.NewAuth(&gateway.AuthOptions{File: path, SharedToken: "shared-secret"})
	if p, err := a.Authenticate(context.Background(), key); err != nil || p.Name != "alice" || strings.Join(p.Groups, ",") != "eng,ops" || !p.Keyed() {
		t.Errorf("alice's key: %+v %v", p, err)
	}
	if p, err := a.Authenticate(context.Background(), "shared-secret"); err != nil || p.Name != gateway.SharedTokenPrincipal || p.Keyed() {
		t.Errorf("shared token: %+v %v", p, err)
	}
	for _, bad := range []string{"", key[:len(key)-1], key + "x", gateway.KeyPrefix + id + "_AAAA", "shared-secre"} {
		if _, err := a.Authenticate(context.Background(), bad); !errors.Is(err, gateway.ErrUnauthorized) {
			t.Errorf("%q: %v", bad, err)
		}
	}
	// Broken, the file accepts no key (fail closed), and the gateway
	// still requires one.
	os.WriteFile(path, []byte(`{"principals": {"alice": {`), 0o600)
	if err := a.Reload(); err == nil {
		t.Error("a broken file reloaded")
	}
	if _, err := a.Authenticate(context.Background(), key); err == nil || !a.Required() {
		t.Errorf("broken file: key accepted (%v) or auth not required", err)
	}
	os.Remove(path)
	a.Reload()
	if !a.Required() {
		t.Error("removing the auth file opened the gateway")
	}
}

// Verify is the seam for other bearer tokens (OAuth access tokens): it
// sees only tokens that are neither keys nor the shared token, and makes
// authentication required.
func TestAuthVerifySeam(t *testing.T) {
	var seen []string
	a := gateway.NewAuth(&gateway.AuthOptions{SharedToken: "shared", Verify: func(_ context.Context, tok string) (*gateway.Principal, error) {
		seen = append(seen, tok)
		if tok == "jwt-of-dana" {
			return &gateway.Principal{Name: "dana", Groups: []string{"eng"}}, nil
		}
		return nil, gateway.ErrUnauthorized
	}})
	ctx := context.Background()
	if p, err := a.Authenticate(ctx, "jwt-of-dana"); err != nil || p.Name != "dana" {
		t.Errorf("verified token: %+v %v", p, err)
	}
	if _, err := a.Authenticate(ctx, "jwt-of-mallory"); err == nil {
		t.Error("a refused token authenticated")
	}
	a.Authenticate(ctx, "shared")
	a.Authenticate(ctx, gateway.KeyPrefix+"0badc0de_xyz")
	if strings.Join(seen, ",") != "jwt-of-dana,jwt-of-mallory" || !a.Required() {
		t.Errorf("Verify saw %q; required %v", seen, a.Required())
	}
}

// Issue 28 point 11: the audit log kept a server's own secret env value
// that the model passed back as an argument, and JWTs, ghp_…, sk-… and
// AKIA… shapes under keys that name no secret; the debug log kept the
// shapes too. Both now apply the host's known values and the token
// shapes (internal/redact).
func TestAuditAndDebugLogKeepNoSecrets(t *testing.T) {
	const (
		ownSecret = "own-env-secret-v4lue-99"         // the server's API_TOKEN
		tokenEnv  = "k8Qz2Lw7Xv4Rt9Yp3Mn6Bc1Df5Gh0Jk" // a token-shaped value under a plain name
		ghp       = "ghp_Zq8xW2vN4mT6kP0rS3uY5bA7cD9eF1gH2jK4"
		sk        = "sk-proj-Zq8xW2vN4mT6kP0rS3uY5bA7cD9eF1gH2jK4"
		akia      = "AKIAZQ8XW2VN4MT6KP0R"
		jwt       = "eyJhbGciOiJSUzI1NiJ9.eyJzdWIiOiJhbGljZSJ9.c2lnbmF0dXJlLXNpZ25hdHVyZQ"
	)
	secrets := []string{ownSecret, tokenEnv, ghp, sk, akia, jwt}
	path := filepath.Join(t.TempDir(), "audit.jsonl")
	audit, err := gateway.OpenAudit(path, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer audit.Close()
	var debug strings.Builder
	var debugMu sync.Mutex
	logger := slog.New(slog.NewTextHandler(lockedWriter{&debugMu, &debug}, &slog.HandlerOptions{Level: slog.LevelDebug}))
	srv := stdio("alpha", "echo")
	srv.Effective.Env = map[string]string{"API_TOKEN": ownSecret, "SESSION": tokenEnv}
	srv.Written.Env = srv.Effective.Env
	f := startWith(t, fixtureOpts{logger: logger}, &gateway.Options{Audit: audit}, srv)
	text := strings.Join(secrets, " | ")
	got, res := callText(t, f.session, &mcp.CallToolParams{Name: "alpha__echo", Arguments: map[string]any{"text": text}})
	if res.IsError || !strings.Contains(got, ghp) {
		t.Fatalf("echo: %q (the call must reach the server with its arguments)", got)
	}
	waitRelayIdle(t, f.g)
	lines := readAudit(t, path)
	if len(lines) != 1 || lines[0].Args == nil {
		t.Fatalf("audit lines: %+v", lines)
	}
	raw, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	debugMu.Lock()
	log := debug.String()
	debugMu.Unlock()
	if !strings.Contains(log, "calling tool") || strings.Count(fmt.Sprint(lines[0].Args["text"]), " | ") != len(secrets)-1 {
		t.Fatalf("the logs do not show the call's arguments; the check below would prove little:\naudit: %s\ndebug: %s", raw, log)
	}
	for _, s := range secrets {
		if strings.Contains(string(raw), s) {
			t.Errorf("the audit log holds %s:\n%s", s, raw)
		}
		if strings.Contains(log, s) {
			t.Errorf("the debug log holds %s:\n%s", s, log)
		}
	}
}

type lockedWriter struct {
	mu *sync.Mutex
	w  io.Writer
}

func (l lockedWriter) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.w.Write(p)
}

// Recent keeps the last RecentAudit lines written, newest first, through
// rotations: what a console's Calls page lists.
func TestAuditRecent(t *testing.T) {
	l, err := gateway.OpenAudit(filepath.Join(t.TempDir(), "audit.jsonl"), &gateway.AuditOptions{MaxSize: 4000, Keep: 1})
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	if got := l.Recent(); len(got) != 0 {
		t.Fatalf("a new log's recent lines: %+v", got)
	}
	// newestFirst checks that got are lines last … last-len(got)+1.
	newestFirst := func(got []gateway.AuditEntry, last, n int) {
		t.Helper()
		if len(got) != n {
			t.Fatalf("recent: %d lines, want %d", len(got), n)
		}
		for i, e := range got {
			if want := fmt.Sprintf("mcp__s__t%d", last-i); e.Tool != want {
				t.Fatalf("recent[%d] = %s, want %s", i, e.Tool, want)
			}
		}
	}
	for i := range gateway.RecentAudit + 5 {
		if err := l.Write(&gateway.AuditEntry{Tool: fmt.Sprintf("mcp__s__t%d", i)}); err != nil {
			t.Fatal(err)
		}
		if i == 2 {
			newestFirst(l.Recent(), 2, 3)
		}
	}
	newestFirst(l.Recent(), gateway.RecentAudit+4, gateway.RecentAudit)
}

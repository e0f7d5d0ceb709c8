//go:build unix

package cli

import (
	"bufio"
	"context"
	"encoding/base64"
	"encoding/json"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/auth"
	"github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/modelcontextprotocol/go-sdk/oauthex"

	"github.com/switchboard-mcp/switchboard/gateway"
	"github.com/switchboard-mcp/switchboard/internal/hydratest"
)

// TestGatewayOAuthHydra is issue 19's "Done means" for OAuth on a real
// `serve --http --oauth-issuer … --resource-url …` with ORY Hydra as the
// identity provider: a client refused with 401 finds the protected
// resource metadata from the WWW-Authenticate header and, through it,
// Hydra; the Go SDK's own OAuth client then logs a user in (the
// authorization code flow with PKCE; the test plays the user and
// Hydra's login app) and calls tools as that user, whose groups claim
// brings the auth file's group rules to bear (alice of eng allowed, bob of
// ops denied; carol, of no group, is asked on her own session; dave, who
// has no entry, answers "always" and gets one holding his rule). Tokens for another audience, expired, or signed by another
// key (a second Hydra claiming the first one's issuer) are refused with
// 401, the metadata URL and the reason; no token reaches the log or the
// audit log.
func TestGatewayOAuthHydra(t *testing.T) {
	t.Parallel() // waits on processes, mostly: runs beside the others
	if testing.Short() {
		t.Skip("builds and starts ORY Hydra and the gateway")
	}
	idp := hydratest.Start(t, &hydratest.Options{TopLevelClaims: []string{"groups"}})
	impostor := hydratest.Start(t, &hydratest.Options{Issuer: idp.Issuer})

	w := newGatewayWorld(t)
	w.servers(t, "alpha")
	w.permissions(t, nil, nil) // no rule: a call is asked for, unless a principal's rule decides
	writeJSON(t, filepath.Join(w.sbHome, "gateway-auth.json"), map[string]any{"principals": map[string]any{
		"group:eng": map[string]any{"allow": []string{"mcp__alpha"}},
		"group:ops": map[string]any{"deny": []string{"mcp__alpha__echo"}},
	}})
	addr := freePort(t)
	resource := "http://" + addr + "/mcp"
	auditFile := filepath.Join(w.dir, "audit.jsonl")
	base, stopServe := startHTTPGateway(t, w, "--http", addr, "--oauth-issuer", idp.Issuer, "--resource-url", resource, "--audit-log", auditFile, "--log-level", "debug")
	var once sync.Once
	stop := func() { once.Do(stopServe) }
	defer stop()
	ctx, cancel := context.WithTimeout(context.Background(), 120*time.Second)
	defer cancel()
	metaURL := "http://" + addr + "/.well-known/oauth-protected-resource/mcp"

	// What a client sees first: 401, and where to read on.
	code, challenge := oauthInit(t, base, "")
	if code != http.StatusUnauthorized || !strings.Contains(challenge, `resource_metadata="`+metaURL+`"`) {
		t.Fatalf("no token: %d, WWW-Authenticate %q; want 401 naming %s", code, challenge, metaURL)
	}
	for _, u := range []string{metaURL, "http://" + addr + "/.well-known/oauth-protected-resource"} {
		resp, err := http.Get(u)
		if err != nil {
			t.Fatal(err)
		}
		var m oauthex.ProtectedResourceMetadata
		err = json.NewDecoder(resp.Body).Decode(&m)
		resp.Body.Close()
		if err != nil || resp.StatusCode != 200 || m.Resource != resource || len(m.AuthorizationServers) != 1 || m.AuthorizationServers[0] != idp.Issuer {
			t.Errorf("GET %s: %d %+v %v; want the resource %s and the issuer %s", u, resp.StatusCode, m, err, resource, idp.Issuer)
		}
	}

	// A real MCP client logs in through the discovery the gateway offers.
	var qmu sync.Mutex
	questions := map[string][]string{} // subject → the permission questions its session got
	login := func(subject string, groups ...string) *mcp.ClientSession {
		t.Helper()
		const redirect = "http://127.0.0.1:9/callback"
		// Pre-registered: the SDK's dynamic registration cannot read
		// Hydra's answer (it wants the RFC 7591 jwks as a string).
		c := idp.CreateClient(t, hydratest.Client{GrantTypes: []string{"authorization_code"}, RedirectURIs: []string{redirect}, AuthMethod: "client_secret_post"})
		h, err := auth.NewAuthorizationCodeHandler(&auth.AuthorizationCodeHandlerConfig{
			PreregisteredClient:   &oauthex.ClientCredentials{ClientID: c.ID, ClientSecretAuth: &oauthex.ClientSecretAuth{ClientSecret: c.Secret}, Issuer: idp.Issuer},
			RedirectURL:           redirect,
			AcceptUnadvertisedIss: true,
			AuthorizationCodeFetcher: func(ctx context.Context, args *auth.AuthorizationArgs) (*auth.AuthorizationResult, error) {
				// The user logs in as subject; the login app grants the
				// gateway as audience and the user's groups as a claim.
				q, err := idp.Authorize(ctx, args.URL, hydratest.User{Subject: subject, Claims: map[string]any{"groups": groups}, Audience: []string{resource}})
				if err != nil {
					return nil, err
				}
				return &auth.AuthorizationResult{Code: q.Get("code"), State: q.Get("state"), Iss: q.Get("iss")}, nil
			},
		})
		if err != nil {
			t.Fatal(err)
		}
		copts := &mcp.ClientOptions{
			Capabilities: &mcp.ClientCapabilities{Elicitation: &mcp.ElicitationCapabilities{}},
			ElicitationHandler: func(_ context.Context, req *mcp.ElicitRequest) (*mcp.ElicitResult, error) {
				qmu.Lock()
				questions[subject] = append(questions[subject], req.Params.Message)
				qmu.Unlock()
				decision := "once"
				if subject == "dave" {
					decision = "always"
				}
				return &mcp.ElicitResult{Action: "accept", Content: map[string]any{"decision": decision}}, nil
			},
		}
		cs, err := mcp.NewClient(&mcp.Implementation{Name: "oauth-test"}, copts).Connect(ctx, &mcp.StreamableClientTransport{Endpoint: resource, OAuthHandler: h}, nil)
		if err != nil {
			t.Fatalf("%s: connect with OAuth: %v", subject, err)
		}
		t.Cleanup(func() { cs.Close() })
		return cs
	}
	alice := login("alice", "eng")
	if names := listNames(t, ctx, alice); !names["alpha__echo"] {
		t.Fatalf("alice's tools/list: %v, want alpha__echo", names)
	}
	if txt, isErr := callText(t, ctx, alice, "alpha__echo", map[string]any{"text": "from alice"}); isErr || !strings.Contains(txt, "from alice") {
		t.Errorf("alice (group:eng allows mcp__alpha): isError %v, %q", isErr, txt)
	}
	bob := login("bob", "ops")
	if txt, isErr := callText(t, ctx, bob, "alpha__echo", map[string]any{"text": "from bob"}); !isErr || !strings.Contains(txt, `denied by rule "mcp__alpha__echo"`) {
		t.Errorf("bob (group:ops denies mcp__alpha__echo): isError %v, %q", isErr, txt)
	}
	// No rule for carol: she is asked, on her own session only, and
	// offered "always" for her own entry of the auth file only.
	carol := login("carol")
	if txt, isErr := callText(t, ctx, carol, "alpha__echo", map[string]any{"text": "from carol"}); isErr || !strings.Contains(txt, "from carol") {
		t.Errorf("carol (asked, answered once): isError %v, %q", isErr, txt)
	}
	qmu.Lock()
	if len(questions["carol"]) != 1 || len(questions["alice"]) != 0 || len(questions["bob"]) != 0 {
		t.Errorf("questions %q; want one, to carol", questions)
	} else if q := questions["carol"][0]; !strings.Contains(q, "Allow mcp__alpha__echo") || !strings.Contains(q, `always: write the allow rule "mcp__alpha__echo" to carol's entry in ~/.switchboard/gateway-auth.json`) {
		t.Errorf("carol's question %q; want always offered for her own entry", q)
	}
	qmu.Unlock()
	// Dave, who has no entry, answers always: he gets one, holding only
	// his allow rule, and is not asked again.
	dave := login("dave")
	for i := range 2 {
		if txt, isErr := callText(t, ctx, dave, "alpha__echo", map[string]any{"text": "from dave"}); isErr {
			t.Errorf("dave's call %d (he answers always): %q", i+1, txt)
		}
	}
	qmu.Lock()
	if n := len(questions["dave"]); n != 1 {
		t.Errorf("dave was asked %d times, want once", n)
	}
	qmu.Unlock()
	if f, _, err := gateway.ReadAuthFile(filepath.Join(w.sbHome, "gateway-auth.json")); err != nil {
		t.Error(err)
	} else if e := f.Principals["dave"]; e == nil || strings.Join(e.Allow, ",") != "mcp__alpha__echo" || len(e.Keys)+len(e.Groups)+len(e.Deny)+len(e.Ask) != 0 || e.RateLimit != nil {
		t.Errorf("dave's entry after always: %+v; want only his allow rule", e)
	}

	// Tokens of the client credentials grant: one good, three refused.
	svc := idp.CreateClient(t, hydratest.Client{Audience: []string{resource, "http://other.example.test/mcp"}})
	short := idp.CreateClient(t, hydratest.Client{Audience: []string{resource}})
	idp.SetAccessTokenLifespan(t, short.ID, time.Second)
	expiring := idp.Token(t, short, resource)
	forged := impostor.Token(t, impostor.CreateClient(t, hydratest.Client{Audience: []string{resource}}), resource)
	if iss := tokenClaim(t, forged, "iss"); iss != idp.Issuer {
		t.Fatalf("the impostor's token names issuer %v; the test needs %s", iss, idp.Issuer)
	}
	good := idp.Token(t, svc, resource)
	if code, _ := oauthInit(t, base, good); code != http.StatusOK {
		t.Errorf("a token for the gateway from the issuer: %d, want 200", code)
	}
	exp, _ := tokenClaim(t, expiring, "exp").(float64)
	time.Sleep(time.Until(time.Unix(int64(exp)+1, 0))) // let it expire
	tokens := []string{good, expiring, forged}
	for _, tc := range []struct{ name, token, reason string }{
		{"another audience", idp.Token(t, svc, "http://other.example.test/mcp"), "access token is for another audience"},
		{"expired", expiring, "access token has expired"},
		{"signed by another key", forged, "access token is not signed by a key of the issuer"},
	} {
		tokens = append(tokens, tc.token)
		code, challenge := oauthInit(t, base, tc.token)
		if code != http.StatusUnauthorized || !strings.Contains(challenge, `resource_metadata="`+metaURL+`"`) ||
			!strings.Contains(challenge, `error="invalid_token"`) || !strings.Contains(challenge, tc.reason) {
			t.Errorf("%s: %d, WWW-Authenticate %q; want 401, the metadata and %q", tc.name, code, challenge, tc.reason)
		}
	}
	stop()

	// The audit log names the users; no log holds a token.
	raw, err := os.ReadFile(auditFile)
	if err != nil {
		t.Fatal(err)
	}
	var who []string
	sc := bufio.NewScanner(strings.NewReader(string(raw)))
	for sc.Scan() {
		var line struct {
			Principal string   `json:"principal"`
			Groups    []string `json:"groups"`
			Decision  string   `json:"decision"`
		}
		if err := json.Unmarshal(sc.Bytes(), &line); err != nil {
			t.Fatalf("audit line %q: %v", sc.Text(), err)
		}
		who = append(who, line.Principal+"/"+strings.Join(line.Groups, ",")+"/"+line.Decision)
	}
	if strings.Join(who, " ") != "alice/eng/allow bob/ops/deny carol//ask dave//ask dave//allow" {
		t.Errorf("audit lines %v, want alice's allowed call, bob's denied one, carol's asked one and dave's asked, then allowed by his rule", who)
	}
	logs := string(raw) + w.logs(t)
	if !strings.Contains(logs, "accepting OAuth access tokens") {
		t.Errorf("the log does not say the issuer was reached at start-up")
	}
	for _, tok := range tokens {
		sig := tok[strings.LastIndex(tok, ".")+1:]
		if strings.Contains(logs, sig) {
			t.Errorf("a token's signature is in the logs")
		}
	}
}

// oauthInit posts an initialize with token ("" for none) and returns the
// status and the WWW-Authenticate header.
func oauthInit(t *testing.T, base, token string) (int, string) {
	t.Helper()
	body := `{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"curl","version":"1"}}}`
	req, _ := http.NewRequest("POST", base+"/mcp", strings.NewReader(body))
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json, text/event-stream")
	if token != "" {
		req.Header.Set("Authorization", "Bearer "+token)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	io.Copy(io.Discard, resp.Body)
	resp.Body.Close()
	return resp.StatusCode, resp.Header.Get("WWW-Authenticate")
}

// tokenClaim reads one claim of a JWT without checking it: the test looks
// at what the IdP issued, to know a refusal is for the reason it tests.
func tokenClaim(t *testing.T, token, name string) any {
	t.Helper()
	parts := strings.Split(token, ".")
	if len(parts) != 3 {
		t.Fatalf("not a JWT")
	}
	b, err := base64.RawURLEncoding.DecodeString(parts[1])
	if err != nil {
		t.Fatal(err)
	}
	var c map[string]any
	if err := json.Unmarshal(b, &c); err != nil {
		t.Fatal(err)
	}
	return c[name]
}

// logs returns what the gateway wrote to its log folder.
func (w *gatewayWorld) logs(t *testing.T) string {
	t.Helper()
	var b strings.Builder
	_ = filepath.WalkDir(filepath.Join(w.sbHome, "logs"), func(p string, d os.DirEntry, err error) error {
		if err == nil && !d.IsDir() {
			data, _ := os.ReadFile(p)
			b.Write(data)
		}
		return nil
	})
	if b.Len() == 0 {
		t.Errorf("the gateway wrote no log under %s", filepath.Join(w.sbHome, "logs"))
	}
	return b.String()
}

// TestServeOAuthFlags checks the OAuth flags' usage errors without
// starting serve, and that good ones reach the options.
func TestServeOAuthFlags(t *testing.T) {
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"serve", "--oauth-issuer", "https://idp.example.com/"}, "apply to HTTP only"},
		{[]string{"serve", "--http", "127.0.0.1:0", "--oauth-issuer", "https://idp.example.com/"}, "go together"},
		{[]string{"serve", "--http", "127.0.0.1:0", "--resource-url", "https://gw.example.com/mcp"}, "go together"},
		{[]string{"serve", "--http", "127.0.0.1:0", "--groups-claim", "roles"}, "go together"},
		{[]string{"serve", "--http", "127.0.0.1:0", "--oauth-issuer", "http://idp.example.com/", "--resource-url", "https://gw.example.com/mcp"}, "must be https"},
	} {
		t.Run(strings.Join(tc.args, " "), func(t *testing.T) {
			w := newMgmtWorld(t)
			_, errOut, code := w.run(false, tc.args...)
			if code != ExitUsage || !strings.Contains(errOut, tc.want) {
				t.Errorf("exit %d, stderr %q; want exit 2 and %q", code, errOut, tc.want)
			}
		})
	}
	got := &ServeOptions{HTTP: "127.0.0.1:0", oauthOptions: oauthOptions{
		OAuthIssuer: "https://idp.example.com/", ResourceURL: "https://gw.example.com/mcp", GroupsClaim: "roles",
	}}
	if err := got.checkOAuth(); err != nil {
		t.Fatalf("good OAuth flags: %v", err)
	}
	if got.jwt == nil || got.jwt.MetadataURL() != "https://gw.example.com/.well-known/oauth-protected-resource/mcp" || got.GroupsClaim != "roles" {
		t.Errorf("options: %+v", got.oauthOptions)
	}
}

// TestGatewayHTTPIssuerTokens: serve --http and examples/gateway, as
// OAuth resource servers of one Hydra, refuse a request without a token
// with 401 naming their RFC 9728 metadata, serve that metadata without
// auth, accept a token the issuer made for them and refuse one for
// another audience. (TestGatewayOAuthHydra is serve's whole story.)
func TestGatewayHTTPIssuerTokens(t *testing.T) {
	if testing.Short() {
		t.Skip("starts ORY Hydra and the gateways")
	}
	idp := hydratest.Start(t, nil)
	// Hydra makes its access-token key with its first token: take one
	// first, so that the key exists when serve discovers the issuer at
	// start-up. (Without it, serve refuses the first token as "not signed
	// by a key of the issuer"; TestGatewayOAuthHydra logs a user in first.)
	// On a loaded machine Hydra may drop that first request while it
	// makes the key: it is tried again.
	warm := idp.CreateClient(t, hydratest.Client{Audience: []string{"http://warm.example.test"}})
	for i := 0; ; i++ {
		req, _ := http.NewRequest(http.MethodPost, idp.Public+"/oauth2/token",
			strings.NewReader("grant_type=client_credentials&audience=http%3A%2F%2Fwarm.example.test"))
		req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
		req.SetBasicAuth(warm.ID, warm.Secret)
		resp, err := http.DefaultClient.Do(req)
		if err == nil {
			resp.Body.Close()
		}
		if err == nil && resp.StatusCode == http.StatusOK {
			break
		}
		if i == 4 {
			t.Fatalf("Hydra's first token: %v %v", resp, err)
		}
	}
	forEachHTTPGateway(t, func(t *testing.T, startGW func(t testing.TB, w *gatewayWorld, args ...string) (string, func())) {
		w := newGatewayWorld(t)
		w.servers(t, "alpha")
		addr := freePort(t)
		resource := "http://" + addr + "/mcp"
		base, stop := startGW(t, w, "--http", addr, "--oauth-issuer", idp.Issuer, "--resource-url", resource)
		defer stop()
		metaURL := "http://" + addr + "/.well-known/oauth-protected-resource/mcp"
		if code, challenge := oauthInit(t, base, ""); code != http.StatusUnauthorized || !strings.Contains(challenge, `resource_metadata="`+metaURL+`"`) {
			t.Errorf("no token: %d, WWW-Authenticate %q; want 401 naming %s", code, challenge, metaURL)
		}
		resp, err := http.Get(metaURL)
		if err != nil {
			t.Fatal(err)
		}
		var m oauthex.ProtectedResourceMetadata
		err = json.NewDecoder(resp.Body).Decode(&m)
		resp.Body.Close()
		if err != nil || resp.StatusCode != http.StatusOK || m.Resource != resource {
			t.Errorf("metadata: %d, %+v, %v; want the resource %s", resp.StatusCode, m, err, resource)
		}
		svc := idp.CreateClient(t, hydratest.Client{Audience: []string{resource, "http://other.example.test/mcp"}})
		if code, challenge := oauthInit(t, base, idp.Token(t, svc, resource)); code != http.StatusOK {
			t.Errorf("a token for the gateway from the issuer: %d (%s), want 200", code, challenge)
		}
		if code, _ := oauthInit(t, base, idp.Token(t, svc, "http://other.example.test/mcp")); code != http.StatusUnauthorized {
			t.Errorf("a token for another audience: %d, want 401", code)
		}
	})
}

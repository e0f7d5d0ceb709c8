package cli

import (
	"context"
	"crypto/rand"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/switchboard-mcp/switchboard/gateway"
	"github.com/switchboard-mcp/switchboard/internal/testserver"
)

// TestGatewayScaleOutBehindNginx: two `serve --stateless` gateways behind
// nginx (round robin, on loopback) serve one client's calls alternately
// without errors (issue 6, point 6). Skipped unless nginx is installed
// (Debian: apt-get install nginx; .ci/run installs it).
func TestGatewayScaleOutBehindNginx(t *testing.T) {
	nginx := findNginx(t)
	w := newGatewayWorld(t)
	w.servers(t, "alpha")
	w.permissions(t, []string{"mcp__alpha"}, nil)
	var upstreams []string
	for i := 0; i < 2; i++ {
		base, stop := startHTTPGateway(t, w, "--http", "127.0.0.1:0", "--stateless", "--token-file", tokenFileFor(t, w))
		defer stop()
		upstreams = append(upstreams, strings.TrimPrefix(base, "http://"))
	}

	lb, _ := startNginx(t, nginx, upstreams)

	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	hc := &http.Client{Transport: bearerTransport{token: "scale-token"}}
	cs, err := mcp.NewClient(&mcp.Implementation{Name: "scale"}, nil).Connect(ctx, &mcp.StreamableClientTransport{Endpoint: lb + "/mcp", HTTPClient: hc}, nil)
	if err != nil {
		t.Fatalf("connect through nginx: %v", err)
	}
	defer cs.Close()
	pids := pidsOfCalls(t, ctx, cs, 20)
	// Each gateway runs its own alpha: two pids, both used.
	if len(pids) != 2 {
		t.Errorf("calls reached %d gateway(s), want 2: %v", len(pids), pids)
	}
}

// findNginx returns the nginx binary, or skips (fails under CI=true).
func findNginx(t *testing.T) string {
	t.Helper()
	nginx, err := exec.LookPath("nginx")
	if err != nil {
		for _, p := range []string{"/usr/sbin/nginx", "/usr/local/sbin/nginx"} {
			if _, err := os.Stat(p); err == nil {
				nginx = p
			}
		}
	}
	if nginx == "" {
		if os.Getenv("CI") == "true" {
			t.Fatal("nginx is not installed and CI=true (apt-get install nginx)")
		}
		t.Skip("nginx is not installed")
	}
	return nginx
}

// startNginx runs nginx in the foreground on a free loopback port, round
// robin over upstreams (host:port), all its files in a temp dir. It
// returns the balancer's URL and the path of its access log, one line per
// request: the upstream that answered it.
func startNginx(t *testing.T, nginx string, upstreams []string) (lb, accessLog string) {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	port := ln.Addr().(*net.TCPAddr).Port
	ln.Close()
	dir := t.TempDir()
	servers := ""
	for _, u := range upstreams {
		servers += "server " + u + "; "
	}
	conf := fmt.Sprintf(`worker_processes 1;
error_log %[1]s/error.log;
pid %[1]s/nginx.pid;
events { worker_connections 64; }
http {
  log_format up '$upstream_addr';
  access_log %[1]s/access.log up;
  client_body_temp_path %[1]s/body;
  proxy_temp_path %[1]s/proxy;
  fastcgi_temp_path %[1]s/fastcgi;
  uwsgi_temp_path %[1]s/uwsgi;
  scgi_temp_path %[1]s/scgi;
  upstream gateways { %[2]s }
  server {
    listen 127.0.0.1:%[3]d;
    location / {
      proxy_pass http://gateways;
      proxy_http_version 1.1;
      proxy_set_header Host 127.0.0.1;
      proxy_buffering off;
      proxy_read_timeout 300s;
    }
  }
}
`, dir, servers, port)
	confFile := filepath.Join(dir, "nginx.conf")
	if err := os.WriteFile(confFile, []byte(conf), 0o644); err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(nginx, "-p", dir, "-c", confFile, "-g", "daemon off;")
	out := &strings.Builder{}
	cmd.Stdout, cmd.Stderr = out, out
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		cmd.Process.Signal(os.Interrupt)
		done := make(chan struct{})
		go func() { cmd.Wait(); close(done) }()
		select {
		case <-done:
		case <-time.After(10 * time.Second):
			cmd.Process.Kill()
		}
	})
	lb = fmt.Sprintf("http://127.0.0.1:%d", port)
	deadline := time.Now().Add(15 * time.Second)
	for {
		resp, err := http.Get(lb + "/healthz")
		if err == nil {
			resp.Body.Close()
			if resp.StatusCode == 200 {
				break
			}
		}
		if time.Now().After(deadline) {
			b, _ := os.ReadFile(filepath.Join(dir, "error.log"))
			t.Fatalf("nginx did not come up: %v\n%s\n%s", err, out.String(), b)
		}
		time.Sleep(50 * time.Millisecond)
	}

	return lb, filepath.Join(dir, "access.log")
}

func tokenFileFor(t *testing.T, w *gatewayWorld) string {
	t.Helper()
	p := filepath.Join(w.dir, "scale-token")
	if err := os.WriteFile(p, []byte("scale-token"), 0o600); err != nil {
		t.Fatal(err)
	}
	return p
}

// TestGatewayScaleOutKeepsSessionGrants: two `serve --stateless
// --session-key-file` gateways behind nginx round robin (issue 19, point
// 5). A client on protocol 2025-11-25 that answers "allow for this
// session" once is not asked again for the rest of its session although
// its requests reach both instances; another session is asked afresh;
// a session ID that no instance sealed is answered 404.
func TestGatewayScaleOutKeepsSessionGrants(t *testing.T) {
	forEachHTTPGateway(t, func(t *testing.T, startGW func(t testing.TB, w *gatewayWorld, args ...string) (string, func())) {
		nginx := findNginx(t)
		w := newGatewayWorld(t)
		alphaBeta(t, w)
		writeJSON(t, filepath.Join(w.sbHome, "settings.json"), map[string]any{"permissions": map[string]any{
			"ask": []string{"mcp__alpha__pid"}, "allow": []string{"mcp__beta"},
		}})
		keyFile := filepath.Join(w.dir, "session-keys")
		key := make([]byte, 32)
		if _, err := rand.Read(key); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(keyFile, []byte("# shared by both instances\n"+base64.StdEncoding.EncodeToString(key)+"\n"), 0o600); err != nil {
			t.Fatal(err)
		}
		var upstreams []string
		stops := map[string]func(){}
		for i := 0; i < 2; i++ {
			base, stop := startGW(t, w, "--http", "127.0.0.1:0", "--stateless", "--session-key-file", keyFile, "--token-file", tokenFileFor(t, w))
			var once sync.Once
			stops[base] = func() { once.Do(stop) }
			defer stops[base]()
			upstreams = append(upstreams, strings.TrimPrefix(base, "http://"))
		}
		lb, accessLog := startNginx(t, nginx, upstreams)

		ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
		defer cancel()
		connect := func(ev *clientEvents) *mcp.ClientSession {
			t.Helper()
			hc := &http.Client{Transport: bearerTransport{token: "scale-token"}}
			// A client that needs a session: protocol 2025-11-25.
			cs, err := mcp.NewClient(&mcp.Implementation{Name: "scale"}, ev.options()).Connect(ctx,
				&mcp.StreamableClientTransport{Endpoint: lb + "/mcp", HTTPClient: hc}, &mcp.ClientSessionOptions{ProtocolVersion: "2025-11-25"})
			if err != nil {
				t.Fatalf("connect through nginx: %v", err)
			}
			t.Cleanup(func() { cs.Close() })
			if got := cs.InitializeResult().ProtocolVersion; got != "2025-11-25" {
				t.Fatalf("negotiated %s, want 2025-11-25", got)
			}
			if !strings.HasPrefix(cs.ID(), gateway.SessionIDPrefix) {
				t.Fatalf("session ID %q is not a sealed one", cs.ID())
			}
			return cs
		}
		first := &clientEvents{decision: "session", changed: make(chan struct{}, 1)}
		cs := connect(first)
		before := countLines(t, accessLog)
		pids := pidsOfCalls(t, ctx, cs, 12)
		first.mu.Lock()
		asked := len(first.asked)
		first.mu.Unlock()
		if asked != 1 {
			t.Errorf("the client was asked %d times in one session, want once (its \"session\" answer must hold on both instances)", asked)
		}
		// The balancer spread the session's requests over both instances...
		hits := map[string]int{}
		for _, up := range readLines(t, accessLog)[before:] {
			hits[up]++
		}
		for _, up := range upstreams {
			if hits[up] == 0 {
				t.Errorf("nginx sent none of the session's requests to %s: %v", up, hits)
			}
		}
		// ...and the session's calls all ran where it lives: one upstream
		// server process.
		if len(pids) != 1 {
			t.Errorf("one session's calls ran in %d server processes, want 1: %v", len(pids), pids)
		}

		// A grant is the session's: another session is asked.
		second := &clientEvents{decision: "once", changed: make(chan struct{}, 1)}
		cs2 := connect(second)
		if txt, isErr := callText(t, ctx, cs2, "alpha__pid", nil); isErr {
			t.Fatalf("second session's call: %q", txt)
		}
		second.mu.Lock()
		asked = len(second.asked)
		second.mu.Unlock()
		if asked != 1 {
			t.Errorf("a new session was asked %d times, want once (grants are per session)", asked)
		}

		// A client on 2026-07-28 has no session: it is served per request,
		// asked on whichever instance its call reaches, and not offered
		// "allow for this session", which could not hold.
		var offered []any
		var mu sync.Mutex
		modern, err := mcp.NewClient(&mcp.Implementation{Name: "modern"}, &mcp.ClientOptions{
			Capabilities: &mcp.ClientCapabilities{Elicitation: &mcp.ElicitationCapabilities{}},
			ElicitationHandler: func(_ context.Context, req *mcp.ElicitRequest) (*mcp.ElicitResult, error) {
				mu.Lock()
				defer mu.Unlock()
				if strings.HasPrefix(req.Params.Message, "[beta]") { // the upstream server's question
					return &mcp.ElicitResult{Action: "accept", Content: map[string]any{"answer": "blue"}}, nil
				}
				b, _ := json.Marshal(req.Params.RequestedSchema)
				var schema struct {
					Properties map[string]struct {
						Enum []any `json:"enum"`
					} `json:"properties"`
				}
				_ = json.Unmarshal(b, &schema)
				offered = schema.Properties["decision"].Enum
				return &mcp.ElicitResult{Action: "accept", Content: map[string]any{"decision": "once"}}, nil
			},
		}).Connect(ctx, &mcp.StreamableClientTransport{Endpoint: lb + "/mcp", HTTPClient: &http.Client{Transport: bearerTransport{token: "scale-token"}}}, nil)
		if err != nil {
			t.Fatalf("connect a 2026-07-28 client: %v", err)
		}
		defer modern.Close()
		if v := modern.InitializeResult().ProtocolVersion; v < "2026-07-28" {
			t.Fatalf("the default client negotiated %s, want 2026-07-28 or later", v)
		}
		for i := 0; i < 4; i++ {
			if txt, isErr := callText(t, ctx, modern, "alpha__pid", nil); isErr {
				t.Fatalf("2026-07-28 call %d: %q", i, txt)
			}
		}
		// An upstream server's question during a 2026-07-28 call: the call
		// waits in the instance that asked, and the client's retry with the
		// answer reaches it wherever nginx sends it.
		for i := 0; i < 6; i++ {
			txt, isErr := callText(t, ctx, modern, "beta__ask", nil)
			if isErr || !strings.Contains(txt, "answer: blue") {
				t.Errorf("upstream question, call %d: isError %v, %q", i, isErr, txt)
			}
		}
		mu.Lock()
		if len(offered) == 0 || slices.Contains(offered, any("session")) {
			t.Errorf("a sessionless client was offered %v, want once and deny without session", offered)
		}
		mu.Unlock()

		// An ID no instance sealed opens nowhere: 404, as for an ended
		// session, on every instance.
		for i := 0; i < 2; i++ {
			code, _ := initStatus(t, lb, "scale-token", gateway.SessionIDPrefix+"AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA")
			if code != http.StatusNotFound {
				t.Errorf("forged session ID: status %d, want 404", code)
			}
		}

		// The instance that holds the first session goes away: the session's
		// requests get 404 (start a new session) from the one left, not a
		// hang or a 502, and a new session works.
		keys, err := gateway.ReadSessionKeys(keyFile)
		if err != nil {
			t.Fatal(err)
		}
		owner, ok := keys.Open(cs.ID())
		if !ok || stops[owner] == nil {
			t.Fatalf("session ID opens to %q (%v), not one of %v", owner, ok, upstreams)
		}
		stops[owner]()
		for i := 0; i < 2; i++ {
			if code, _ := initStatus(t, lb, "scale-token", cs.ID()); code != http.StatusNotFound {
				t.Errorf("a request of a session whose instance is gone: status %d, want 404", code)
			}
		}
		after := &clientEvents{decision: "once", changed: make(chan struct{}, 1)}
		if txt, isErr := callText(t, ctx, connect(after), "alpha__pid", nil); isErr {
			t.Errorf("a new session after an instance went away: %q", txt)
		}
	})
}

// alphaBeta configures the scale-out tests' servers: alpha, the echo test
// server, and beta, which asks the client questions (elicit).
func alphaBeta(t *testing.T, w *gatewayWorld) {
	t.Helper()
	echoCmd, echoArgs := testserver.Command("echo")
	elicitCmd, elicitArgs := testserver.Command("elicit")
	writeJSON(t, filepath.Join(w.sbHome, "mcp.json"), map[string]any{"mcpServers": map[string]any{
		"alpha": map[string]any{"type": "stdio", "command": echoCmd, "args": echoArgs},
		"beta":  map[string]any{"type": "stdio", "command": elicitCmd, "args": elicitArgs},
	}})
}

// pidsOfCalls calls alpha__pid n times and counts the server processes
// that answered.
func pidsOfCalls(t *testing.T, ctx context.Context, cs *mcp.ClientSession, n int) map[string]int {
	t.Helper()
	pids := map[string]int{}
	for i := 0; i < n; i++ {
		txt, isErr := callText(t, ctx, cs, "alpha__pid", nil)
		pid := pidRE.FindString(txt)
		if isErr || pid == "" {
			t.Fatalf("call %d through nginx: %q", i, txt)
		}
		pids[pid]++
	}
	return pids
}

func readLines(t *testing.T, path string) []string {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil && !os.IsNotExist(err) {
		t.Fatal(err)
	}
	return strings.Fields(string(b))
}

func countLines(t *testing.T, path string) int { return len(readLines(t, path)) }

// A stateless gateway without --session-key-file cannot ask a client on
// 2025-11-25 (there is no stream for elicitation/create): the refusal says
// so and names the flag that would, instead of "run it where a person can
// answer" to a client whose person is right there.
func TestStatelessGatewaySaysWhyALegacyClientIsNotAsked(t *testing.T) {
	w := newGatewayWorld(t)
	w.servers(t, "alpha")
	writeJSON(t, filepath.Join(w.sbHome, "settings.json"), map[string]any{"permissions": map[string]any{"ask": []string{"mcp__alpha__pid"}}})
	base, stop := startHTTPGateway(t, w, "--http", "127.0.0.1:0", "--stateless", "--token-file", tokenFileFor(t, w))
	defer stop()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	ev := &clientEvents{decision: "once", changed: make(chan struct{}, 1)}
	hc := &http.Client{Transport: bearerTransport{token: "scale-token"}}
	cs, err := mcp.NewClient(&mcp.Implementation{Name: "legacy"}, ev.options()).Connect(ctx,
		&mcp.StreamableClientTransport{Endpoint: base + "/mcp", HTTPClient: hc}, &mcp.ClientSessionOptions{ProtocolVersion: "2025-11-25"})
	if err != nil {
		t.Fatal(err)
	}
	defer cs.Close()
	txt, isErr := callText(t, ctx, cs, "alpha__pid", nil)
	if !isErr || !strings.Contains(txt, "--session-key-file") || strings.Contains(txt, "where a person can answer") {
		t.Errorf("isError %v, %q; want a refusal that names --session-key-file", isErr, txt)
	}
	if len(ev.asked) != 0 {
		t.Errorf("asked %d times", len(ev.asked))
	}
}

// TestGatewayScaleOutRotatesKeysWithoutRestart: two `serve --stateless
// --session-key-file` gateways behind nginx round robin while the key file
// is rotated as docs/gateway.md prescribes, without restarting either
// (issue 29, point 9). Before, an instance read the file only at start:
// sessions sealed with the new key by a restarted instance were answered
// 404 by one not yet restarted. Now: a session begun after `session-key
// add` is sealed with the new key and works on both instances at once, a
// session of the old key goes on, and once the old key's line is
// deleted, new sessions and the retries of a 2026-07-28 call held for an
// upstream server's question still reach the instance that holds them.
func TestGatewayScaleOutRotatesKeysWithoutRestart(t *testing.T) {
	nginx := findNginx(t)
	w := newGatewayWorld(t)
	alphaBeta(t, w)
	w.permissions(t, []string{"mcp__alpha", "mcp__beta"}, nil)
	keyFile := filepath.Join(w.dir, "session-keys")
	addKey := func() {
		t.Helper()
		if out, err := w.command(t, "gateway", "session-key", "add", keyFile).CombinedOutput(); err != nil {
			t.Fatalf("session-key add: %v\n%s", err, out)
		}
	}
	addKey()
	var upstreams []string
	for range 2 {
		base, stop := startHTTPGateway(t, w, "--http", "127.0.0.1:0", "--stateless", "--session-key-file", keyFile, "--token-file", tokenFileFor(t, w))
		defer stop()
		upstreams = append(upstreams, strings.TrimPrefix(base, "http://"))
	}
	lb, accessLog := startNginx(t, nginx, upstreams)
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	hc := &http.Client{Transport: bearerTransport{token: "scale-token"}}
	connect := func(protocol string, opts *mcp.ClientOptions) *mcp.ClientSession {
		t.Helper()
		so := &mcp.ClientSessionOptions{ProtocolVersion: protocol}
		cs, err := mcp.NewClient(&mcp.Implementation{Name: "rotate"}, opts).Connect(ctx, &mcp.StreamableClientTransport{Endpoint: lb + "/mcp", HTTPClient: hc}, so)
		if err != nil {
			t.Fatalf("connect through nginx: %v", err)
		}
		t.Cleanup(func() { cs.Close() })
		return cs
	}
	// calls makes n calls in the session, each of which must work, and
	// checks that nginx sent them to both instances.
	calls := func(what string, cs *mcp.ClientSession, n int) {
		t.Helper()
		before := countLines(t, accessLog)
		for i := range n {
			if txt, isErr := callText(t, ctx, cs, "alpha__echo", map[string]any{"text": what}); isErr || !strings.Contains(txt, what) {
				t.Fatalf("%s, call %d: isError %v, %q", what, i+1, isErr, txt)
			}
		}
		hits := map[string]int{}
		for _, up := range readLines(t, accessLog)[before:] {
			hits[up]++
		}
		for _, up := range upstreams {
			if hits[up] == 0 {
				t.Errorf("%s: nginx sent none of the calls to %s: %v", what, up, hits)
			}
		}
	}
	firstKeyOnly := func() *gateway.SessionKeys {
		t.Helper()
		b, err := os.ReadFile(keyFile)
		if err != nil {
			t.Fatal(err)
		}
		first := strings.SplitN(strings.TrimSpace(string(b)), "\n", 2)[0]
		ks, err := gateway.ParseSessionKeys(keyFile, []byte(first))
		if err != nil {
			t.Fatal(err)
		}
		return ks
	}

	// eachSealsWith begins a session on each instance itself and checks
	// that its ID is sealed with ks.
	eachSealsWith := func(what string, ks *gateway.SessionKeys) {
		t.Helper()
		for _, up := range upstreams {
			code, sid := initStatus(t, "http://"+up, "scale-token", "")
			if code != http.StatusOK {
				t.Fatalf("%s: initialize on %s: %d", what, up, code)
			}
			if _, ok := ks.Open(sid); !ok {
				t.Errorf("%s: %s sealed a new session with another key: it did not read the key file again", what, up)
			}
		}
	}

	old := connect("2025-11-25", nil)
	calls("a session of the first key", old, 6)

	// The rotation: a new key first, the old one kept. Neither instance
	// restarts.
	addKey()
	sealing := firstKeyOnly()
	eachSealsWith("after the rotation", sealing)
	fresh := connect("2025-11-25", nil)
	calls("a session of the new key", fresh, 8)
	calls("a session of the old key, after the rotation", old, 4)

	// The old key's line is deleted: its sessions end (404, a client
	// starts anew), the new key's go on, and new ones work everywhere.
	if err := os.WriteFile(keyFile+".tmp", []byte(base64.StdEncoding.EncodeToString(mustFirstKey(t, keyFile))+"\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	if err := os.Rename(keyFile+".tmp", keyFile); err != nil {
		t.Fatal(err)
	}
	eachSealsWith("after the old key was dropped", sealing)
	calls("a session of the new key, the old key dropped", fresh, 4)
	calls("a session begun after the old key was dropped", connect("2025-11-25", nil), 6)
	// A 2026-07-28 client: an upstream server's question holds the call
	// in the instance that asked; the retry with the answer must reach it
	// through either instance, by an instance name sealed with a key the
	// other instance still has.
	modern := connect("", &mcp.ClientOptions{
		Capabilities: &mcp.ClientCapabilities{Elicitation: &mcp.ElicitationCapabilities{}},
		ElicitationHandler: func(context.Context, *mcp.ElicitRequest) (*mcp.ElicitResult, error) {
			return &mcp.ElicitResult{Action: "accept", Content: map[string]any{"answer": "blue"}}, nil
		},
	})
	for i := range 6 {
		if txt, isErr := callText(t, ctx, modern, "beta__ask", nil); isErr || !strings.Contains(txt, "answer: blue") {
			t.Errorf("an upstream question after the rotation, call %d: isError %v, %q", i+1, isErr, txt)
		}
	}
}

// mustFirstKey returns the first key of a key file.
func mustFirstKey(t *testing.T, path string) []byte {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	k, err := base64.StdEncoding.DecodeString(strings.SplitN(strings.TrimSpace(string(b)), "\n", 2)[0]) // as session-key add writes it
	if err != nil {
		t.Fatal(err)
	}
	return k
}

package cli

import (
	"bufio"
	"context"
	"net/http"
	"os/exec"
	"strings"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/switchboard-mcp/switchboard/gateway"
)

// plainGateway starts serve --http on loopback, without keys or
// profiles' endpoints, over one test server, alpha, after setup (if
// any) has written more configuration; it is stopped when the test ends.
func plainGateway(t *testing.T, setup func(w *gatewayWorld)) (base string, ctx context.Context) {
	t.Helper()
	w := newGatewayWorld(t)
	w.servers(t, "alpha")
	if setup != nil {
		setup(w)
	}
	base, stop := startHTTPGateway(t, w, "--http", "127.0.0.1:0", "--wait", "30s")
	t.Cleanup(stop)
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	t.Cleanup(cancel)
	return base, ctx
}

// TestGatewayWithoutProfileEndpoints: a gateway started without
// --profiles answers /mcp/<name> with a 404 that says how to serve a
// profile's endpoint, and still serves /mcp.
func TestGatewayWithoutProfileEndpoints(t *testing.T) {
	base, ctx := plainGateway(t, func(w *gatewayWorld) {
		writeJSON(t, w.sbHome+"/settings.json", map[string]any{"profiles": map[string]any{
			"a": map[string]any{"servers": []string{"alpha"}},
		}})
	})
	if code, body := requestAs(t, ctx, "POST", base+"/mcp/a", "", `{}`); code != http.StatusNotFound || !strings.Contains(body, "--profiles") || !strings.Contains(body, "--all-profiles") {
		t.Errorf("/mcp/a without --profiles: %d %q, want 404 naming --profiles and --all-profiles", code, body)
	}
	cs, err := mcp.NewClient(&mcp.Implementation{Name: "profile-test"}, nil).Connect(ctx, &mcp.StreamableClientTransport{Endpoint: base + "/mcp"}, nil)
	if err != nil {
		t.Fatalf("connect /mcp: %v", err)
	}
	defer cs.Close()
	if names := listNames(t, ctx, cs); !names["alpha__echo"] {
		t.Errorf("/mcp lists %v, want alpha__echo", names)
	}
}

// TestGatewayAllProfilesNamesTheDropped: serve --all-profiles says on
// stderr which profile definitions it dropped and why, with the file and
// position, next to the endpoints it serves.
func TestGatewayAllProfilesNamesTheDropped(t *testing.T) {
	w := newGatewayWorld(t)
	w.servers(t, "alpha")
	writeJSON(t, w.sbHome+"/settings.json", map[string]any{"profiles": map[string]any{
		"a":   map[string]any{"servers": []string{"alpha"}},
		"bad": map[string]any{"extends": []string{"aa"}},
	}})
	waitFor := stderrLines(t, w.command(t, "serve", "--http", "127.0.0.1:0", "--all-profiles"), 60*time.Second)
	var served, dropped bool
	waitFor("profile a's endpoint and the dropped profile bad", func(l string) bool {
		served = served || strings.Contains(l, "switchboard: profile a at http://")
		dropped = dropped || (strings.Contains(l, "switchboard: a profile definition dropped: "+w.sbHome+"/settings.json:") &&
			strings.Contains(l, `extends unknown profile "aa"`))
		return served && dropped
	})
}

// TestGatewayProfileEndpoints (issue 34.3): one serve --http --profiles
// a,b serves each profile as its own virtual server at /mcp/<profile>
// (its servers' tools only), over the same processes as /mcp; the
// per-principal rules of two keys apply on top of the profile's own deny
// rule; an unknown /mcp/<name> is 404, naming the profiles only to a
// caller with a valid key.
func TestGatewayProfileEndpoints(t *testing.T) {
	t.Parallel() // waits on processes, mostly: runs beside the others
	w := newGatewayWorld(t)
	w.servers(t, "alpha", "beta")
	writeJSON(t, w.sbHome+"/settings.json", map[string]any{"profiles": map[string]any{
		"a": map[string]any{"servers": []string{"alpha"}},
		"b": map[string]any{"servers": []string{"beta"}, "permissions": map[string]any{"deny": []string{"mcp__beta__add"}}},
	}})
	alice := w.addKey(t, "alice")
	bob := w.addKey(t, "bob")
	w.editAuth(t, func(f *gateway.AuthFile) {
		f.Principals["alice"].Allow = []string{"mcp__alpha", "mcp__beta"}
		f.Principals["bob"].Allow = []string{"mcp__alpha__echo"}
		// Denied, not merely unallowed: a question no client answers now
		// waits in the /ui console (issue 33), longer than this test.
		f.Principals["bob"].Deny = []string{"mcp__beta"}
	})
	base, stop := startHTTPGateway(t, w, "--http", "127.0.0.1:0", "--profiles", "a,b", "--wait", "30s")
	defer stop()
	ctx, cancel := context.WithTimeout(context.Background(), 90*time.Second)
	defer cancel()

	connect := func(path, key string) *mcp.ClientSession {
		t.Helper()
		hc := &http.Client{Transport: bearerTransport{token: key}}
		cs, err := mcp.NewClient(&mcp.Implementation{Name: "profile-test"}, nil).Connect(ctx, &mcp.StreamableClientTransport{Endpoint: base + path, HTTPClient: hc}, nil)
		if err != nil {
			t.Fatalf("connect %s: %v", path, err)
		}
		t.Cleanup(func() { cs.Close() })
		return cs
	}
	onlyPrefixed := func(path string, names map[string]bool, prefix string) {
		t.Helper()
		if !names[prefix+"echo"] {
			t.Errorf("%s lists no %secho: %v", path, prefix, names)
		}
		for n := range names {
			if !strings.HasPrefix(n, prefix) {
				t.Errorf("%s lists %s", path, n)
			}
		}
	}
	aliceA, aliceB := connect("/mcp/a", alice), connect("/mcp/b", alice)
	onlyPrefixed("/mcp/a", listNames(t, ctx, aliceA), "alpha__")
	onlyPrefixed("/mcp/b", listNames(t, ctx, aliceB), "beta__")
	if all := listNames(t, ctx, connect("/mcp", alice)); !all["alpha__echo"] || !all["beta__echo"] {
		t.Errorf("/mcp lists %v, want both servers", all)
	}

	if txt, isErr := callText(t, ctx, aliceB, "beta__echo", map[string]any{"text": "hi b"}); isErr || !strings.Contains(txt, "hi b") {
		t.Errorf("alice on /mcp/b: isError %v, %q", isErr, txt)
	}
	if txt, isErr := callText(t, ctx, aliceB, "beta__add", map[string]any{"a": 1, "b": 2}); !isErr || !strings.Contains(txt, "mcp__beta__add") {
		t.Errorf("alice's call profile b denies: isError %v, %q", isErr, txt)
	}
	if txt, isErr := callText(t, ctx, connect("/mcp", alice), "beta__add", map[string]any{"a": 1, "b": 2}); isErr {
		t.Errorf("alice on /mcp (profile b's deny is b's only): %q", txt)
	}
	if res, err := aliceA.CallTool(ctx, &mcp.CallToolParams{Name: "beta__echo", Arguments: map[string]any{"text": "x"}}); err == nil && !res.IsError {
		t.Error("/mcp/a called a server profile a leaves out")
	} else if err != nil && !strings.Contains(err.Error(), `unknown tool "beta__echo"`) {
		t.Errorf("/mcp/a's call of beta__echo: %v, want unknown tool", err)
	}
	bobA, bobB := connect("/mcp/a", bob), connect("/mcp/b", bob)
	if txt, isErr := callText(t, ctx, bobA, "alpha__echo", map[string]any{"text": "hi"}); isErr {
		t.Errorf("bob on /mcp/a (his rule allows it): %q", txt)
	}
	if txt, isErr := callText(t, ctx, bobB, "beta__echo", map[string]any{"text": "hi"}); !isErr {
		t.Errorf("bob on /mcp/b (his rules deny it): %q", txt)
	}

	get := func(path, key string) (int, string) {
		t.Helper()
		return requestAs(t, ctx, "POST", base+path, key, `{}`)
	}
	if code, body := get("/mcp/nope", alice); code != http.StatusNotFound || !strings.Contains(body, "/mcp/a, /mcp/b") {
		t.Errorf("/mcp/nope with a key: %d %q, want 404 naming the profiles", code, body)
	}
	for _, key := range []string{"", "sbk_not_a_key"} {
		if code, body := get("/mcp/nope", key); code != http.StatusNotFound || strings.Contains(body, "/mcp/a") {
			t.Errorf("/mcp/nope with key %q: %d %q, want 404 naming nothing", key, code, body)
		}
	}
	checkProfileEndpointsTS(t, w, base, alice, bob)
}

// TestGatewayIndex: the gateway's root tells a browser, or a client
// configured with the bare address, where the MCP endpoint is; other
// unknown paths stay a plain 404.
func TestGatewayIndex(t *testing.T) {
	base, ctx := plainGateway(t, nil)
	if code, body := requestAs(t, ctx, "GET", base+"/", "", ""); code != http.StatusOK || !strings.Contains(body, "MCP endpoint (Streamable HTTP): /mcp\n") || !strings.Contains(body, "Health: /healthz") {
		t.Errorf("GET /: %d %q, want the endpoints", code, body)
	}
	if code, body := requestAs(t, ctx, "POST", base+"/", "", `{}`); code != http.StatusNotFound || !strings.Contains(body, "the MCP endpoint is /mcp") {
		t.Errorf("POST /: %d %q, want 404 naming /mcp", code, body)
	}
	if code, body := requestAs(t, ctx, "GET", base+"/nope", "", ""); code != http.StatusNotFound || strings.Contains(body, "MCP endpoint") {
		t.Errorf("GET /nope: %d %q, want a plain 404", code, body)
	}
}

// TestGatewayProfilesWithinProfile: serve --profile a --profiles b serves
// /mcp/b as a view of profile a, so the servers b includes and a leaves
// out are not served there; serve says which on stderr rather than
// print b's endpoint as if it served all of b.
func TestGatewayProfilesWithinProfile(t *testing.T) {
	w := newGatewayWorld(t)
	w.servers(t, "alpha", "beta")
	writeJSON(t, w.sbHome+"/settings.json", map[string]any{"profiles": map[string]any{
		"a": map[string]any{"servers": []string{"alpha"}},
		"b": map[string]any{"servers": []string{"alpha", "beta"}},
	}})
	waitFor := stderrLines(t, w.command(t, "serve", "--http", "127.0.0.1:0", "--profile", "a", "--profiles", "b"), 60*time.Second)
	waitFor("the warning", func(l string) bool {
		return l == `switchboard: warning: /mcp/b serves profile b within --profile a: not served, as not in profile "a": beta`
	})
}

// TestGatewayProfileDroppedOnReload: an edit of the settings that drops a
// profile serve serves leaves its endpoint showing no server (fail
// closed); serve says so on stderr, with why, and says when it is usable
// again, and with --all-profiles names a profile added, which needs a
// restart to be served.
func TestGatewayProfileDroppedOnReload(t *testing.T) {
	w := newGatewayWorld(t)
	w.servers(t, "alpha")
	settings := func(profiles map[string]any) {
		writeJSON(t, w.sbHome+"/settings.json", map[string]any{"profiles": profiles})
	}
	settings(map[string]any{"a": map[string]any{"servers": []string{"alpha"}}})
	waitFor := stderrLines(t, w.command(t, "serve", "--http", "127.0.0.1:0", "--all-profiles"), 90*time.Second)
	waitFor("profile a's endpoint", func(l string) bool { return strings.HasPrefix(l, "switchboard: profile a at http://") })
	settings(map[string]any{"a": map[string]any{"servers": []string{}}})
	waitFor("a dropped", func(l string) bool {
		return strings.HasPrefix(l, "switchboard: profile a is no longer usable, so /mcp/a serves no server until it is: "+w.sbHome+"/settings.json:") &&
			strings.Contains(l, "an empty server list includes nothing")
	})
	settings(map[string]any{"a": map[string]any{"servers": []string{"alpha"}}, "b": map[string]any{}})
	waitFor("a usable again", func(l string) bool { return l == "switchboard: profile a is usable again: /mcp/a serves it" })
	waitFor("b added", func(l string) bool {
		return l == "switchboard: profile b was added to the settings; restart serve to serve it at /mcp/b"
	})
}

// stderrLines starts cmd and returns a function that reads its stderr,
// line by line, until match accepts one, failing the test (with every
// line read) when cmd ends first or when within, counted from the
// start, has passed. cmd is killed when the test ends.
func stderrLines(t *testing.T, cmd *exec.Cmd, within time.Duration) func(what string, match func(string) bool) {
	t.Helper()
	stderr, err := cmd.StderrPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { cmd.Process.Kill(); cmd.Wait() })
	lines := make(chan string)
	go func() {
		defer close(lines)
		sc := bufio.NewScanner(stderr)
		for sc.Scan() {
			lines <- sc.Text()
		}
	}()
	var seen []string
	timeout := time.After(within)
	return func(what string, match func(string) bool) {
		t.Helper()
		for {
			select {
			case l, ok := <-lines:
				if !ok {
					t.Fatalf("serve ended before %s; stderr:\n%s", what, strings.Join(seen, "\n"))
				}
				seen = append(seen, l)
				if match(l) {
					return
				}
			case <-timeout:
				t.Fatalf("no line for %s; stderr:\n%s", what, strings.Join(seen, "\n"))
			}
		}
	}
}

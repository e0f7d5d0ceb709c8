package cli

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/switchboard-mcp/switchboard/internal/npmtest"
)

type tsResult struct {
	Asked []string `json:"asked"`
	Calls map[string]struct {
		IsError bool   `json:"isError"`
		Text    string `json:"text"`
		Error   string `json:"error"` // a protocol error's message
	} `json:"calls"`
	Tools   []string `json:"tools"`
	Prompts []string `json:"prompts"`
}

// runTSClient runs testdata/gateway/ts_client.mjs with node.
func runTSClient(t *testing.T, w *gatewayWorld, env []string, args ...string) tsResult {
	t.Helper()
	res, err := startTSClient(t, w, env, args...)()
	if err != nil {
		t.Fatal(err)
	}
	return res
}

// startTSClient starts ts_client.mjs (installing the SDK first) and
// returns what waits for its result; the wait may run in any goroutine.
func startTSClient(t *testing.T, w *gatewayWorld, env []string, args ...string) func() (tsResult, error) {
	t.Helper()
	p := npmtest.Install(t)
	script, err := filepath.Abs("testdata/gateway/ts_client.mjs")
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 90*time.Second)
	cmd := exec.CommandContext(ctx, p.Node, append([]string{script}, args...)...)
	cmd.Env = append(append(append([]string{}, w.env...), "SDK="+p.SDK), env...)
	cmd.Dir = w.ws
	var stdout, stderr strings.Builder
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	if err := cmd.Start(); err != nil {
		cancel()
		t.Fatal(err)
	}
	return func() (tsResult, error) {
		defer cancel()
		var res tsResult
		if err := cmd.Wait(); err != nil {
			return res, fmt.Errorf("ts client: %v\nstdout: %s\nstderr: %s", err, stdout.String(), stderr.String())
		}
		if err := json.Unmarshal([]byte(stdout.String()), &res); err != nil {
			return res, fmt.Errorf("ts client output %q: %v\nstderr: %s", stdout.String(), err, stderr.String())
		}
		return res, nil
	}
}

func checkTSResult(t *testing.T, res tsResult) {
	t.Helper()
	have := map[string]bool{}
	for _, n := range res.Tools {
		have[n] = true
	}
	for _, want := range []string{"alpha__echo", "beta__echo", "beta__pid"} {
		if !have[want] {
			t.Errorf("tools lack %s: %v", want, res.Tools)
		}
	}
	if c := res.Calls["alpha__echo"]; c.IsError || !strings.Contains(c.Text, "from typescript") {
		t.Errorf("allowed call: %+v", c)
	}
	if c := res.Calls["alpha__add"]; !c.IsError || !strings.Contains(c.Text, "deny") {
		t.Errorf("denied call: %+v", c)
	}
	if c := res.Calls["beta__pid"]; c.IsError || pidRE.FindString(c.Text) == "" {
		t.Errorf("asked call: %+v", c)
	}
	if len(res.Asked) != 1 || !strings.Contains(res.Asked[0], "Allow mcp__beta__pid") {
		t.Errorf("questions: %q", res.Asked)
	}
	if !strings.Contains(strings.Join(res.Prompts, " "), "alpha:greet") {
		t.Errorf("prompts: %v", res.Prompts)
	}
}

// TestGatewayTypeScriptClientStdio: the official TypeScript SDK client
// spawns `switchboard serve --stdio` and goes through allow, deny and ask.
func TestGatewayTypeScriptClientStdio(t *testing.T) {
	w := newGatewayWorld(t)
	w.servers(t, "alpha", "beta")
	w.permissions(t, []string{"mcp__alpha__echo"}, []string{"mcp__alpha__add"})
	res := runTSClient(t, w, nil, append([]string{"stdio", switchboardBin(t)}, w.args("serve", "--stdio")...)...)
	checkTSResult(t, res)
}

// TestGatewayTypeScriptClientHTTP: the same over Streamable HTTP with a
// bearer token.
func TestGatewayTypeScriptClientHTTP(t *testing.T) {
	w := newGatewayWorld(t)
	w.servers(t, "alpha", "beta")
	w.permissions(t, []string{"mcp__alpha__echo"}, []string{"mcp__alpha__add"})
	tokenFile := filepath.Join(w.dir, "token")
	if err := os.WriteFile(tokenFile, []byte("ts-token-123"), 0o600); err != nil {
		t.Fatal(err)
	}
	base, stop := startHTTPGateway(t, w, "--http", "127.0.0.1:0", "--token-file", tokenFile)
	defer stop()
	res := runTSClient(t, w, []string{"TOKEN=ts-token-123"}, "http", base+"/mcp")
	checkTSResult(t, res)
}

// checkProfileEndpointsTS is issue 34's real-client test of
// TestGatewayProfileEndpoints' gateway (serve --http --profiles a,b): the
// official TypeScript SDK on /mcp/a and /mcp/b with two keys whose rules
// differ. Each endpoint lists only its profile's server's tools and knows
// no other; profile b's deny refuses alice's call that her rules allow;
// bob's rules refuse on /mcp/b the call alice makes there.
func checkProfileEndpointsTS(t *testing.T, w *gatewayWorld, base, alice, bob string) {
	t.Helper()
	run := func(path, key, calls string) tsResult {
		t.Helper()
		return runTSClient(t, w, []string{"TOKEN=" + key, "CALLS=" + calls}, "http", base+path)
	}
	only := func(what string, tools []string, prefix string) {
		t.Helper()
		if !slices.Contains(tools, prefix+"echo") || slices.ContainsFunc(tools, func(n string) bool { return !strings.HasPrefix(n, prefix) }) {
			t.Errorf("%s lists %v, want %s* only", what, tools, prefix)
		}
	}
	a := run("/mcp/a", alice, `[["alpha__echo", {"text": "ts on a"}], ["beta__echo", {"text": "not through a"}]]`)
	only("ts alice /mcp/a", a.Tools, "alpha__")
	if c := a.Calls["alpha__echo"]; c.IsError || !strings.Contains(c.Text, "ts on a") {
		t.Errorf("ts alice /mcp/a alpha__echo: %+v", c)
	}
	if c := a.Calls["beta__echo"]; !c.IsError || strings.Contains(c.Text, "not through a") {
		t.Errorf("ts alice /mcp/a called beta__echo, a server profile a leaves out: %+v", c)
	}
	b := run("/mcp/b", alice, `[["beta__echo", {"text": "ts on b"}], ["beta__add", {"a": 1, "b": 2}]]`)
	only("ts alice /mcp/b", b.Tools, "beta__")
	if c := b.Calls["beta__echo"]; c.IsError || !strings.Contains(c.Text, "ts on b") {
		t.Errorf("ts alice /mcp/b beta__echo: %+v", c)
	}
	if c := b.Calls["beta__add"]; !c.IsError || !strings.Contains(c.Text+c.Error, "mcp__beta__add") {
		t.Errorf("ts alice /mcp/b beta__add (profile b denies it): %+v", c)
	}
	bb := run("/mcp/b", bob, `[["beta__echo", {"text": "ts bob"}]]`)
	only("ts bob /mcp/b", bb.Tools, "beta__")
	if c := bb.Calls["beta__echo"]; !c.IsError || strings.Contains(c.Text, "ts bob") {
		t.Errorf("ts bob /mcp/b beta__echo (his rules deny it): %+v", c)
	}
}

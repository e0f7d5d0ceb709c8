package cli

import (
	"bufio"
	"context"
	"net"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/switchboard-mcp/switchboard/internal/testserver"
)

// TestServeDoesNotServeItsOwnEndpoint: `serve --http ADDR` whose servers
// include http://ADDR/mcp — a client's entry for the gateway, which `mcp
// import` copies like any other — says on stderr that it does not serve
// that server and why, and serves the others; before, it connected to
// itself and served its own tools again under one more prefix at every
// sync (self__self__…), without end. doctor, which does use it, notes
// that the gateway's tools repeat the configuration's own.
func TestServeDoesNotServeItsOwnEndpoint(t *testing.T) {
	w := newGatewayWorld(t)
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := ln.Addr().String()
	ln.Close() // serve takes the port
	cmd, args := testserver.Command("echo")
	writeJSON(t, filepath.Join(w.sbHome, "mcp.json"), map[string]any{"mcpServers": map[string]any{
		"a":    map[string]any{"type": "stdio", "command": cmd, "args": args},
		"self": map[string]any{"type": "http", "url": "http://" + addr + "/mcp"},
	}})
	w.permissions(t, []string{"mcp__a"}, nil)
	serve := w.command(t, "serve", "--http", addr)
	stderr, err := serve.StderrPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := serve.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { serve.Process.Kill(); serve.Wait() })
	const notice = "switchboard: server self is this gateway's own endpoint, so it does not serve it (a gateway never serves itself)"
	said := make(chan struct{})
	go func() {
		sc := bufio.NewScanner(stderr)
		for sc.Scan() {
			if strings.HasPrefix(sc.Text(), notice) {
				close(said)
			}
		}
	}()
	select {
	case <-said:
	case <-time.After(60 * time.Second):
		t.Fatal("serve never said that it does not serve its own endpoint")
	}
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	cs, err := mcp.NewClient(&mcp.Implementation{Name: "t", Version: "1"}, nil).Connect(ctx, &mcp.StreamableClientTransport{Endpoint: "http://" + addr + "/mcp"}, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer cs.Close()
	res, err := cs.ListTools(ctx, nil)
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, tl := range res.Tools {
		names = append(names, tl.Name)
	}
	all := strings.Join(names, " ")
	if strings.Contains(all, "self__") || !strings.Contains(all, "a__echo") {
		t.Errorf("tools served: %s; want a's, and nothing under self__", all)
	}
	// Another Switchboard of the same configuration (the CLI) does use the
	// gateway, and doctor says what that costs: a's tools reach a model
	// twice.
	out, err := w.command(t, "doctor").CombinedOutput()
	if !strings.Contains(string(out), "note\tserver\tself\ta Switchboard gateway serving ") || !strings.Contains(string(out), "configured here too (a__") {
		t.Errorf("doctor (%v) did not note that self serves a's tools again:\n%s", err, out)
	}
}

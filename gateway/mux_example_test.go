package gateway_test

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/switchboard-mcp/switchboard"
	"github.com/switchboard-mcp/switchboard/config"
	"github.com/switchboard-mcp/switchboard/gateway"
	"github.com/switchboard-mcp/switchboard/internal/testserver"
	"github.com/switchboard-mcp/switchboard/policy"
)

// An agent serves its servers to other MCP clients from its own HTTP
// server: the gateway's endpoint goes into the agent's mux, at a path of
// its choosing, beside its other routes. (Handler serves the endpoint,
// /healthz and the OAuth metadata at once, to mount at "/".)
func ExampleGateway_Endpoint() {
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	home, _ := os.MkdirTemp("", "gateway-example-")
	defer os.RemoveAll(home)

	// The agent's servers, defined in code; its rule allows their tools.
	cmd, args := testserver.Command("echo") // any MCP server command works here
	servers := map[string]config.Server{"demo": {Command: cmd, Args: args}}
	sb, err := switchboard.Open(ctx, switchboard.Options{
		Home: home, HomeDir: home, ManagedDir: filepath.Join(home, "managed"),
		Load: func() (*config.Resolved, error) {
			return config.Load(&config.LoadOptions{Home: home, HomeDir: home, Session: servers, StrictMCPConfig: true})
		},
		Rules: []policy.Rule{policy.NewRule(policy.Allow, "mcp__demo", policy.Source{Scope: policy.ScopeSession})},
	})
	if err != nil {
		fmt.Println("error:", err)
		return
	}
	defer sb.Close()
	// Every HTTP gateway serves a request without a session on its own
	// (Options.Stateless); the first lists wait for the servers to start.
	g := gateway.New(sb, &gateway.Options{Stateless: true, ConnectWait: 10 * time.Second, FirstSyncWait: 11 * time.Second})
	defer g.Close() // before sb.Close: deferred calls run last-in first-out

	mux := http.NewServeMux()
	mux.HandleFunc("/version", func(w http.ResponseWriter, _ *http.Request) { io.WriteString(w, "my-agent 1.0\n") })
	mux.Handle("/agent/mcp", g.Endpoint(nil)) // nil: no credentials, no browser Origin (see HTTPOptions.Guard)
	srv := httptest.NewServer(mux)
	defer srv.Close()

	cs, err := mcp.NewClient(&mcp.Implementation{Name: "example"}, nil).Connect(ctx,
		&mcp.StreamableClientTransport{Endpoint: srv.URL + "/agent/mcp"}, nil)
	if err != nil {
		fmt.Println("error:", err)
		return
	}
	defer cs.Close()
	res, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: "demo__echo", Arguments: map[string]any{"text": "hello"}})
	if err != nil {
		fmt.Println("error:", err)
		return
	}
	fmt.Println(res.Content[0].(*mcp.TextContent).Text)
	// Output:
	// <mcp_response server="demo" tool="echo" trust="untrusted">
	// hello
	// </mcp_response>
}

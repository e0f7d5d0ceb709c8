package gateway_test

import (
	"context"
	"net"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/switchboard-mcp/switchboard/config"
	"github.com/switchboard-mcp/switchboard/gateway"
	"github.com/switchboard-mcp/switchboard/host"
)

// TestGatewayRefusesItselfAsUpstream: a gateway whose own HTTP endpoint is
// among its servers (a client's entry for it, imported with `mcp import`)
// does not serve itself: that server settles disabled, with
// host.SelfEndpointReason, and none of the gateway's tools comes back
// under its name, while the server beside it is served. Before, the
// gateway connected to itself and every sync served its tools again under
// one more prefix (self__self__self__echo__…), without end.
func TestGatewayRefusesItselfAsUpstream(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	url := "http://" + ln.Addr().String() + "/mcp"
	def := config.Server{Type: config.TypeHTTP, URL: url}
	self := config.ResolvedServer{Name: "self", Written: def, Effective: def,
		Scope: config.ScopeUser, Trust: config.TrustUser, Availability: config.Available}
	sb := openSB(t, []config.ResolvedServer{stdio("echo", "echo"), self}, func(ho *host.Options) {
		ho.GatewayID = "this-gateway"
		ho.CloseGrace = 500 * time.Millisecond
	})
	g := gateway.New(sb, &gateway.Options{})
	defer g.Close()
	srv := &http.Server{Handler: g.Handler(nil)}
	go srv.Serve(ln)
	defer srv.Close()

	var st host.ServerStatus
	deadline := time.Now().Add(30 * time.Second)
	for {
		for _, s := range sb.Host().Status() {
			if s.Name == "self" {
				st = s
			}
		}
		if st.State == host.StateDisabled || st.State == host.StateConnected || time.Now().After(deadline) {
			break
		}
		time.Sleep(20 * time.Millisecond)
	}
	if st.State != host.StateDisabled || st.Reason != host.SelfEndpointReason {
		t.Fatalf("the gateway's own endpoint as a server: state %s (%s); want %s (%s)", st.State, st.Reason, host.StateDisabled, host.SelfEndpointReason)
	}

	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	cs, err := mcp.NewClient(&mcp.Implementation{Name: "t", Version: "1"}, nil).Connect(ctx, &mcp.StreamableClientTransport{Endpoint: url}, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer cs.Close()
	names := toolNames(t, ctx, cs)
	for !has(names, "echo__echo") && ctx.Err() == nil {
		time.Sleep(50 * time.Millisecond)
		names = toolNames(t, ctx, cs)
	}
	for _, n := range names {
		if strings.HasPrefix(n, "self__") {
			t.Errorf("the gateway serves its own tool again as %s", n)
		}
	}
	if !has(names, "echo__echo") {
		t.Errorf("tools %v; want the echo server's beside the refused one", names)
	}
}

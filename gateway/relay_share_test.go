package gateway_test

import (
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/switchboard-mcp/switchboard/config"
	"github.com/switchboard-mcp/switchboard/gateway"
	"github.com/switchboard-mcp/switchboard/host"
)

// One 2026-07-28 client that never comes back for its server's questions
// holds at most its share of the calls the gateway holds for answers, so
// another client's question is still put to it; before, the first held all
// 256 and every other client's question was declined ("the user chose
// decline") until the first's expired, 5 minutes later.
func TestUpstreamQuestionsShareAmongClients(t *testing.T) {
	ctx := ctxFor(t, 120*time.Second)
	sb := openSB(t, []config.ResolvedServer{stdio("alpha", "elicit")}, func(ho *host.Options) { ho.Prompter = gateway.Prompter{} })
	g := gateway.New(sb, &gateway.Options{Stateless: true, FirstSyncWait: 20 * time.Second})
	t.Cleanup(func() { g.Close() })
	if err := g.WaitSynced(ctx); err != nil {
		t.Fatal(err)
	}
	srv := httptest.NewServer(g.Handler(nil))
	t.Cleanup(srv.Close)
	connect := func(token string) *mcp.ClientSession {
		t.Helper()
		hc := &http.Client{Transport: authTransport{token: token}}
		cs, err := mcp.NewClient(&mcp.Implementation{Name: token, Version: "1"}, rawClient()).
			Connect(ctx, &mcp.StreamableClientTransport{Endpoint: srv.URL + "/mcp", HTTPClient: hc}, nil)
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { cs.Close() })
		return cs
	}
	mallory, alice := connect("mallory"), connect("alice")
	asked := 0
	for i := 0; i < gateway.MaxHeldQuestions; i++ {
		got, res := callText(t, mallory, &mcp.CallToolParams{Name: "alpha__ask", Arguments: map[string]any{"question": fmt.Sprint("Q", i)}})
		switch {
		case len(res.InputRequests) > 0:
			asked++
		case !strings.Contains(got, "declined") && !strings.Contains(got, "decline"):
			t.Fatalf("call %d: neither a question nor declined: %q", i, got)
		}
	}
	if asked > gateway.MaxHeldPerClient {
		t.Errorf("one client holds %d questions, want at most %d", asked, gateway.MaxHeldPerClient)
	}
	got, res := callText(t, alice, &mcp.CallToolParams{Name: "alpha__ask", Arguments: map[string]any{"question": "Colour?"}})
	if len(res.InputRequests) == 0 {
		t.Fatalf("another client's question was not put to it: %q", got)
	}
}

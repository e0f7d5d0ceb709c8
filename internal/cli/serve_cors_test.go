package cli

import (
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/chromedp/chromedp"

	"github.com/switchboard-mcp/switchboard/internal/testserver/testbrowser"
)

// corsPage's script makes a session with the gateway at its gw parameter
// and calls alpha's echo, as an MCP client in a web page does (fetch,
// a bearer token of its own), and returns what it read or the error.
const corsPage = `<!doctype html><script>
async function mcp(gw, key) {
  const headers = {"Authorization": "Bearer " + key, "Content-Type": "application/json", "Accept": "application/json, text/event-stream"};
  const post = async (body, sid) => {
    const h = Object.assign({}, headers);
    if (sid) { h["Mcp-Session-Id"] = sid; h["Mcp-Protocol-Version"] = "2025-11-25"; }
    const r = await fetch(gw, {method: "POST", headers: h, body: JSON.stringify(body)});
    return {status: r.status, sid: r.headers.get("Mcp-Session-Id"), text: await r.text()};
  };
  try {
    const init = await post({jsonrpc: "2.0", id: 1, method: "initialize", params: {protocolVersion: "2025-11-25", capabilities: {}, clientInfo: {name: "page", version: "1"}}});
    if (!init.sid) return "no session id readable: " + init.status + " " + init.text;
    await post({jsonrpc: "2.0", method: "notifications/initialized"}, init.sid);
    const call = await post({jsonrpc: "2.0", id: 2, method: "tools/call", params: {name: "alpha__echo", arguments: {text: "from the page"}}}, init.sid);
    return call.status + " " + call.text;
  } catch (e) { return "fetch failed: " + e; }
}
</script>`

// TestGatewayServesAnAllowedOriginsPage: a web page of an origin given to
// --allow-origin makes a session with serve --http and calls a tool from a
// real browser (chromium), which asks the gateway first (a CORS preflight:
// the request carries a bearer token and JSON) and then lets the page read
// the answers and the session's ID. Before, the gateway answered no CORS:
// the preflight got 405 and the page never reached it, though the flag's
// help promised "allow browser requests from ORIGIN". A page of another
// origin still gets nothing.
func TestGatewayServesAnAllowedOriginsPage(t *testing.T) {
	pages := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		fmt.Fprint(w, corsPage)
	}))
	defer pages.Close()
	other := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		fmt.Fprint(w, corsPage)
	}))
	defer other.Close()

	w := newGatewayWorld(t)
	w.servers(t, "alpha")
	w.permissions(t, []string{"mcp__alpha__echo"}, nil)
	key := w.addKey(t, "web")
	base, stop := startHTTPGateway(t, w, "--http", "127.0.0.1:0", "--allow-origin", pages.URL)
	defer stop()

	bctx := testbrowser.Start(t)
	run := func(page string) string {
		t.Helper()
		if err := chromedp.Do(bctx, chromedp.Navigate(page)); err != nil {
			t.Fatalf("%s: %v", page, err)
		}
		out, err := chromedp.Run(bctx, chromedp.Evaluate[string](fmt.Sprintf("mcp(%q, %q)", base+"/mcp", key), chromedp.EvalAwaitPromise))
		if err != nil {
			t.Fatalf("%s: %v", page, err)
		}
		return out
	}
	if got := run(pages.URL); !strings.HasPrefix(got, "200 ") || !strings.Contains(got, "from the page") {
		t.Errorf("the allowed origin's page: %s", got)
	}
	if got := run(other.URL); !strings.HasPrefix(got, "fetch failed") {
		t.Errorf("a page of an origin not allowed reached the gateway: %s", got)
	}
}

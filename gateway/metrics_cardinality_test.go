package gateway_test

import (
	"bufio"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/switchboard-mcp/switchboard/gateway"
	"github.com/switchboard-mcp/switchboard/host"
)

// A server chooses its tools' names and how many (up to 100,000, new
// ones at every list): the metrics give MetricsToolsPerServer of them
// series of their own and count the calls of the rest under
// tool="(other)", so that a server whose names change with every list
// cannot add series with every call for as long as the gateway runs.
func TestMetricsBoundAServersToolLabels(t *testing.T) {
	n := gateway.MetricsToolsPerServer + 40
	names := make([]string, n)
	for i := range names {
		names[i] = fmt.Sprintf("t%04d", i)
	}
	metrics := gateway.NewMetrics(nil)
	f := startWith(t, fixtureOpts{pipe: true, host: func(o *host.Options) { o.AutoDeferShare = -1 }}, &gateway.Options{Metrics: metrics}, stdio("alpha", "longnames", "-names", strings.Join(names, ",")))
	for _, name := range names {
		got, res := callText(t, f.session, &mcp.CallToolParams{Name: "alpha__" + name, Arguments: map[string]any{"text": "x"}})
		if res.IsError || !strings.Contains(got, name+": x") {
			t.Fatalf("%s: %q", name, got)
		}
	}
	srv := httptest.NewServer(metrics.Handler())
	defer srv.Close()
	resp, err := http.Get(srv.URL)
	if err != nil {
		t.Fatal(err)
	}
	body, err := io.ReadAll(resp.Body)
	resp.Body.Close()
	if err != nil {
		t.Fatal(err)
	}
	tools := map[string]bool{}
	var total float64
	re := regexp.MustCompile(`^switchboard_gateway_calls_total\{server="alpha",tool="([^"]*)"\} (\d+)`)
	sc := bufio.NewScanner(strings.NewReader(string(body)))
	for sc.Scan() {
		if mm := re.FindStringSubmatch(sc.Text()); mm != nil {
			tools[mm[1]] = true
			var v float64
			fmt.Sscan(mm[2], &v)
			total += v
		}
	}
	if len(tools) > gateway.MetricsToolsPerServer+1 || !tools["(other)"] || total != float64(n) {
		t.Fatalf("alpha's %d calls of %d tools are in %d tool series (want at most %d, one of them (other)) counting %v calls",
			n, n, len(tools), gateway.MetricsToolsPerServer+1, total)
	}
}

// A server's name for its tool may hold an escape sequence and a bidi
// override: /metrics, which people read with curl, shows them escaped.
func TestMetricsEscapeAServersToolName(t *testing.T) {
	metrics := gateway.NewMetrics(nil)
	f := startWith(t, fixtureOpts{}, &gateway.Options{Metrics: metrics}, stdio("evil", "hostile-output"))
	lt, err := f.session.ListTools(ctxFor(t, 30*time.Second), nil)
	if err != nil {
		t.Fatal(err)
	}
	var name string
	for _, tl := range lt.Tools {
		if strings.HasPrefix(tl.Name, "evil__name") {
			name = tl.Name
		}
	}
	if name == "" {
		t.Fatalf("no tool of the hostile name is served: %d tools", len(lt.Tools))
	}
	callText(t, f.session, &mcp.CallToolParams{Name: name, Arguments: map[string]any{}})
	srv := httptest.NewServer(metrics.Handler())
	defer srv.Close()
	resp, err := http.Get(srv.URL)
	if err != nil {
		t.Fatal(err)
	}
	body, err := io.ReadAll(resp.Body)
	resp.Body.Close()
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(body), `switchboard_gateway_calls_total{server="evil",tool="name`) {
		t.Fatalf("the call is not in the metrics; the check below would prove little:\n%s", body)
	}
	if strings.ContainsAny(string(body), "\x1b\u202e") {
		t.Errorf("/metrics holds the server's escape sequence or bidi override raw:\n%q", body)
	}
}

package cli

import (
	"compress/gzip"
	"context"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"io"
	"maps"
	"net"
	"net/http"
	"net/http/httptest"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
	coltracepb "go.opentelemetry.io/proto/otlp/collector/trace/v1"
	tracepb "go.opentelemetry.io/proto/otlp/trace/v1"
	"google.golang.org/protobuf/proto"
)

// prometheusBin finds Debian's prometheus; without it the test is skipped,
// except under CI=true, where .ci/run installs it.
func prometheusBin(t *testing.T) string {
	t.Helper()
	if p, err := exec.LookPath("prometheus"); err == nil {
		return p
	}
	if _, err := os.Stat("/usr/bin/prometheus"); err == nil {
		return "/usr/bin/prometheus"
	}
	if os.Getenv("CI") == "true" {
		t.Fatal("prometheus is not installed (apt-get install prometheus; .ci/run does)")
	}
	t.Skip("prometheus is not installed (apt-get install prometheus)")
	return ""
}

func freePort(t *testing.T) string {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	return ln.Addr().String()
}

// TestGatewayMetricsPrometheus has a real Prometheus scrape a real `serve
// --http` with an API key, and checks that the call counters it stored
// match the calls made: 7 allowed echo calls, 3 denied add calls.
func TestGatewayMetricsPrometheus(t *testing.T) {
	t.Parallel() // waits on processes, mostly: runs beside the others
	prom := prometheusBin(t)
	w := newGatewayWorld(t)
	w.servers(t, "alpha")
	w.permissions(t, []string{"mcp__alpha__echo"}, []string{"mcp__alpha__add"})
	key := w.addKey(t, "scraper")
	metricsAddr := freePort(t)
	base, stop := startHTTPGateway(t, w, "--http", "127.0.0.1:0", "--metrics", metricsAddr)
	defer stop()
	ctx, cancel := context.WithTimeout(context.Background(), 120*time.Second)
	defer cancel()

	get := func(u, tok string) (int, string) {
		t.Helper()
		return requestAs(t, ctx, "GET", u, tok, "")
	}
	for _, u := range []string{base + "/metrics", "http://" + metricsAddr + "/metrics"} {
		if code, _ := get(u, ""); code != http.StatusUnauthorized {
			t.Errorf("%s without a key: %d, want 401", u, code)
		}
	}

	c := w.teamClient(t, ctx, base, key, "deny")
	for range 7 {
		if txt, isErr := callText(t, ctx, c.cs, "alpha__echo", map[string]any{"text": "hi"}); isErr {
			t.Fatalf("echo: %s", txt)
		}
	}
	for range 3 {
		if _, isErr := callText(t, ctx, c.cs, "alpha__add", map[string]any{"a": 1, "b": 2}); !isErr {
			t.Fatal("a denied call ran")
		}
	}
	code, body := get(base+"/metrics", key)
	if code != 200 || !strings.Contains(body, `switchboard_gateway_calls_total{server="alpha",tool="echo"} 7`) {
		t.Fatalf("/metrics with the key: %d\n%s", code, body)
	}

	// Prometheus, on loopback, scraping the gateway's own port with the key.
	dir := t.TempDir()
	target := strings.TrimPrefix(base, "http://")
	cfg := fmt.Sprintf(`global:
  scrape_interval: 1s
  scrape_timeout: 1s
scrape_configs:
  - job_name: switchboard
    metrics_path: /metrics
    authorization:
      type: Bearer
      credentials: %s
    static_configs:
      - targets: ["%s"]
`, key, target)
	cfgFile := filepath.Join(dir, "prometheus.yml")
	if err := os.WriteFile(cfgFile, []byte(cfg), 0o600); err != nil {
		t.Fatal(err)
	}
	promAddr := freePort(t)
	cmd := exec.Command(prom, "--config.file="+cfgFile, "--storage.tsdb.path="+filepath.Join(dir, "data"),
		"--web.listen-address="+promAddr, "--log.level=warn")
	logFile, _ := os.Create(filepath.Join(dir, "prometheus.log"))
	cmd.Stdout, cmd.Stderr = logFile, logFile
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	defer func() {
		cmd.Process.Signal(syscall.SIGTERM)
		done := make(chan struct{})
		go func() { cmd.Wait(); close(done) }()
		select {
		case <-done:
		case <-time.After(10 * time.Second):
			cmd.Process.Kill()
		}
		logFile.Close()
		if t.Failed() {
			b, _ := os.ReadFile(filepath.Join(dir, "prometheus.log"))
			t.Logf("prometheus log:\n%s", b)
		}
	}()

	query := func(q string) (map[string]string, bool) {
		u := "http://" + promAddr + "/api/v1/query?query=" + url.QueryEscape(q)
		req, _ := http.NewRequestWithContext(ctx, "GET", u, nil)
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			return nil, false
		}
		defer resp.Body.Close()
		var r struct {
			Status string `json:"status"`
			Data   struct {
				Result []struct {
					Metric map[string]string `json:"metric"`
					Value  []any             `json:"value"`
				} `json:"result"`
			} `json:"data"`
		}
		if json.NewDecoder(resp.Body).Decode(&r) != nil || r.Status != "success" {
			return nil, false
		}
		out := map[string]string{}
		for _, s := range r.Data.Result {
			if len(s.Value) == 2 {
				out[s.Metric["tool"]+s.Metric["decision"]], _ = s.Value[1].(string)
			}
		}
		return out, true
	}
	deadline := time.Now().Add(60 * time.Second)
	for {
		calls, ok1 := query(`switchboard_gateway_calls_total{job="switchboard",server="alpha"}`)
		errs, ok2 := query(`switchboard_gateway_call_errors_total{job="switchboard",server="alpha"}`)
		dec, ok3 := query(`switchboard_gateway_decisions_total{job="switchboard"}`)
		up, ok4 := query(`up{job="switchboard"}`)
		if ok1 && ok2 && ok3 && ok4 && calls["echo"] == "7" && calls["add"] == "3" && errs["add"] == "3" && errs["echo"] == "" &&
			dec["allow"] == "7" && dec["deny"] == "3" && up[""] == "1" {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("Prometheus has calls %v, errors %v, decisions %v, up %v; want echo 7, add 3 (3 errors), allow 7, deny 3", calls, errs, dec, up)
		}
		time.Sleep(500 * time.Millisecond)
	}
	if hist, ok := query(`switchboard_gateway_call_duration_seconds_count{job="switchboard",server="alpha",tool="echo"}`); !ok || hist["echo"] != "7" {
		t.Errorf("latency histogram count: %v", hist)
	}
	if st, ok := query(`switchboard_server_up{job="switchboard",server="alpha"}`); !ok || st[""] != "1" {
		t.Errorf("server up: %v", st)
	}
}

// TestGatewayTraceOTLP: `serve --http` with OTEL_EXPORTER_OTLP_ENDPOINT
// exports, through the real OTLP exporter, a server span that continues
// the client's traceparent (from the call's _meta) and a client span for
// the upstream call under it; SIGTERM flushes them. The exporter reads
// the headers and compression variables from serve's environment.
func TestGatewayTraceOTLP(t *testing.T) {
	var (
		mu       sync.Mutex
		spans    []*tracepb.Span
		services []string // service.name of each span's resource
		badReq   string
	)
	collector := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		var body io.Reader = r.Body
		if r.Header.Get("Content-Encoding") == "gzip" {
			zr, err := gzip.NewReader(r.Body)
			if err != nil {
				http.Error(w, "bad gzip", http.StatusBadRequest)
				return
			}
			body = zr
		}
		b, _ := io.ReadAll(body)
		var req coltracepb.ExportTraceServiceRequest
		if r.URL.Path != "/v1/traces" || proto.Unmarshal(b, &req) != nil {
			http.Error(w, "bad export", http.StatusBadRequest)
			return
		}
		mu.Lock()
		if r.Header.Get("Content-Encoding") != "gzip" || r.Header.Get("X-Collector-Key") != "k=1" {
			badReq = fmt.Sprintf("encoding %q, key header %q", r.Header.Get("Content-Encoding"), r.Header.Get("X-Collector-Key"))
		}
		for _, rs := range req.ResourceSpans {
			service := ""
			for _, kv := range rs.Resource.GetAttributes() {
				if kv.Key == "service.name" {
					service = kv.Value.GetStringValue()
				}
			}
			for _, ss := range rs.ScopeSpans {
				spans = append(spans, ss.Spans...)
				for range ss.Spans {
					services = append(services, service)
				}
			}
		}
		mu.Unlock()
		out, _ := proto.Marshal(&coltracepb.ExportTraceServiceResponse{})
		w.Header().Set("Content-Type", "application/x-protobuf")
		w.Write(out)
	}))
	defer collector.Close()
	w := newGatewayWorld(t)
	w.servers(t, "alpha")
	w.permissions(t, []string{"mcp__alpha"}, nil)
	w.env = append(w.env, "OTEL_EXPORTER_OTLP_ENDPOINT="+collector.URL, "OTEL_SERVICE_NAME=switchboard-test",
		"OTEL_EXPORTER_OTLP_HEADERS=x-collector-key=k%3D1", "OTEL_EXPORTER_OTLP_TRACES_COMPRESSION=gzip")
	base, stop := startHTTPGateway(t, w, "--http", "127.0.0.1:0")
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	cs, err := mcp.NewClient(&mcp.Implementation{Name: "trace-test"}, nil).Connect(ctx, &mcp.StreamableClientTransport{Endpoint: base + "/mcp"}, nil)
	if err != nil {
		t.Fatal(err)
	}
	const traceID = "4bf92f3577b34da6a3ce929d0e0e4736"
	res, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: "alpha__echo", Arguments: map[string]any{"text": "traced"},
		Meta: mcp.Meta{"traceparent": "00-" + traceID + "-00f067aa0ba902b7-01"}})
	if err != nil || res.IsError {
		t.Fatalf("call: %v %v", err, res)
	}
	cs.Close()
	stop()
	mu.Lock()
	defer mu.Unlock()
	var server, client *tracepb.Span
	for _, s := range spans {
		switch {
		case s.Kind == tracepb.Span_SPAN_KIND_SERVER && s.Name == "tools/call alpha__echo":
			server = s
		case s.Kind == tracepb.Span_SPAN_KIND_CLIENT && s.Name == "tools/call mcp__alpha__echo":
			client = s
		}
	}
	if server == nil || client == nil {
		t.Fatalf("exported spans: %v", spans)
	}
	if hex.EncodeToString(server.TraceId) != traceID || hex.EncodeToString(client.TraceId) != traceID || string(client.ParentSpanId) != string(server.SpanId) {
		t.Errorf("server span %x/%x, client span %x parent %x: not one trace", server.TraceId, server.SpanId, client.TraceId, client.ParentSpanId)
	}
	if badReq != "" {
		t.Errorf("an export came with %s; want gzip and the header of OTEL_EXPORTER_OTLP_HEADERS", badReq)
	}
	for i, s := range spans {
		if services[i] != "switchboard-test" {
			t.Errorf("span %q: service.name %q", s.Name, services[i])
		}
	}
	attrs := func(s *tracepb.Span) map[string]string {
		out := map[string]string{}
		for _, kv := range s.Attributes {
			out[kv.Key] = kv.Value.GetStringValue()
		}
		return out
	}
	if got, want := attrs(server), map[string]string{"mcp.method.name": "tools/call", "gen_ai.tool.name": "alpha__echo", "switchboard.decision": "allow"}; !maps.Equal(got, want) {
		t.Errorf("server span attributes %v, want %v", got, want)
	}
	if got, want := attrs(client), map[string]string{"mcp.method.name": "tools/call", "gen_ai.tool.name": "mcp__alpha__echo", "switchboard.server": "alpha"}; !maps.Equal(got, want) {
		t.Errorf("client span attributes %v, want %v", got, want)
	}
	if server.Status.GetCode() != tracepb.Status_STATUS_CODE_UNSET || client.Status.GetCode() != tracepb.Status_STATUS_CODE_UNSET ||
		server.StartTimeUnixNano == 0 || client.StartTimeUnixNano < server.StartTimeUnixNano || client.EndTimeUnixNano > server.EndTimeUnixNano {
		t.Errorf("server span %v, client span %v: want unset status, the client's time within the server's", server, client)
	}
}

// requestAs sends a method request with body to u, with token as its
// bearer credentials when it is not "", and returns the status and the
// body answered.
func requestAs(t *testing.T, ctx context.Context, method, u, token, body string) (int, string) {
	t.Helper()
	req, _ := http.NewRequestWithContext(ctx, method, u, strings.NewReader(body))
	if token != "" {
		req.Header.Set("Authorization", "Bearer "+token)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, string(b)
}

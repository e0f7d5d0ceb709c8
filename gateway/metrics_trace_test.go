package gateway_test

import (
	"context"
	"encoding/hex"
	"io"
	"maps"
	"net/http"
	"net/http/httptest"
	"sync"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
	coltracepb "go.opentelemetry.io/proto/otlp/collector/trace/v1"
	commonpb "go.opentelemetry.io/proto/otlp/common/v1"
	resourcepb "go.opentelemetry.io/proto/otlp/resource/v1"
	tracepb "go.opentelemetry.io/proto/otlp/trace/v1"
	"google.golang.org/protobuf/proto"

	"github.com/switchboard-mcp/switchboard/config"
	"github.com/switchboard-mcp/switchboard/gateway"
	"github.com/switchboard-mcp/switchboard/host"
)

// stringAttrs are the string-valued attributes of kvs (any other value
// shows as its decoded form).
func stringAttrs(kvs []*commonpb.KeyValue) map[string]string {
	out := make(map[string]string, len(kvs))
	for _, kv := range kvs {
		if v, ok := kv.Value.GetValue().(*commonpb.AnyValue_StringValue); ok {
			out[kv.Key] = v.StringValue
		} else {
			out[kv.Key] = kv.Value.String()
		}
	}
	return out
}

// otlpReceiver is an OTLP/HTTP traces endpoint: it decodes what the real
// exporter sends (protobuf) and keeps the spans.
type otlpReceiver struct {
	mu    sync.Mutex
	spans []*tracepb.Span
	// resources and scopes are those of the spans, index for index.
	resources []*resourcepb.Resource
	scopes    []*commonpb.InstrumentationScope
}

func (o *otlpReceiver) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	b, _ := io.ReadAll(r.Body)
	var req coltracepb.ExportTraceServiceRequest
	if r.URL.Path != "/v1/traces" || proto.Unmarshal(b, &req) != nil {
		http.Error(w, "bad export", http.StatusBadRequest)
		return
	}
	o.mu.Lock()
	for _, rs := range req.ResourceSpans {
		for _, ss := range rs.ScopeSpans {
			for _, sp := range ss.Spans {
				o.spans = append(o.spans, sp)
				o.resources = append(o.resources, rs.Resource)
				o.scopes = append(o.scopes, ss.Scope)
			}
		}
	}
	o.mu.Unlock()
	out, _ := proto.Marshal(&coltracepb.ExportTraceServiceResponse{})
	w.Header().Set("Content-Type", "application/x-protobuf")
	w.Write(out)
}

// A client's traceparent (in the call's _meta) is the parent of the
// gateway's server span; the upstream call is a client span under it,
// and its traceparent reaches the upstream server in that request's
// _meta — all exported over OTLP.
func TestTraceLinksClientRequestToUpstreamCall(t *testing.T) {
	recv := &otlpReceiver{}
	collector := httptest.NewServer(recv)
	t.Cleanup(collector.Close)

	var (
		mu  sync.Mutex
		got string
	)
	up := mcp.NewServer(&mcp.Implementation{Name: "up"}, nil)
	up.AddTool(&mcp.Tool{Name: "meta", InputSchema: map[string]any{"type": "object"}}, func(_ context.Context, req *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
		mu.Lock()
		got, _ = req.Params.Meta["traceparent"].(string)
		mu.Unlock()
		return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: "ok"}}}, nil
	})
	upstream := httptest.NewServer(mcp.NewStreamableHTTPHandler(func(*http.Request) *mcp.Server { return up }, nil))
	// After the host's close (cleanups run last first): it holds a stream.
	t.Cleanup(upstream.Close)
	def := config.Server{Type: config.TypeHTTP, URL: upstream.URL}
	srv := config.ResolvedServer{Name: "up", Written: def, Effective: def, Scope: config.ScopeUser, Trust: config.TrustUser, Availability: config.Available}

	env := map[string]string{"OTEL_EXPORTER_OTLP_TRACES_ENDPOINT": collector.URL + "/v1/traces", "OTEL_SERVICE_NAME": "sb-test"}
	tr, err := gateway.TracingFromEnv(context.Background(), func(k string) (string, bool) { v, ok := env[k]; return v, ok })
	if err != nil || tr == nil {
		t.Fatalf("TracingFromEnv: %v %v", tr, err)
	}
	f := startWith(t, fixtureOpts{}, &gateway.Options{Tracing: tr}, srv)
	const traceID, parentID = "4bf92f3577b34da6a3ce929d0e0e4736", "00f067aa0ba902b7"
	res, err := f.session.CallTool(ctxFor(t, 30*time.Second), &mcp.CallToolParams{
		Name: "up__meta", Arguments: map[string]any{},
		Meta: mcp.Meta{"traceparent": "00-" + traceID + "-" + parentID + "-01"},
	})
	if err != nil || res.IsError {
		t.Fatalf("call: %v %v", err, res)
	}
	sctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	if err := tr.Shutdown(sctx); err != nil {
		t.Fatalf("Shutdown: %v", err)
	}
	recv.mu.Lock()
	defer recv.mu.Unlock()
	var server, client *tracepb.Span
	for i, s := range recv.spans {
		switch s.Kind {
		case tracepb.Span_SPAN_KIND_SERVER:
			server = s
		case tracepb.Span_SPAN_KIND_CLIENT:
			client = s
		}
		// What the exporter wrote, decoded by the official types.
		if got, want := stringAttrs(recv.resources[i].GetAttributes()), map[string]string{"service.name": "sb-test", "service.version": host.Version}; !maps.Equal(got, want) {
			t.Errorf("span %q: resource %v, want %v", s.Name, got, want)
		}
		if got := recv.scopes[i].GetName(); got != "github.com/switchboard-mcp/switchboard/gateway" {
			t.Errorf("span %q: scope %q", s.Name, got)
		}
		if s.StartTimeUnixNano == 0 || s.EndTimeUnixNano < s.StartTimeUnixNano || s.Status.GetCode() != tracepb.Status_STATUS_CODE_UNSET || len(s.Events)+len(s.Links) != 0 {
			t.Errorf("span %q: start %d end %d status %v events %v links %v", s.Name, s.StartTimeUnixNano, s.EndTimeUnixNano, s.Status, s.Events, s.Links)
		}
	}
	if server == nil || client == nil {
		t.Fatalf("exported spans %v; want a server and a client span", recv.spans)
	}
	if hex.EncodeToString(server.TraceId) != traceID || hex.EncodeToString(server.ParentSpanId) != parentID || server.Name != "tools/call up__meta" {
		t.Errorf("server span: trace %x parent %x name %q; want the client's trace and span", server.TraceId, server.ParentSpanId, server.Name)
	}
	if hex.EncodeToString(client.TraceId) != traceID || string(client.ParentSpanId) != string(server.SpanId) || client.Name != "tools/call mcp__up__meta" {
		t.Errorf("client span: trace %x parent %x (server span %x) name %q", client.TraceId, client.ParentSpanId, server.SpanId, client.Name)
	}
	// No permission rule was consulted: no switchboard.decision.
	if got, want := stringAttrs(server.Attributes), map[string]string{"mcp.method.name": "tools/call", "gen_ai.tool.name": "up__meta"}; !maps.Equal(got, want) {
		t.Errorf("server span attributes %v, want %v", got, want)
	}
	if got, want := stringAttrs(client.Attributes), map[string]string{"mcp.method.name": "tools/call", "gen_ai.tool.name": "mcp__up__meta", "switchboard.server": "up"}; !maps.Equal(got, want) {
		t.Errorf("client span attributes %v, want %v", got, want)
	}
	// Sampled (the client's 01) and whether the parent is remote: the
	// client's span is, the gateway's own is not.
	if server.Flags != 0x301 || client.Flags != 0x101 {
		t.Errorf("flags: server %#x client %#x; want 0x301 and 0x101", server.Flags, client.Flags)
	}
	mu.Lock()
	defer mu.Unlock()
	if want := "00-" + traceID + "-" + hex.EncodeToString(client.SpanId) + "-01"; got != want {
		t.Errorf("upstream _meta.traceparent %q, want %q", got, want)
	}
}

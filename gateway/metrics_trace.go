package gateway

import (
	"context"
	"fmt"
	"strings"

	"github.com/modelcontextprotocol/go-sdk/mcp"
	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/codes"
	"go.opentelemetry.io/otel/propagation"
	"go.opentelemetry.io/otel/sdk/resource"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	semconv "go.opentelemetry.io/otel/semconv/v1.26.0"
	"go.opentelemetry.io/otel/trace"

	"github.com/switchboard-mcp/switchboard/host"
)

// Tracing sends OpenTelemetry traces of a gateway's tool calls over OTLP
// (HTTP/protobuf): a server span per client request, child of the
// traceparent the client put in the request's _meta (MCP 2026-07-28), and
// a client span per upstream call, whose traceparent goes in the upstream
// request's _meta so that the server's own spans join the trace. Pass it
// in Options.Tracing; call Shutdown to flush. It is safe for concurrent
// use.
type Tracing struct {
	tp     *sdktrace.TracerProvider
	tracer trace.Tracer
	prop   propagation.TextMapPropagator
}

// TracingFromEnv returns the tracing the standard OTEL_* variables ask
// for, or nil when they ask for none: traces are on when
// OTEL_EXPORTER_OTLP_TRACES_ENDPOINT or OTEL_EXPORTER_OTLP_ENDPOINT is set
// or OTEL_TRACES_EXPORTER is otlp, and off when OTEL_TRACES_EXPORTER is
// none or OTEL_SDK_DISABLED is true; with OTEL_TRACES_EXPORTER=otlp alone
// the endpoint is http://localhost:4318/v1/traces. The exporter (ours, see
// otlpExporter) reads OTEL_EXPORTER_OTLP_(TRACES_)HEADERS (key=value,...,
// values percent-decoded), _TIMEOUT (milliseconds, default 10000, for an
// export and its retries), _COMPRESSION (gzip or none), _CERTIFICATE,
// _CLIENT_CERTIFICATE and _CLIENT_KEY (PEM files) through getenv too;
// _PROTOCOL may only be http/protobuf. A variable it cannot read is
// an error that names the variable, never a header's value. The service
// is OTEL_SERVICE_NAME, default "switchboard". If getenv is nil, nothing
// is on.
func TracingFromEnv(ctx context.Context, getenv func(string) (string, bool)) (*Tracing, error) {
	if getenv == nil {
		return nil, nil
	}
	env := func(k string) string { v, _ := getenv(k); return strings.TrimSpace(v) }
	if strings.EqualFold(env("OTEL_SDK_DISABLED"), "true") || strings.EqualFold(env("OTEL_TRACES_EXPORTER"), "none") {
		return nil, nil
	}
	var endpoint string
	switch {
	case env("OTEL_EXPORTER_OTLP_TRACES_ENDPOINT") != "":
		endpoint = env("OTEL_EXPORTER_OTLP_TRACES_ENDPOINT")
	case env("OTEL_EXPORTER_OTLP_ENDPOINT") != "":
		endpoint = strings.TrimRight(env("OTEL_EXPORTER_OTLP_ENDPOINT"), "/") + "/v1/traces"
	case strings.EqualFold(env("OTEL_TRACES_EXPORTER"), "otlp"):
		endpoint = "http://localhost:4318/v1/traces"
	default:
		return nil, nil
	}
	cfg, err := otlpConfigFromEnv(env, endpoint)
	if err != nil {
		return nil, fmt.Errorf("OpenTelemetry exporter: %w", err)
	}
	exp, err := newOTLPExporter(cfg)
	if err != nil {
		return nil, fmt.Errorf("OpenTelemetry exporter: %w", err)
	}
	name := env("OTEL_SERVICE_NAME")
	if name == "" {
		name = "switchboard"
	}
	res := resource.NewSchemaless(semconv.ServiceName(name), semconv.ServiceVersion(host.Version))
	tp := sdktrace.NewTracerProvider(sdktrace.WithBatcher(exp), sdktrace.WithResource(res))
	return &Tracing{tp: tp, tracer: tp.Tracer("github.com/switchboard-mcp/switchboard/gateway"), prop: propagation.TraceContext{}}, nil
}

// Shutdown exports the spans still buffered, within ctx, and stops.
func (t *Tracing) Shutdown(ctx context.Context) error {
	if t == nil {
		return nil
	}
	return t.tp.Shutdown(ctx)
}

// metaCarrier reads and writes W3C trace context in a request's _meta.
type metaCarrier map[string]any

func (m metaCarrier) Get(k string) string { v, _ := m[k].(string); return v }
func (m metaCarrier) Set(k, v string)     { m[k] = v }
func (m metaCarrier) Keys() []string {
	out := make([]string, 0, len(m))
	for k := range m {
		out = append(out, k)
	}
	return out
}

// startCall starts the server span of a client's tools/call.
func (t *Tracing) startCall(ctx context.Context, req *mcp.CallToolRequest, rec *callRecord) (context.Context, trace.Span) {
	if t == nil {
		return ctx, nil
	}
	if m := req.Params.Meta; len(m) > 0 {
		ctx = t.prop.Extract(ctx, metaCarrier(m))
	}
	// The name is the caller's, as long as a request: cut as the audit
	// line's, or spans waiting for export would hold megabytes each.
	name := cutString(req.Params.Name, auditNameMax)
	attrs := []attribute.KeyValue{attribute.String("mcp.method.name", "tools/call"), attribute.String("gen_ai.tool.name", name)}
	if p := rec.principal; p != nil {
		attrs = append(attrs, attribute.String("switchboard.principal", p.Name))
	}
	return t.tracer.Start(ctx, "tools/call "+name, trace.WithSpanKind(trace.SpanKindServer), trace.WithAttributes(attrs...))
}

// endCall ends the server span with the call's decision and outcome.
func endCall(span trace.Span, decision string, out outcome) {
	if span == nil {
		return
	}
	if decision != "" {
		span.SetAttributes(attribute.String("switchboard.decision", decision))
	}
	if out.err != "" || out.isError {
		span.SetStatus(codes.Error, "error result")
	}
	span.End()
}

// traceUpstream starts the client span of the upstream call of server's
// tool (the host's name hostName), and puts its traceparent in the
// upstream request's _meta. end ends it.
func (g *Gateway) traceUpstream(ctx context.Context, server, hostName string) (context.Context, func(*mcp.CallToolResult, error)) {
	t := g.opts.Tracing
	if t == nil {
		return ctx, func(*mcp.CallToolResult, error) {}
	}
	ctx, span := t.tracer.Start(ctx, "tools/call "+hostName, trace.WithSpanKind(trace.SpanKindClient),
		trace.WithAttributes(attribute.String("mcp.method.name", "tools/call"), attribute.String("gen_ai.tool.name", hostName), attribute.String("switchboard.server", server)))
	meta := metaCarrier{}
	t.prop.Inject(ctx, meta)
	ctx = host.WithCallMeta(ctx, meta)
	return ctx, func(res *mcp.CallToolResult, err error) {
		if err != nil || (res != nil && res.IsError) {
			span.SetStatus(codes.Error, "error result")
		}
		span.End()
	}
}

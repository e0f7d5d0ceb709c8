package gateway

import (
	"bytes"
	"compress/gzip"
	"context"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/tls"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/pem"
	"io"
	"math/big"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/codes"
	"go.opentelemetry.io/otel/sdk/resource"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/sdk/trace/tracetest"
	"go.opentelemetry.io/otel/trace"
	coltracepb "go.opentelemetry.io/proto/otlp/collector/trace/v1"
	commonpb "go.opentelemetry.io/proto/otlp/common/v1"
	resourcepb "go.opentelemetry.io/proto/otlp/resource/v1"
	tracepb "go.opentelemetry.io/proto/otlp/trace/v1"
	rpcstatus "google.golang.org/genproto/googleapis/rpc/status"
	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/testing/protocmp"
)

// collectorRequest is one request an OTLP collector received.
type collectorRequest struct {
	path    string
	header  http.Header
	body    []byte // gunzipped when Content-Encoding is gzip
	gzipped bool
}

// fakeCollector records requests and answers each with the next of
// replies (then 200 with an empty ExportTraceServiceResponse).
type fakeCollector struct {
	mu      sync.Mutex
	reqs    []collectorRequest
	replies []func(http.ResponseWriter)
}

func (c *fakeCollector) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	body, _ := io.ReadAll(r.Body)
	req := collectorRequest{path: r.URL.Path, header: r.Header.Clone(), body: body}
	if r.Header.Get("Content-Encoding") == "gzip" {
		req.gzipped = true
		zr, err := gzip.NewReader(bytes.NewReader(body))
		if err == nil {
			req.body, err = io.ReadAll(zr)
		}
		if err != nil {
			req.body = nil
		}
	}
	c.mu.Lock()
	c.reqs = append(c.reqs, req)
	var reply func(http.ResponseWriter)
	if len(c.replies) > 0 {
		reply, c.replies = c.replies[0], c.replies[1:]
	}
	c.mu.Unlock()
	if reply != nil {
		reply(w)
		return
	}
	out, _ := proto.Marshal(&coltracepb.ExportTraceServiceResponse{})
	w.Header().Set("Content-Type", "application/x-protobuf")
	w.Write(out)
}

func mapEnv(m map[string]string) func(string) string {
	return func(k string) string { return m[k] }
}

// Every kind of attribute, an event, a link, an error status, a remote
// parent with a tracestate, resource and scope with schema URLs and
// attributes: the official generated types decode from what the exporter
// sent exactly the message the SDK's spans make, sent gzipped to the
// traces path with the headers of OTEL_EXPORTER_OTLP_TRACES_HEADERS, and
// sent again after a 503 with Retry-After.
func TestOTLPExportRoundTrip(t *testing.T) {
	coll := &fakeCollector{replies: []func(http.ResponseWriter){func(w http.ResponseWriter) {
		w.Header().Set("Retry-After", "1")
		http.Error(w, "busy", http.StatusServiceUnavailable)
	}}}
	srv := httptest.NewServer(coll)
	t.Cleanup(srv.Close)

	env := map[string]string{
		// The traces variables win over the general ones.
		"OTEL_EXPORTER_OTLP_HEADERS":         "api-key=wrong",
		"OTEL_EXPORTER_OTLP_TRACES_HEADERS":  "api-key=s3cr%3Dt%2Cx , X-Team= blue team ",
		"OTEL_EXPORTER_OTLP_COMPRESSION":     "gzip",
		"OTEL_EXPORTER_OTLP_TRACES_TIMEOUT":  "20000",
		"OTEL_EXPORTER_OTLP_TRACES_ENDPOINT": srv.URL + "/v1/traces",
	}
	exp := testExporter(t, mapEnv(env), env["OTEL_EXPORTER_OTLP_TRACES_ENDPOINT"])
	rec := tracetest.NewSpanRecorder()
	res := resource.NewWithAttributes("https://opentelemetry.io/schemas/1.26.0",
		attribute.String("service.name", "sb-test"), attribute.Int("process.pid", 42))
	tp := sdktrace.NewTracerProvider(sdktrace.WithResource(res), sdktrace.WithSpanProcessor(rec), sdktrace.WithBatcher(exp))
	tracer := tp.Tracer("scope-a", trace.WithInstrumentationVersion("1.2.3"), trace.WithSchemaURL("https://example.com/schema"),
		trace.WithInstrumentationAttributes(attribute.Bool("scope.attr", true)))

	ts, _ := trace.ParseTraceState("vendor=value")
	remote := trace.NewSpanContext(trace.SpanContextConfig{
		TraceID:    trace.TraceID{0x4b, 0xf9, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14},
		SpanID:     trace.SpanID{0, 0xf0, 0x67, 0xaa, 0x0b, 0xa9, 0x02, 0xb7},
		TraceFlags: trace.FlagsSampled, TraceState: ts, Remote: true,
	})
	linked := trace.NewSpanContext(trace.SpanContextConfig{
		TraceID: trace.TraceID{9, 9, 9, 9, 9, 9, 9, 9, 9, 9, 9, 9, 9, 9, 9, 9},
		SpanID:  trace.SpanID{8, 8, 8, 8, 8, 8, 8, 8}, TraceState: ts,
	})
	attrs := []attribute.KeyValue{
		attribute.Bool("b", false), attribute.Int64("i", -7), attribute.Float64("f", 2.5), attribute.String("s", ""),
		attribute.BoolSlice("bs", []bool{true, false}), attribute.Int64Slice("is", []int64{0, 1 << 40}),
		attribute.Float64Slice("fs", []float64{-1.5, 0}), attribute.StringSlice("ss", []string{"a", ""}),
		{Key: "bytes", Value: attribute.ByteSliceValue([]byte{0, 1, 2})},
		{Key: "slice", Value: attribute.SliceValue(attribute.StringValue("x"), attribute.Int64Value(3))},
		{Key: "map", Value: attribute.MapValue(attribute.String("k", "v"), attribute.Bool("on", true))},
	}
	ctx := trace.ContextWithRemoteSpanContext(context.Background(), remote)
	ctx, parent := tracer.Start(ctx, "tools/call a__b", trace.WithSpanKind(trace.SpanKindServer), trace.WithAttributes(attrs...),
		trace.WithLinks(trace.Link{SpanContext: linked, Attributes: []attribute.KeyValue{attribute.String("link.attr", "l")}}))
	_, child := tracer.Start(ctx, "inner", trace.WithSpanKind(trace.SpanKindClient))
	child.SetStatus(codes.Ok, "")
	child.End()
	parent.AddEvent("retried", trace.WithAttributes(attribute.Int("attempt", 2)))
	parent.SetStatus(codes.Error, "error result")
	parent.End()
	sctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	if err := tp.Shutdown(sctx); err != nil {
		t.Fatalf("Shutdown: %v", err)
	}

	ended := rec.Ended()
	if len(ended) != 2 {
		t.Fatalf("recorded %d spans", len(ended))
	}
	c, p := ended[0], ended[1]
	str := func(s string) *commonpb.AnyValue {
		return &commonpb.AnyValue{Value: &commonpb.AnyValue_StringValue{StringValue: s}}
	}
	bl := func(b bool) *commonpb.AnyValue {
		return &commonpb.AnyValue{Value: &commonpb.AnyValue_BoolValue{BoolValue: b}}
	}
	in := func(i int64) *commonpb.AnyValue {
		return &commonpb.AnyValue{Value: &commonpb.AnyValue_IntValue{IntValue: i}}
	}
	dbl := func(f float64) *commonpb.AnyValue {
		return &commonpb.AnyValue{Value: &commonpb.AnyValue_DoubleValue{DoubleValue: f}}
	}
	arr := func(v ...*commonpb.AnyValue) *commonpb.AnyValue {
		return &commonpb.AnyValue{Value: &commonpb.AnyValue_ArrayValue{ArrayValue: &commonpb.ArrayValue{Values: v}}}
	}
	kv := func(k string, v *commonpb.AnyValue) *commonpb.KeyValue { return &commonpb.KeyValue{Key: k, Value: v} }
	ids := func(sc trace.SpanContext) ([]byte, []byte) {
		tid, sid := sc.TraceID(), sc.SpanID()
		return tid[:], sid[:]
	}
	tid, psid := ids(p.SpanContext())
	_, csid := ids(c.SpanContext())
	rtid, rsid := ids(remote)
	ltid, lsid := ids(linked)
	if !bytes.Equal(tid, rtid) {
		t.Fatalf("the server span is not in the remote parent's trace")
	}
	want := &coltracepb.ExportTraceServiceRequest{ResourceSpans: []*tracepb.ResourceSpans{{
		Resource: &resourcepb.Resource{Attributes: []*commonpb.KeyValue{kv("process.pid", in(42)), kv("service.name", str("sb-test"))}},
		ScopeSpans: []*tracepb.ScopeSpans{{
			Scope: &commonpb.InstrumentationScope{Name: "scope-a", Version: "1.2.3",
				Attributes: []*commonpb.KeyValue{kv("scope.attr", bl(true))}},
			SchemaUrl: "https://example.com/schema",
			Spans: []*tracepb.Span{{
				TraceId: tid, SpanId: csid, ParentSpanId: psid, TraceState: "vendor=value", Name: "inner",
				Kind:              tracepb.Span_SPAN_KIND_CLIENT,
				StartTimeUnixNano: uint64(c.StartTime().UnixNano()), EndTimeUnixNano: uint64(c.EndTime().UnixNano()),
				Status: &tracepb.Status{Code: tracepb.Status_STATUS_CODE_OK},
				Flags:  0x101, // sampled; the parent is local
			}, {
				TraceId: tid, SpanId: psid, ParentSpanId: rsid, TraceState: "vendor=value", Name: "tools/call a__b",
				Kind:              tracepb.Span_SPAN_KIND_SERVER,
				StartTimeUnixNano: uint64(p.StartTime().UnixNano()), EndTimeUnixNano: uint64(p.EndTime().UnixNano()),
				Attributes: []*commonpb.KeyValue{
					kv("b", bl(false)), kv("i", in(-7)), kv("f", dbl(2.5)), kv("s", str("")),
					kv("bs", arr(bl(true), bl(false))), kv("is", arr(in(0), in(1<<40))),
					kv("fs", arr(dbl(-1.5), dbl(0))), kv("ss", arr(str("a"), str(""))),
					kv("bytes", &commonpb.AnyValue{Value: &commonpb.AnyValue_BytesValue{BytesValue: []byte{0, 1, 2}}}),
					kv("slice", arr(str("x"), in(3))),
					kv("map", &commonpb.AnyValue{Value: &commonpb.AnyValue_KvlistValue{KvlistValue: &commonpb.KeyValueList{
						Values: []*commonpb.KeyValue{kv("k", str("v")), kv("on", bl(true))}}}}),
				},
				Events: []*tracepb.Span_Event{{Name: "retried", TimeUnixNano: uint64(p.Events()[0].Time.UnixNano()),
					Attributes: []*commonpb.KeyValue{kv("attempt", in(2))}}},
				Links: []*tracepb.Span_Link{{TraceId: ltid, SpanId: lsid, TraceState: "vendor=value",
					Attributes: []*commonpb.KeyValue{kv("link.attr", str("l"))}, Flags: 0x100}},
				Status: &tracepb.Status{Code: tracepb.Status_STATUS_CODE_ERROR, Message: "error result"},
				Flags:  0x301, // sampled; the parent is remote
			}},
		}},
		SchemaUrl: "https://opentelemetry.io/schemas/1.26.0",
	}}}

	coll.mu.Lock()
	defer coll.mu.Unlock()
	if len(coll.reqs) != 2 {
		t.Fatalf("the collector got %d requests; want the one answered 503 and its retry", len(coll.reqs))
	}
	if !bytes.Equal(coll.reqs[0].body, coll.reqs[1].body) {
		t.Errorf("the retry sent other bytes than the first request")
	}
	for i, r := range coll.reqs {
		if r.path != "/v1/traces" || !r.gzipped || r.header.Get("Content-Type") != "application/x-protobuf" {
			t.Errorf("request %d: path %q gzip %v content type %q", i, r.path, r.gzipped, r.header.Get("Content-Type"))
		}
		if got := r.header.Get("Api-Key"); got != "s3cr=t,x" {
			t.Errorf("request %d: api-key %q, want the percent-decoded traces value", i, got)
		}
		if got := r.header.Get("X-Team"); got != "blue team" {
			t.Errorf("request %d: x-team %q", i, got)
		}
		var got coltracepb.ExportTraceServiceRequest
		if err := proto.Unmarshal(r.body, &got); err != nil {
			t.Fatalf("request %d: %v", i, err)
		}
		if d := cmp.Diff(want, &got, protocmp.Transform()); d != "" {
			t.Errorf("request %d (-want +got):\n%s", i, d)
		}
	}
}

// A collector's 400 is an error at once (no retry) that names the status
// and not the headers' values, even when the collector's body echoes one.
func TestOTLPExportErrorHidesHeaders(t *testing.T) {
	const secret = "tok-9f8e7d6c"
	coll := &fakeCollector{replies: []func(http.ResponseWriter){func(w http.ResponseWriter) {
		http.Error(w, "bad request: authorization "+secret+" not accepted", http.StatusBadRequest)
	}}}
	srv := httptest.NewServer(coll)
	t.Cleanup(srv.Close)
	// A credential may also sit in the endpoint's user info or query.
	endpoint := strings.Replace(srv.URL, "http://", "http://u:pw-in-url@", 1) + "/v1/traces?token=tok-in-query"
	exp := testExporter(t, mapEnv(map[string]string{"OTEL_EXPORTER_OTLP_HEADERS": "authorization=" + secret}), endpoint)
	rec := tracetest.NewSpanRecorder()
	tp := sdktrace.NewTracerProvider(sdktrace.WithSpanProcessor(rec))
	_, span := tp.Tracer("t").Start(context.Background(), "s")
	span.End()
	err := exp.ExportSpans(context.Background(), rec.Ended())
	if err == nil {
		t.Fatal("a 400 export succeeded")
	}
	if msg := err.Error(); !strings.Contains(msg, "400 Bad Request") || !strings.Contains(msg, "/v1/traces") ||
		strings.Contains(msg, secret) || strings.Contains(msg, "-in-") {
		t.Errorf("error %q: want the status and endpoint, not the header's value or the URL's credentials", msg)
	}
	coll.mu.Lock()
	n := len(coll.reqs)
	got := coll.reqs[0].header.Get("Authorization")
	coll.mu.Unlock()
	if n != 1 || got != secret {
		t.Errorf("%d requests, authorization %q; want one request carrying the header", n, got)
	}
	if err := exp.Shutdown(context.Background()); err != nil {
		t.Fatal(err)
	}
	if err := exp.ExportSpans(context.Background(), rec.Ended()); err == nil {
		t.Error("an export after Shutdown succeeded")
	}
}

// The variables' precedence and defaults, and errors that name the
// variable but never a header's value.
func TestOTLPConfigFromEnv(t *testing.T) {
	for _, tc := range []struct {
		name    string
		env     map[string]string
		timeout time.Duration
		gzip    bool
		headers http.Header
		err     string
	}{
		{name: "defaults", env: nil, timeout: 10 * time.Second, headers: http.Header{}},
		{name: "general", env: map[string]string{"OTEL_EXPORTER_OTLP_TIMEOUT": "1500", "OTEL_EXPORTER_OTLP_COMPRESSION": "gzip", "OTEL_EXPORTER_OTLP_HEADERS": "a=1,b=x%20y"},
			timeout: 1500 * time.Millisecond, gzip: true, headers: http.Header{"A": {"1"}, "B": {"x y"}}},
		{name: "traces win", env: map[string]string{"OTEL_EXPORTER_OTLP_TIMEOUT": "1500", "OTEL_EXPORTER_OTLP_TRACES_TIMEOUT": "300",
			"OTEL_EXPORTER_OTLP_COMPRESSION": "gzip", "OTEL_EXPORTER_OTLP_TRACES_COMPRESSION": "none", "OTEL_EXPORTER_OTLP_PROTOCOL": "grpc",
			"OTEL_EXPORTER_OTLP_TRACES_PROTOCOL": "http/protobuf"}, timeout: 300 * time.Millisecond, headers: http.Header{}},
		{name: "bad timeout", env: map[string]string{"OTEL_EXPORTER_OTLP_TIMEOUT": "10s"}, err: "OTEL_EXPORTER_OTLP_TIMEOUT=10s"},
		{name: "bad compression", env: map[string]string{"OTEL_EXPORTER_OTLP_TRACES_COMPRESSION": "zstd"}, err: "OTEL_EXPORTER_OTLP_TRACES_COMPRESSION=zstd"},
		{name: "grpc", env: map[string]string{"OTEL_EXPORTER_OTLP_PROTOCOL": "grpc"}, err: "http/protobuf only"},
		{name: "bad escape", env: map[string]string{"OTEL_EXPORTER_OTLP_HEADERS": "ok=1,key=hunter2%zz"}, err: "the value of key is not"},
		{name: "no equals", env: map[string]string{"OTEL_EXPORTER_OTLP_HEADERS": "hunter2"}, err: "OTEL_EXPORTER_OTLP_HEADERS: an entry"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			cfg, err := otlpConfigFromEnv(mapEnv(tc.env), "http://localhost:4318/v1/traces")
			if tc.err != "" {
				if err == nil || !strings.Contains(err.Error(), tc.err) || strings.Contains(err.Error(), "hunter2") {
					t.Fatalf("error %v; want one with %q and no header value", err, tc.err)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if cfg.timeout != tc.timeout || cfg.gzip != tc.gzip {
				t.Errorf("timeout %s gzip %v; want %s %v", cfg.timeout, cfg.gzip, tc.timeout, tc.gzip)
			}
			if d := cmp.Diff(tc.headers, cfg.headers); d != "" {
				t.Errorf("headers (-want +got):\n%s", d)
			}
		})
	}
	if _, err := newOTLPExporter(otlpConfig{endpoint: "http://user:pw@[::1"}); err == nil || strings.Contains(err.Error(), "pw") {
		t.Errorf("a bad endpoint: %v", err)
	}
}

// What a collector answers besides success: a Retry-After beyond the
// timeout ends the export at once; a 400's google.rpc.Status message and
// a partial success's rejected count reach the error, still without the
// headers' values.
func TestOTLPExportCollectorAnswers(t *testing.T) {
	const secret = "tok-1a2b3c4d"
	protoReply := func(code int, m proto.Message) func(http.ResponseWriter) {
		return func(w http.ResponseWriter) {
			b, _ := proto.Marshal(m)
			w.Header().Set("Content-Type", "application/x-protobuf")
			w.WriteHeader(code)
			w.Write(b)
		}
	}
	for _, tc := range []struct {
		name  string
		reply func(http.ResponseWriter)
		want  []string
	}{
		{name: "retry after beyond the timeout", reply: func(w http.ResponseWriter) {
			w.Header().Set("Retry-After", "3600")
			http.Error(w, "slow down", http.StatusTooManyRequests)
		}, want: []string{"429 Too Many Requests", "slow down", "no time left within the timeout (20s)"}},
		{name: "status message", reply: protoReply(http.StatusBadRequest, &rpcstatus.Status{Code: 3, Message: "span name empty; key " + secret}),
			want: []string{"400 Bad Request", "span name empty; key [header value]"}},
		{name: "partial success", reply: protoReply(http.StatusOK, &coltracepb.ExportTraceServiceResponse{
			PartialSuccess: &coltracepb.ExportTracePartialSuccess{RejectedSpans: 2, ErrorMessage: "too old"}}),
			want: []string{"rejected 2 spans", "too old"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			coll := &fakeCollector{replies: []func(http.ResponseWriter){tc.reply}}
			srv := httptest.NewServer(coll)
			t.Cleanup(srv.Close)
			exp := testExporter(t, mapEnv(map[string]string{"OTEL_EXPORTER_OTLP_HEADERS": "key=" + secret, "OTEL_EXPORTER_OTLP_TIMEOUT": "20000"}), srv.URL+"/v1/traces")
			rec := tracetest.NewSpanRecorder()
			_, span := sdktrace.NewTracerProvider(sdktrace.WithSpanProcessor(rec)).Tracer("t").Start(context.Background(), "s")
			span.End()
			err := exp.ExportSpans(context.Background(), rec.Ended())
			if err == nil {
				t.Fatal("the export succeeded")
			}
			for _, w := range tc.want {
				if !strings.Contains(err.Error(), w) {
					t.Errorf("error %q lacks %q", err, w)
				}
			}
			if strings.Contains(err.Error(), secret) {
				t.Errorf("error %q holds a header's value", err)
			}
			coll.mu.Lock()
			defer coll.mu.Unlock()
			if len(coll.reqs) != 1 {
				t.Errorf("%d requests; want 1 (no retry)", len(coll.reqs))
			}
		})
	}
}

// OTEL_EXPORTER_OTLP_CERTIFICATE trusts a collector's own CA, and
// _CLIENT_CERTIFICATE with _CLIENT_KEY present a client certificate to a
// collector that requires one; without them the export fails.
func TestOTLPExportTLS(t *testing.T) {
	dir := t.TempDir()
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	tmpl := &x509.Certificate{SerialNumber: big.NewInt(1), Subject: pkix.Name{CommonName: "otlp client"},
		NotBefore: time.Now().Add(-time.Hour), NotAfter: time.Now().Add(time.Hour), ExtKeyUsage: []x509.ExtKeyUsage{x509.ExtKeyUsageClientAuth}}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, &key.PublicKey, key)
	if err != nil {
		t.Fatal(err)
	}
	keyDER, err := x509.MarshalPKCS8PrivateKey(key)
	if err != nil {
		t.Fatal(err)
	}
	clientCert, _ := x509.ParseCertificate(der)
	write := func(name, typ string, b []byte) string {
		p := filepath.Join(dir, name)
		if err := os.WriteFile(p, pem.EncodeToMemory(&pem.Block{Type: typ, Bytes: b}), 0o600); err != nil {
			t.Fatal(err)
		}
		return p
	}
	coll := &fakeCollector{}
	srv := httptest.NewUnstartedServer(coll)
	clients := x509.NewCertPool()
	clients.AddCert(clientCert)
	srv.TLS = &tls.Config{ClientAuth: tls.RequireAndVerifyClientCert, ClientCAs: clients}
	srv.StartTLS()
	t.Cleanup(srv.Close)
	env := map[string]string{
		"OTEL_EXPORTER_OTLP_TRACES_CERTIFICATE": write("ca.pem", "CERTIFICATE", srv.Certificate().Raw),
		"OTEL_EXPORTER_OTLP_CLIENT_CERTIFICATE": write("client.pem", "CERTIFICATE", der),
		"OTEL_EXPORTER_OTLP_CLIENT_KEY":         write("client-key.pem", "PRIVATE KEY", keyDER),
	}
	rec := tracetest.NewSpanRecorder()
	_, span := sdktrace.NewTracerProvider(sdktrace.WithSpanProcessor(rec)).Tracer("t").Start(context.Background(), "s")
	span.End()
	export := func(env map[string]string) error {
		cfg, err := otlpConfigFromEnv(mapEnv(env), srv.URL+"/v1/traces")
		if err != nil {
			t.Fatal(err)
		}
		cfg.timeout = 5 * time.Second
		exp, err := newOTLPExporter(cfg)
		if err != nil {
			t.Fatal(err)
		}
		defer exp.Shutdown(context.Background())
		return exp.ExportSpans(context.Background(), rec.Ended())
	}
	if err := export(env); err != nil {
		t.Fatalf("export with the CA and a client certificate: %v", err)
	}
	delete(env, "OTEL_EXPORTER_OTLP_CLIENT_CERTIFICATE")
	if _, err := otlpConfigFromEnv(mapEnv(env), srv.URL); err == nil || !strings.Contains(err.Error(), "go together") {
		t.Errorf("a key without its certificate: %v", err)
	}
	delete(env, "OTEL_EXPORTER_OTLP_CLIENT_KEY")
	if err := export(env); err == nil {
		t.Error("an export without the client certificate the collector requires succeeded")
	}
	coll.mu.Lock()
	defer coll.mu.Unlock()
	if len(coll.reqs) != 1 {
		t.Errorf("the collector got %d requests; want the one with the client certificate", len(coll.reqs))
	}
}

// testExporter is the exporter otlpConfigFromEnv(env, endpoint) configures.
func testExporter(t *testing.T, env func(string) string, endpoint string) *otlpExporter {
	t.Helper()
	cfg, err := otlpConfigFromEnv(env, endpoint)
	if err != nil {
		t.Fatal(err)
	}
	exp, err := newOTLPExporter(cfg)
	if err != nil {
		t.Fatal(err)
	}
	return exp
}

package gateway

import (
	"bytes"
	"compress/gzip"
	"context"
	"crypto/tls"
	"crypto/x509"
	"errors"
	"fmt"
	"io"
	"math"
	"net/http"
	"net/url"
	"os"
	"strconv"
	"strings"
	"sync"
	"time"

	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/codes"
	"go.opentelemetry.io/otel/sdk/instrumentation"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/trace"
	"google.golang.org/protobuf/encoding/protowire"

	"github.com/switchboard-mcp/switchboard/host"
)

// otlpExporter sends spans to an OTLP/HTTP traces endpoint as a binary
// protobuf ExportTraceServiceRequest (application/x-protobuf), what the
// OpenTelemetry otlptracehttp exporter sends by default. It is ours
// rather than otlptracehttp because that one links the OTLP collector's
// gRPC service stubs and through them gRPC, grpc-gateway and
// golang.org/x/net/trace, whose package initialisation runs in every
// switchboard process, traced or not; this one needs only protowire,
// which Prometheus' client already links. It is safe for concurrent use.
type otlpExporter struct {
	endpoint *url.URL
	// headers are sent with every request. Their values may be secrets
	// (an API key): no error or log names them.
	headers http.Header
	timeout time.Duration
	gzip    bool
	client  *http.Client

	mu      sync.Mutex
	stopped bool
}

// otlpConfig is what the OTEL_EXPORTER_OTLP_* variables ask of the
// exporter.
type otlpConfig struct {
	endpoint string
	headers  http.Header
	timeout  time.Duration
	gzip     bool
	// tls is set when a CA or a client certificate is configured.
	tls *tls.Config
}

// defaultOTLPTimeout is OTEL_EXPORTER_OTLP_TIMEOUT's default.
const defaultOTLPTimeout = 10 * time.Second

// otlpConfigFromEnv reads the exporter's variables for the traces
// endpoint endpoint: each OTEL_EXPORTER_OTLP_TRACES_X wins over
// OTEL_EXPORTER_OTLP_X. An error names the variable, never a header's
// value.
func otlpConfigFromEnv(env func(string) string, endpoint string) (otlpConfig, error) {
	cfg := otlpConfig{endpoint: endpoint, timeout: defaultOTLPTimeout, headers: http.Header{}}
	pick := func(x string) (name, value string) {
		if v := env("OTEL_EXPORTER_OTLP_TRACES_" + x); v != "" {
			return "OTEL_EXPORTER_OTLP_TRACES_" + x, v
		}
		return "OTEL_EXPORTER_OTLP_" + x, env("OTEL_EXPORTER_OTLP_" + x)
	}
	if name, v := pick("PROTOCOL"); v != "" && v != "http/protobuf" {
		return cfg, fmt.Errorf("%s=%s: switchboard exports traces over http/protobuf only", name, v)
	}
	if name, v := pick("HEADERS"); v != "" {
		// W3C baggage-like: key=value pairs split by commas, values
		// percent-decoded.
		for _, pair := range strings.Split(v, ",") {
			if strings.TrimSpace(pair) == "" {
				continue
			}
			k, val, ok := strings.Cut(pair, "=")
			k = strings.TrimSpace(k)
			if !ok || !validHeaderKey(k) {
				return cfg, fmt.Errorf("%s: an entry is not key=value with a valid header name", name)
			}
			dec, err := url.PathUnescape(val)
			if err != nil {
				return cfg, fmt.Errorf("%s: the value of %s is not percent-encoded correctly", name, k)
			}
			cfg.headers.Set(k, strings.TrimSpace(dec))
		}
	}
	if name, v := pick("TIMEOUT"); v != "" {
		ms, err := strconv.ParseInt(v, 10, 64)
		if err != nil || ms < 0 {
			return cfg, fmt.Errorf("%s=%s: want a number of milliseconds", name, v)
		}
		if ms > 0 {
			cfg.timeout = time.Duration(ms) * time.Millisecond
		}
	}
	if name, v := pick("CERTIFICATE"); v != "" {
		pem, err := os.ReadFile(v)
		if err != nil {
			return cfg, fmt.Errorf("%s: %w", name, err)
		}
		pool := x509.NewCertPool()
		if !pool.AppendCertsFromPEM(pem) {
			return cfg, fmt.Errorf("%s: %s holds no PEM certificate", name, v)
		}
		cfg.tls = &tls.Config{RootCAs: pool}
	}
	certName, cert := pick("CLIENT_CERTIFICATE")
	keyName, key := pick("CLIENT_KEY")
	switch {
	case cert != "" && key != "":
		pair, err := tls.LoadX509KeyPair(cert, key)
		if err != nil {
			return cfg, fmt.Errorf("%s and %s: %w", certName, keyName, err)
		}
		if cfg.tls == nil {
			cfg.tls = &tls.Config{}
		}
		cfg.tls.Certificates = []tls.Certificate{pair}
	case cert != "" || key != "":
		return cfg, fmt.Errorf("%s and %s go together: one is not set", certName, keyName)
	}
	if name, v := pick("COMPRESSION"); v != "" {
		switch strings.ToLower(v) {
		case "gzip":
			cfg.gzip = true
		case "none":
		default:
			return cfg, fmt.Errorf("%s=%s: want gzip or none", name, v)
		}
	}
	return cfg, nil
}

// validHeaderKey reports whether k is an HTTP token (RFC 9110).
func validHeaderKey(k string) bool {
	if k == "" {
		return false
	}
	for i := 0; i < len(k); i++ {
		c := k[i]
		if c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || strings.IndexByte("!#$%&'*+-.^_`|~", c) >= 0 {
			continue
		}
		return false
	}
	return true
}

// newOTLPExporter returns the exporter of cfg. The endpoint must be an
// http or https URL.
func newOTLPExporter(cfg otlpConfig) (*otlpExporter, error) {
	u, err := url.Parse(cfg.endpoint)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		// url.Parse's error repeats the URL, which may hold a password.
		return nil, errors.New("the OTLP traces endpoint is not an http or https URL")
	}
	timeout := cfg.timeout
	if timeout <= 0 {
		timeout = defaultOTLPTimeout
	}
	client := &http.Client{}
	if cfg.tls != nil {
		// An embedder may have replaced the default transport.
		t, ok := http.DefaultTransport.(*http.Transport)
		if ok {
			t = t.Clone()
		} else {
			t = &http.Transport{Proxy: http.ProxyFromEnvironment}
		}
		t.TLSClientConfig = cfg.tls
		client.Transport = t
	}
	return &otlpExporter{endpoint: u, headers: cfg.headers, timeout: timeout, gzip: cfg.gzip, client: client}, nil
}

var errExporterShutdown = errors.New("the OTLP exporter is shut down")

// ExportSpans sends spans in one request, retrying on 429, 502, 503 and
// 504 (after the response's Retry-After when it gives one) and on a
// connection that timed out, within the timeout. It implements
// sdktrace.SpanExporter.
func (e *otlpExporter) ExportSpans(ctx context.Context, spans []sdktrace.ReadOnlySpan) error {
	e.mu.Lock()
	stopped := e.stopped
	e.mu.Unlock()
	if stopped {
		return errExporterShutdown
	}
	if len(spans) == 0 {
		return nil
	}
	body := appendExportRequest(nil, spans)
	if e.gzip {
		var buf bytes.Buffer
		zw := gzip.NewWriter(&buf)
		zw.Write(body) // a bytes.Buffer does not fail
		zw.Close()
		body = buf.Bytes()
	}
	ctx, cancel := context.WithTimeout(ctx, e.timeout)
	defer cancel()
	backoff := time.Second
	for {
		wait, err := e.post(ctx, body)
		if err == nil {
			return nil
		}
		if wait < 0 {
			return err
		}
		if wait == 0 {
			wait = backoff
			backoff = min(2*backoff, 8*time.Second)
		}
		if dl, ok := ctx.Deadline(); ok && time.Until(dl) < wait {
			return fmt.Errorf("%w; no time left within the timeout (%s) to retry", err, e.timeout)
		}
		t := time.NewTimer(wait)
		select {
		case <-ctx.Done():
			t.Stop()
			return fmt.Errorf("%w; gave up retrying: %w", err, ctx.Err())
		case <-t.C:
		}
	}
}

// post sends one request. On failure, wait < 0 means do not retry, 0
// retry after a backoff, > 0 after that long (the Retry-After).
func (e *otlpExporter) post(ctx context.Context, body []byte) (wait time.Duration, err error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, e.endpoint.String(), bytes.NewReader(body))
	if err != nil {
		return -1, fmt.Errorf("OTLP export to %s: %w", e.where(), err)
	}
	for k, v := range e.headers {
		req.Header[k] = v
	}
	req.Header.Set("Content-Type", "application/x-protobuf")
	req.Header.Set("User-Agent", "switchboard/"+host.Version)
	if e.gzip {
		req.Header.Set("Content-Encoding", "gzip")
	}
	resp, err := e.client.Do(req)
	if err != nil {
		// Retried as otlptracehttp does: only what may pass (a timeout);
		// a refused connection or a certificate the collector refuses
		// fails at once. The client's url.Error repeats the whole URL:
		// only its cause is kept.
		wait := time.Duration(-1)
		var uerr *url.Error
		if errors.As(err, &uerr) {
			if uerr.Timeout() || uerr.Temporary() {
				wait = 0
			}
			err = uerr.Err
		}
		return wait, fmt.Errorf("OTLP export to %s: %w", e.where(), err)
	}
	defer resp.Body.Close()
	msg, _ := io.ReadAll(io.LimitReader(resp.Body, 64<<10))
	proto := resp.Header.Get("Content-Type") == "application/x-protobuf"
	if resp.StatusCode >= 200 && resp.StatusCode <= 299 {
		// The spans were delivered; a partial success (some rejected) is
		// reported as otlptracehttp does, as an error no retry mends.
		if proto {
			if n, why := partialSuccess(msg); n != 0 || why != "" {
				return -1, fmt.Errorf("OTLP export to %s: the collector rejected %d spans%s", e.where(), n, e.quote(why))
			}
		}
		return 0, nil
	}
	why := string(msg)
	if proto {
		// A google.rpc.Status; its message is field 2.
		why = protoString(msg, 2)
	}
	err = fmt.Errorf("OTLP export to %s: %s%s", e.where(), resp.Status, e.quote(why))
	switch resp.StatusCode {
	case http.StatusTooManyRequests, http.StatusBadGateway, http.StatusServiceUnavailable, http.StatusGatewayTimeout:
		return retryAfter(resp.Header.Get("Retry-After")), err
	}
	return -1, err
}

// where names the endpoint in errors: without user info or query, where
// a credential may be.
func (e *otlpExporter) where() string {
	u := url.URL{Scheme: e.endpoint.Scheme, Host: e.endpoint.Host, Path: e.endpoint.Path}
	return u.String()
}

// partialSuccess reads an ExportTraceServiceResponse's partial_success
// (field 1): rejected_spans (1) and error_message (2).
func partialSuccess(b []byte) (rejected int64, msg string) {
	ps := protoBytes(b, 1)
	if ps == nil {
		return 0, ""
	}
	for len(ps) > 0 {
		num, typ, n := protowire.ConsumeTag(ps)
		if n < 0 {
			break
		}
		ps = ps[n:]
		if num == 1 && typ == protowire.VarintType {
			v, m := protowire.ConsumeVarint(ps)
			if m < 0 {
				break
			}
			rejected = int64(v)
		}
		m := protowire.ConsumeFieldValue(num, typ, ps)
		if m < 0 {
			break
		}
		ps = ps[m:]
	}
	return rejected, protoString(protoBytes(b, 1), 2)
}

// protoBytes is the last length-delimited field num of the message b, nil
// when there is none or b does not parse.
func protoBytes(b []byte, num protowire.Number) []byte {
	var out []byte
	for len(b) > 0 {
		n, typ, m := protowire.ConsumeTag(b)
		if m < 0 {
			return nil
		}
		b = b[m:]
		if n == num && typ == protowire.BytesType {
			v, k := protowire.ConsumeBytes(b)
			if k < 0 {
				return nil
			}
			out = v
		}
		k := protowire.ConsumeFieldValue(n, typ, b)
		if k < 0 {
			return nil
		}
		b = b[k:]
	}
	return out
}

func protoString(b []byte, num protowire.Number) string { return string(protoBytes(b, num)) }

// quote is a short form of what a collector said, for an error message,
// with the headers' values (a collector may echo the request) taken out.
func (e *otlpExporter) quote(s string) string {
	s = strings.ToValidUTF8(strings.TrimSpace(s), "?")
	if s == "" {
		return ""
	}
	for _, vs := range e.headers {
		for _, v := range vs {
			if v != "" {
				s = strings.ReplaceAll(s, v, "[header value]")
			}
		}
	}
	if r := []rune(s); len(r) > 200 {
		s = string(r[:200]) + "…"
	}
	return " (" + strconv.Quote(s) + ")"
}

// retryAfter is a Retry-After header's wait: seconds or an HTTP date; 0
// when there is none.
func retryAfter(v string) time.Duration {
	if v == "" {
		return 0
	}
	if s, err := strconv.ParseInt(v, 10, 64); err == nil && s >= 0 {
		if s > math.MaxInt64/int64(time.Second) {
			return math.MaxInt64
		}
		return max(time.Duration(s)*time.Second, time.Nanosecond)
	}
	if t, err := http.ParseTime(v); err == nil {
		return max(time.Until(t), time.Nanosecond)
	}
	return 0
}

// Shutdown stops the exporter: later exports fail. It is idempotent.
func (e *otlpExporter) Shutdown(ctx context.Context) error {
	e.mu.Lock()
	e.stopped = true
	e.mu.Unlock()
	e.client.CloseIdleConnections()
	return nil
}

// The field numbers of opentelemetry/proto (collector/trace/v1,
// trace/v1, resource/v1, common/v1) that the exporter writes.
const (
	fExportResourceSpans = 1 // ExportTraceServiceRequest.resource_spans

	fResourceSpansResource  = 1
	fResourceSpansScope     = 2
	fResourceSpansSchemaURL = 3

	fResourceAttributes = 1

	fScopeSpansScope     = 1
	fScopeSpansSpans     = 2
	fScopeSpansSchemaURL = 3

	fScopeName       = 1
	fScopeVersion    = 2
	fScopeAttributes = 3

	fSpanTraceID           = 1
	fSpanSpanID            = 2
	fSpanTraceState        = 3
	fSpanParentSpanID      = 4
	fSpanName              = 5
	fSpanKind              = 6
	fSpanStart             = 7
	fSpanEnd               = 8
	fSpanAttributes        = 9
	fSpanDroppedAttributes = 10
	fSpanEvents            = 11
	fSpanDroppedEvents     = 12
	fSpanLinks             = 13
	fSpanDroppedLinks      = 14
	fSpanStatus            = 15
	fSpanFlags             = 16

	fEventTime              = 1
	fEventName              = 2
	fEventAttributes        = 3
	fEventDroppedAttributes = 4

	fLinkTraceID           = 1
	fLinkSpanID            = 2
	fLinkTraceState        = 3
	fLinkAttributes        = 4
	fLinkDroppedAttributes = 5
	fLinkFlags             = 6

	fStatusMessage = 2
	fStatusCode    = 3

	fKeyValueKey   = 1
	fKeyValueValue = 2

	fAnyString = 1
	fAnyBool   = 2
	fAnyInt    = 3
	fAnyDouble = 4
	fAnyArray  = 5
	fAnyKVList = 6
	fAnyBytes  = 7

	fArrayValues  = 1 // ArrayValue.values and KeyValueList.values
	statusOK      = 1 // Status.StatusCode
	statusError   = 2
	flagHasRemote = 0x100 // SpanFlags: the is-remote bit below is known
	flagIsRemote  = 0x200
)

// appendExportRequest appends the ExportTraceServiceRequest of spans to
// b: one ResourceSpans per resource, one ScopeSpans per scope in it, in
// the order first seen.
func appendExportRequest(b []byte, spans []sdktrace.ReadOnlySpan) []byte {
	type scopeGroup struct {
		scope instrumentation.Scope
		spans []sdktrace.ReadOnlySpan
	}
	type resourceGroup struct {
		key    attribute.Distinct
		spans  sdktrace.ReadOnlySpan // any span of it, for its resource
		scopes []*scopeGroup
	}
	var groups []*resourceGroup
	for _, s := range spans {
		if s == nil {
			continue
		}
		key := s.Resource().Equivalent()
		var rg *resourceGroup
		for _, g := range groups {
			if g.key == key {
				rg = g
				break
			}
		}
		if rg == nil {
			rg = &resourceGroup{key: key, spans: s}
			groups = append(groups, rg)
		}
		scope := s.InstrumentationScope()
		var sg *scopeGroup
		for _, g := range rg.scopes {
			if g.scope.Name == scope.Name && g.scope.Version == scope.Version && g.scope.SchemaURL == scope.SchemaURL && g.scope.Attributes.Equivalent() == scope.Attributes.Equivalent() {
				sg = g
				break
			}
		}
		if sg == nil {
			sg = &scopeGroup{scope: scope}
			rg.scopes = append(rg.scopes, sg)
		}
		sg.spans = append(sg.spans, s)
	}
	for _, rg := range groups {
		b = appendMessage(b, fExportResourceSpans, func(b []byte) []byte {
			res := rg.spans.Resource()
			b = appendMessage(b, fResourceSpansResource, func(b []byte) []byte {
				for it := res.Iter(); it.Next(); {
					b = appendKeyValue(b, fResourceAttributes, it.Attribute())
				}
				return b
			})
			for _, sg := range rg.scopes {
				b = appendMessage(b, fResourceSpansScope, func(b []byte) []byte {
					b = appendMessage(b, fScopeSpansScope, func(b []byte) []byte {
						b = appendString(b, fScopeName, sg.scope.Name)
						b = appendString(b, fScopeVersion, sg.scope.Version)
						for it := sg.scope.Attributes.Iter(); it.Next(); {
							b = appendKeyValue(b, fScopeAttributes, it.Attribute())
						}
						return b
					})
					for _, s := range sg.spans {
						b = appendMessage(b, fScopeSpansSpans, func(b []byte) []byte { return appendSpan(b, s) })
					}
					return appendString(b, fScopeSpansSchemaURL, sg.scope.SchemaURL)
				})
			}
			return appendString(b, fResourceSpansSchemaURL, res.SchemaURL())
		})
	}
	return b
}

// appendSpan appends the fields of s's Span message.
func appendSpan(b []byte, s sdktrace.ReadOnlySpan) []byte {
	sc := s.SpanContext()
	tid, sid := sc.TraceID(), sc.SpanID()
	b = appendBytes(b, fSpanTraceID, tid[:])
	b = appendBytes(b, fSpanSpanID, sid[:])
	b = appendString(b, fSpanTraceState, sc.TraceState().String())
	parent := s.Parent()
	if psid := parent.SpanID(); psid.IsValid() {
		b = appendBytes(b, fSpanParentSpanID, psid[:])
	}
	b = appendString(b, fSpanName, s.Name())
	// trace.SpanKind's values are OTLP's Span.SpanKind's.
	if k := s.SpanKind(); k >= trace.SpanKindInternal && k <= trace.SpanKindConsumer {
		b = appendVarint(b, fSpanKind, uint64(k))
	}
	b = appendFixed64(b, fSpanStart, unixNano(s.StartTime()))
	b = appendFixed64(b, fSpanEnd, unixNano(s.EndTime()))
	for _, kv := range s.Attributes() {
		b = appendKeyValue(b, fSpanAttributes, kv)
	}
	b = appendVarint(b, fSpanDroppedAttributes, count(s.DroppedAttributes()))
	for _, ev := range s.Events() {
		b = appendMessage(b, fSpanEvents, func(b []byte) []byte {
			b = appendFixed64(b, fEventTime, unixNano(ev.Time))
			b = appendString(b, fEventName, ev.Name)
			for _, kv := range ev.Attributes {
				b = appendKeyValue(b, fEventAttributes, kv)
			}
			return appendVarint(b, fEventDroppedAttributes, count(ev.DroppedAttributeCount))
		})
	}
	b = appendVarint(b, fSpanDroppedEvents, count(s.DroppedEvents()))
	for _, l := range s.Links() {
		b = appendMessage(b, fSpanLinks, func(b []byte) []byte {
			ltid, lsid := l.SpanContext.TraceID(), l.SpanContext.SpanID()
			b = appendBytes(b, fLinkTraceID, ltid[:])
			b = appendBytes(b, fLinkSpanID, lsid[:])
			b = appendString(b, fLinkTraceState, l.SpanContext.TraceState().String())
			for _, kv := range l.Attributes {
				b = appendKeyValue(b, fLinkAttributes, kv)
			}
			b = appendVarint(b, fLinkDroppedAttributes, count(l.DroppedAttributeCount))
			return appendFixed32(b, fLinkFlags, spanFlags(l.SpanContext.TraceFlags(), l.SpanContext.IsRemote()))
		})
	}
	b = appendVarint(b, fSpanDroppedLinks, count(s.DroppedLinks()))
	st := s.Status()
	b = appendMessage(b, fSpanStatus, func(b []byte) []byte {
		b = appendString(b, fStatusMessage, st.Description)
		switch st.Code {
		case codes.Ok:
			b = appendVarint(b, fStatusCode, statusOK)
		case codes.Error:
			b = appendVarint(b, fStatusCode, statusError)
		}
		return b
	})
	return appendFixed32(b, fSpanFlags, spanFlags(sc.TraceFlags(), parent.IsRemote()))
}

// spanFlags is OTLP's flags field: the W3C trace flags and whether the
// parent (or linked span) is remote.
func spanFlags(tf trace.TraceFlags, remote bool) uint32 {
	f := uint32(tf) | flagHasRemote
	if remote {
		f |= flagIsRemote
	}
	return f
}

func unixNano(t time.Time) uint64 { return uint64(max(0, t.UnixNano())) }

func count(n int) uint64 { return uint64(min(max(n, 0), math.MaxUint32)) }

// appendKeyValue appends a KeyValue message as field num.
func appendKeyValue(b []byte, num protowire.Number, kv attribute.KeyValue) []byte {
	return appendMessage(b, num, func(b []byte) []byte {
		b = appendString(b, fKeyValueKey, string(kv.Key))
		return appendMessage(b, fKeyValueValue, func(b []byte) []byte { return appendAnyValue(b, kv.Value) })
	})
}

// appendAnyValue appends the fields of v's AnyValue; an empty value has
// none. A value in the oneof is written even when it is its type's zero.
func appendAnyValue(b []byte, v attribute.Value) []byte {
	array := func(n int, each func(b []byte, i int) []byte) []byte {
		return appendMessage(b, fAnyArray, func(b []byte) []byte {
			for i := range n {
				b = appendMessage(b, fArrayValues, func(b []byte) []byte { return each(b, i) })
			}
			return b
		})
	}
	switch v.Type() {
	case attribute.EMPTY:
		return b
	case attribute.BOOL:
		return appendBool(b, fAnyBool, v.AsBool())
	case attribute.INT64:
		return protowire.AppendVarint(protowire.AppendTag(b, fAnyInt, protowire.VarintType), uint64(v.AsInt64()))
	case attribute.FLOAT64:
		return protowire.AppendFixed64(protowire.AppendTag(b, fAnyDouble, protowire.Fixed64Type), math.Float64bits(v.AsFloat64()))
	case attribute.STRING:
		return protowire.AppendString(protowire.AppendTag(b, fAnyString, protowire.BytesType), v.AsString())
	case attribute.BYTESLICE:
		return protowire.AppendBytes(protowire.AppendTag(b, fAnyBytes, protowire.BytesType), v.AsByteSlice())
	case attribute.BOOLSLICE:
		s := v.AsBoolSlice()
		return array(len(s), func(b []byte, i int) []byte { return appendAnyValue(b, attribute.BoolValue(s[i])) })
	case attribute.INT64SLICE:
		s := v.AsInt64Slice()
		return array(len(s), func(b []byte, i int) []byte { return appendAnyValue(b, attribute.Int64Value(s[i])) })
	case attribute.FLOAT64SLICE:
		s := v.AsFloat64Slice()
		return array(len(s), func(b []byte, i int) []byte { return appendAnyValue(b, attribute.Float64Value(s[i])) })
	case attribute.STRINGSLICE:
		s := v.AsStringSlice()
		return array(len(s), func(b []byte, i int) []byte { return appendAnyValue(b, attribute.StringValue(s[i])) })
	case attribute.SLICE:
		s := v.AsSlice()
		return array(len(s), func(b []byte, i int) []byte { return appendAnyValue(b, s[i]) })
	case attribute.MAP:
		m := v.AsMap()
		return appendMessage(b, fAnyKVList, func(b []byte) []byte {
			for _, kv := range m {
				b = appendKeyValue(b, fArrayValues, kv)
			}
			return b
		})
	default:
		// As otlptracehttp: a type this code does not know yet.
		return protowire.AppendString(protowire.AppendTag(b, fAnyString, protowire.BytesType), "INVALID")
	}
}

// appendMessage appends a length-delimited field num holding what fill
// appends: fill writes in place, then the bytes move up by the length
// prefix's size.
func appendMessage(b []byte, num protowire.Number, fill func([]byte) []byte) []byte {
	b = protowire.AppendTag(b, num, protowire.BytesType)
	start := len(b)
	b = fill(b)
	n := len(b) - start
	size := protowire.SizeVarint(uint64(n))
	b = append(b, make([]byte, size)...)
	copy(b[start+size:], b[start:start+n])
	protowire.AppendVarint(b[start:start], uint64(n))
	return b
}

// The scalar appenders leave out a zero value, as proto3 does.

func appendString(b []byte, num protowire.Number, s string) []byte {
	if s == "" {
		return b
	}
	return protowire.AppendString(protowire.AppendTag(b, num, protowire.BytesType), s)
}

func appendBytes(b []byte, num protowire.Number, s []byte) []byte {
	if len(s) == 0 {
		return b
	}
	return protowire.AppendBytes(protowire.AppendTag(b, num, protowire.BytesType), s)
}

func appendVarint(b []byte, num protowire.Number, v uint64) []byte {
	if v == 0 {
		return b
	}
	return protowire.AppendVarint(protowire.AppendTag(b, num, protowire.VarintType), v)
}

func appendFixed64(b []byte, num protowire.Number, v uint64) []byte {
	if v == 0 {
		return b
	}
	return protowire.AppendFixed64(protowire.AppendTag(b, num, protowire.Fixed64Type), v)
}

func appendFixed32(b []byte, num protowire.Number, v uint32) []byte {
	if v == 0 {
		return b
	}
	return protowire.AppendFixed32(protowire.AppendTag(b, num, protowire.Fixed32Type), v)
}

// appendBool writes the oneof's bool even when false.
func appendBool(b []byte, num protowire.Number, v bool) []byte {
	return protowire.AppendVarint(protowire.AppendTag(b, num, protowire.VarintType), protowire.EncodeBool(v))
}

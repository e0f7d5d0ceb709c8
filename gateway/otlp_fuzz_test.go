package gateway

import (
	"strings"
	"testing"

	"google.golang.org/protobuf/encoding/protowire"
)

// FuzzOTLPHeaders: OTEL_EXPORTER_OTLP_HEADERS of any text never panics,
// and whatever comes before it, a secret header value after it never
// reaches an error; when the whole list parses, that header is sent as
// given.
func FuzzOTLPHeaders(f *testing.F) {
	for _, s := range []string{"", "a=b", "a=b,c=%20d", "=x", "a", "a=%zz", "k=v,,", "ä=1", "x-y=a%2Cb"} {
		f.Add(s)
	}
	const secret = "s3cr3t-marker-value"
	f.Fuzz(func(t *testing.T, raw string) {
		env := map[string]string{"OTEL_EXPORTER_OTLP_HEADERS": raw + ",x-sec=" + secret}
		cfg, err := otlpConfigFromEnv(func(k string) string { return env[k] }, "http://127.0.0.1:4318/v1/traces")
		if err != nil {
			if strings.Contains(err.Error(), secret) {
				t.Fatalf("the error holds a header value: %v", err)
			}
			return
		}
		if got := cfg.headers.Get("X-Sec"); got != secret && !strings.Contains(strings.ToLower(raw), "x-sec") {
			t.Fatalf("x-sec = %q", got)
		}
	})
}

// FuzzOTLPCollectorAnswer: a collector's answer of any bytes never panics
// partialSuccess, and a well-formed partial success reads back as sent.
func FuzzOTLPCollectorAnswer(f *testing.F) {
	f.Add(int64(3), "spans dropped", []byte{0x0a, 0x02, 0x08, 0x01})
	f.Add(int64(0), "", []byte{0xff, 0xff})
	f.Fuzz(func(t *testing.T, rejected int64, msg string, junk []byte) {
		partialSuccess(junk)
		retryAfter(string(junk))
		var ps []byte
		ps = protowire.AppendTag(ps, 1, protowire.VarintType)
		ps = protowire.AppendVarint(ps, uint64(rejected))
		ps = protowire.AppendTag(ps, 2, protowire.BytesType)
		ps = protowire.AppendString(ps, msg)
		var b []byte
		b = protowire.AppendTag(b, 1, protowire.BytesType)
		b = protowire.AppendBytes(b, ps)
		if r, m := partialSuccess(b); r != rejected || m != msg {
			t.Fatalf("partialSuccess = %d, %q; sent %d, %q", r, m, rejected, msg)
		}
		if d := retryAfter(string(junk)); d < 0 {
			t.Fatalf("retryAfter(%q) = %v", junk, d)
		}
	})
}

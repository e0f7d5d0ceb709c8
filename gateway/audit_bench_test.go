package gateway

import (
	"encoding/json"
	"path/filepath"
	"testing"
	"time"

	"github.com/switchboard-mcp/switchboard/internal/redact"
)

// BenchmarkAuditLine is one audit line of a plain call, as the gateway's
// observe middleware writes it: the entry's arguments redacted, cut and
// HMAC'd, the line encoded and appended.
func BenchmarkAuditLine(b *testing.B) {
	l, err := OpenAudit(filepath.Join(b.TempDir(), "audit.jsonl"), nil)
	if err != nil {
		b.Fatal(err)
	}
	defer l.Close()
	var set redact.Set
	set.Add("s3cr3t-value-from-env")
	args := json.RawMessage(`{"text":"hello switchboard"}`)
	start := time.Now()
	b.ReportAllocs()
	for b.Loop() {
		e := &AuditEntry{Time: start.UTC(), Session: "0123456789abcdef", Tool: "mcp__echo__echo", Server: "echo", ServerTool: "echo",
			Decision: "allow", Rule: "mcp__echo", RuleSource: "user settings", DurationMS: 0.123, ResultBytes: 17}
		l.write(e, args, set.String)
	}
}

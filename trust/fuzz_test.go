package trust

import (
	"bytes"
	"encoding/json"
	"testing"

	"github.com/switchboard-mcp/switchboard/config"
)

// FuzzQuote: whatever the string, the quoted word holds nothing a terminal
// would act on or hide, and reads back to exactly the string.
func FuzzQuote(f *testing.F) {
	for _, s := range []string{"", "npx", "a b", "it's", "\x1b[31mred", "\u202e", "\xff\xfe", "$'x'", "\\", "\r\n", "日本語", "\u3164", "\ufe0f", "\u2800", "\U000E0100", "\u034f"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		checkQuoted(t, s)
	})
}

// FuzzEncode: two definitions built from fuzzed parts encode the same
// exactly when they mean the same (the encoding is injective), and the
// encoding is valid JSON.
func FuzzEncode(f *testing.F) {
	f.Add("x", "a", "b=c", "x", "a=b", "c")
	f.Add("sh", "-c", "", "sh", "-c", "\xff")
	f.Add("a", "k", "v", "a", "k", "v")
	f.Fuzz(func(t *testing.T, cmd1, k1, v1, cmd2, k2, v2 string) {
		a := config.Server{Command: cmd1, Args: []string{k1, v1}, Env: map[string]string{k1: v1}, Headers: map[string]string{v1: k1}}
		b := config.Server{Command: cmd2, Args: []string{k2, v2}, Env: map[string]string{k2: v2}, Headers: map[string]string{v2: k2}}
		ea, eb := Encode(a), Encode(b)
		if !json.Valid(ea) {
			t.Fatalf("invalid JSON %s", ea)
		}
		same := cmd1 == cmd2 && k1 == k2 && v1 == v2
		if same != bytes.Equal(ea, eb) {
			t.Fatalf("same meaning %v but encodings %s and %s", same, ea, eb)
		}
	})
}

// FuzzParseStore: any file content either fails (and approves nothing) or
// parses into a store that writes back to something that parses the same.
func FuzzParseStore(f *testing.F) {
	f.Add([]byte(`{"version": 1, "workspaces": {}}`))
	f.Add([]byte(`{"version": 1, "workspaces": {"/ws": {"servers": {"a": {"fingerprint": "sha256:0000000000000000000000000000000000000000000000000000000000000000"}}}}}`))
	f.Add([]byte(`{"version": 1, "workspaces": {"/ws": null}}`))
	f.Add([]byte(``))
	f.Add([]byte(`[]`))
	f.Fuzz(func(t *testing.T, data []byte) {
		d, err := parseStore(data)
		if err != nil {
			return
		}
		out, err := json.Marshal(d)
		if err != nil {
			t.Fatalf("a parsed store does not marshal: %v", err)
		}
		d2, err := parseStore(out)
		if err != nil {
			t.Fatalf("a written store does not parse: %v\n%s", err, out)
		}
		again, _ := json.Marshal(d2)
		if !bytes.Equal(out, again) {
			t.Fatalf("round trip changed the store:\n%s\n%s", out, again)
		}
	})
}

package gateway

import (
	"bytes"
	"encoding/json"
	"reflect"
	"strconv"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// FuzzDecodeMeta: whatever decodeMeta reads is what json.Unmarshal makes
// of the same text into an mcp.Meta — the same maps, the same values
// (compared again as JSON, where -0 and 0 differ) — the first time and
// from the cache after, and it reads every plain object a client sends.
func FuzzDecodeMeta(f *testing.F) {
	for _, s := range metaSeeds {
		f.Add(s)
	}
	f.Add(`{"a":-0,"b":[true,false,null,"\u00e9"],"c":{"d":1E+2},"e":"é"}`)
	f.Add(`{"a":01}`)
	f.Add(`{"a":"x\ty"}`)
	f.Add(`{"a":"\xff"}`)
	f.Add("{\"a\":[[[[[[[[[[[[[[[[[[[[]]]]]]]]]]]]]]]]]]]]}\n")
	f.Add(`{} x`)
	f.Fuzz(func(t *testing.T, text string) {
		var c metaCache
		for round := range 2 {
			got, handled := c.decodeMeta([]byte(text))
			if !handled {
				continue
			}
			var want mcp.Meta
			if err := json.Unmarshal([]byte(text), &want); err != nil {
				t.Fatalf("decodeMeta read %q (%#v); encoding/json: %v", text, got, err)
			}
			if !reflect.DeepEqual(got, want) {
				t.Fatalf("round %d, %q: decodeMeta %#v; encoding/json %#v", round, text, got, want)
			}
			gb, _ := json.Marshal(got)
			wb, _ := json.Marshal(want)
			if !bytes.Equal(gb, wb) {
				t.Fatalf("round %d, %q: decodeMeta %s; encoding/json %s", round, text, gb, wb)
			}
			// What a handler writes into its _meta stays its own.
			for _, v := range got {
				switch v := v.(type) {
				case map[string]any:
					v["written"] = true
				case []any:
					if len(v) > 0 {
						v[0] = "written"
					}
				}
			}
		}
	})
}

// TestDecodeMetaReadsClients: the texts clients send are read here, not
// left to encoding/json — else the cache would do nothing.
func TestDecodeMetaReadsClients(t *testing.T) {
	var c metaCache
	for _, s := range []string{metaSeeds[7], metaSeeds[8], metaSeeds[10]} {
		if _, handled := c.decodeMeta([]byte(s)); !handled {
			t.Errorf("not read: %s", s)
		}
	}
	if n := len(c.values); n != 3 {
		t.Errorf("%d object values kept, want 3 (Claude Code's capabilities and info, once for both calls; the other's capabilities)", n)
	}
	// A string with an escape is left to encoding/json.
	if _, handled := c.decodeMeta([]byte(metaSeeds[9])); handled {
		t.Errorf("read: %s", metaSeeds[9])
	}
}

// BenchmarkClaudeCodeMeta reads Claude Code's _meta (a fresh progress
// token and call ID with each call, the 2026-07-28 triple) as the fast
// path did, decoded whole, and as it does now.
//
//	go test ./gateway -run '^$' -bench ClaudeCodeMeta
func BenchmarkClaudeCodeMeta(b *testing.B) {
	texts := make([][]byte, 64)
	for i := range texts {
		texts[i] = []byte(`{"progressToken":` + strconv.Itoa(i+10) + `,"claudecode/toolUseId":"toolu_01AbCdEf` + strconv.Itoa(i) + `","io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":{"elicitation":{"form":{},"url":{}},"roots":{}},"io.modelcontextprotocol/clientInfo":{"name":"claude-code","version":"2.1.332"}}`)
	}
	b.Run("encoding/json", func(b *testing.B) {
		b.ReportAllocs()
		i := 0
		for b.Loop() {
			if _, ok := fastMeta(texts[i%len(texts)]); !ok {
				b.Fatal("not taken")
			}
			i++
		}
	})
	b.Run("decodeMeta", func(b *testing.B) {
		var c metaCache
		b.ReportAllocs()
		i := 0
		for b.Loop() {
			if _, ok := c.read(texts[i%len(texts)]); !ok {
				b.Fatal("not taken")
			}
			i++
		}
	})
}

// FuzzAuditArgs: an audit line's arguments are what json.Unmarshal makes
// of them into a map[string]any, whether decodeObject read them or not.
func FuzzAuditArgs(f *testing.F) {
	f.Add(`{"text":"hello switchboard","n":[1,{"a":null}],"x":-0}`)
	f.Add(`{"a":1e400}`)
	f.Add(`null`)
	f.Add(`{"a":"\u003c"}`)
	f.Fuzz(func(t *testing.T, text string) {
		got, ok := auditArgs([]byte(text))
		var want map[string]any
		wok := text != "" && json.Unmarshal([]byte(text), &want) == nil && want != nil
		if ok != wok {
			t.Fatalf("%q: auditArgs %v, encoding/json %v", text, ok, wok)
		}
		gb, _ := json.Marshal(got)
		wb, _ := json.Marshal(want)
		if ok && (!reflect.DeepEqual(got, want) || !bytes.Equal(gb, wb)) {
			t.Fatalf("%q: auditArgs %s; encoding/json %s", text, gb, wb)
		}
	})
}

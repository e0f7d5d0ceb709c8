package gateway

import (
	"encoding/json"
	"reflect"
	"testing"
)

var metaSeeds = []string{
	`{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":{"elicitation":{"form":{}},"roots":{"listChanged":true}},"io.modelcontextprotocol/clientInfo":{"name":"claude-code","version":"2.1.332"}}`,
	`{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":{}}`,
	`{"io.modelcontextprotocol/protocolVersion":"2025-11-25","io.modelcontextprotocol/clientCapabilities":{}}`,
	`{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":{"x":[1,{"a":null}]}}`,
	`{"progressToken":1}`, `null`, `{`,
	// Claude Code's calls: a fresh progress token (the TypeScript SDK's
	// message ID) and call ID with each, next to the same triple.
	`{"progressToken":7,"claudecode/toolUseId":"toolu_01","io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":{"elicitation":{"form":{}},"roots":{"listChanged":true}},"io.modelcontextprotocol/clientInfo":{"name":"claude-code","version":"2.1.332"}}`,
	`{"progressToken":8,"claudecode/toolUseId":"toolu_02","io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":{"elicitation":{"form":{}},"roots":{"listChanged":true}},"io.modelcontextprotocol/clientInfo":{"name":"claude-code","version":"2.1.332"}}`,
	` { "progressToken" : "t\u0031" , "io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":{"sampling":{}}} `,
	`{"progressToken":1.5,"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":{}}`,
	`{"progressToken":1e400,"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":{}}`,
	`{"progressToken":2,"progressToken":"b","io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":{"a":{}},"io.modelcontextprotocol/clientCapabilities":{"b":{}}}`,
	`{"progressToken":3,"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":{"a":[}]}`,
}

// TestMetaCacheSameAsDecode: what the cache hands out is what fastMeta
// makes of the same text, a first time and every time after, and a call
// that writes into its _meta (top level or nested) changes nothing the
// next call gets.
func TestMetaCacheSameAsDecode(t *testing.T) {
	var c metaCache
	for round := range 3 {
		for _, s := range metaSeeds {
			got, ok := c.read(json.RawMessage(s))
			want, wok := fastMeta(json.RawMessage(s))
			if ok != wok || !reflect.DeepEqual(got, want) {
				t.Fatalf("round %d, %s: cache %v %#v; fastMeta %v %#v", round, s, ok, got, wok, want)
			}
			if got != nil {
				got["progressToken"] = "mine"
				if caps, _ := got["io.modelcontextprotocol/clientCapabilities"].(map[string]any); caps != nil {
					caps["sampling"] = map[string]any{}
					for _, v := range caps {
						if m, _ := v.(map[string]any); m != nil {
							m["written"] = true
						}
					}
				}
			}
		}
	}
}

// TestMetaCacheBounded: texts beyond metaCacheMax start the cache over,
// and a text over metaCacheMaxText is not kept.
func TestMetaCacheBounded(t *testing.T) {
	var c metaCache
	for i := range 3 * metaCacheMax {
		c.read(json.RawMessage(`{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":{"c` + string(rune('a'+i%26)) + string(rune('a'+i/26)) + `":{}}}`))
		if n := len(c.m); n > metaCacheMax {
			t.Fatalf("%d texts kept", n)
		}
	}
	c = metaCache{}
	long := `{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":{"x":{"pad":"` + string(make([]byte, metaCacheMaxText)) + `"}}}`
	c.read(json.RawMessage(long))
	if len(c.m) != 0 {
		t.Fatal("a text over the limit was kept")
	}
}

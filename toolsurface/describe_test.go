package toolsurface

import (
	"encoding/json"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/google/go-cmp/cmp"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

func TestCapDescription(t *testing.T) {
	mb := strings.Repeat("é", 1<<19) // 1 MiB of two-byte runes
	tests := []struct {
		name string
		in   string
		max  int
		want string
	}{
		{"fits", "hello", 10, "hello"},
		{"exactly max runes", "héllo", 5, "héllo"},
		{"cut", "hello world", 5, "hell…"},
		{"multibyte cut on rune boundary", "日本語テキスト", 4, "日本語…"},
		{"max 1", "abc", 1, "…"},
		{"zero uses default", strings.Repeat("a", 3000), 0, strings.Repeat("a", DefaultDescriptionCap-1) + "…"},
		{"1 MB", mb, DefaultDescriptionCap, strings.Repeat("é", DefaultDescriptionCap-1) + "…"},
		{"empty", "", 5, ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := CapDescription(tt.in, tt.max)
			if diff := cmp.Diff(tt.want, got); diff != "" {
				t.Errorf("CapDescription (-want +got):\n%s", diff)
			}
			max := tt.max
			if max <= 0 {
				max = DefaultDescriptionCap
			}
			if n := utf8.RuneCountInString(got); n > max {
				t.Errorf("got %d runes, cap %d", n, max)
			}
			if !utf8.ValidString(got) {
				t.Errorf("cut produced invalid UTF-8")
			}
		})
	}
}

func TestNormalizeSchema(t *testing.T) {
	empty := map[string]any{"type": "object", "properties": map[string]any{}}
	tests := []struct {
		name string
		in   any
		want map[string]any
	}{
		{"nil", nil, empty},
		{"true", json.RawMessage(`true`), empty},
		{"false", json.RawMessage(`false`), empty},
		{"bool value", true, empty},
		{"null", json.RawMessage(`null`), empty},
		{"array", json.RawMessage(`[1,2]`), empty},
		{"string", json.RawMessage(`"object"`), empty},
		{"garbage", json.RawMessage(`{"type":`), empty},
		{"trailing garbage", []byte(`{} {}`), empty},
		{"empty object", json.RawMessage(`{}`), empty},
		{"type string", json.RawMessage(`{"type":"string"}`), empty},
		{"type list with object", json.RawMessage(`{"type":["object","null"],"properties":{"a":{"type":"string"}}}`),
			map[string]any{"type": "object", "properties": map[string]any{"a": map[string]any{"type": "string"}}}},
		{"type list without object", json.RawMessage(`{"type":["string","null"]}`), empty},
		{"type number", json.RawMessage(`{"type":5}`), empty},
		{"properties not object", json.RawMessage(`{"type":"object","properties":[1]}`), empty},
		{"missing type kept rest", map[string]any{"properties": map[string]any{"q": map[string]any{"type": "string"}}, "required": []string{"q"}},
			map[string]any{"type": "object", "properties": map[string]any{"q": map[string]any{"type": "string"}}, "required": []any{"q"}}},
		{"required not array", json.RawMessage(`{"type":"object","properties":{},"required":"q"}`), empty},
		{"required non-strings dropped", json.RawMessage(`{"type":"object","properties":{},"required":["a",1,null,"b"]}`),
			map[string]any{"type": "object", "properties": map[string]any{}, "required": []any{"a", "b"}}},
		{"numbers exact", json.RawMessage(`{"type":"object","properties":{"n":{"type":"integer","maximum":9007199254740993}}}`),
			map[string]any{"type": "object", "properties": map[string]any{"n": map[string]any{"type": "integer", "maximum": json.Number("9007199254740993")}}}},
		{"other keywords kept", json.RawMessage(`{"$schema":"x","type":"object","properties":{},"additionalProperties":false}`),
			map[string]any{"$schema": "x", "type": "object", "properties": map[string]any{}, "additionalProperties": false}},
		{"unmarshalable", func() {}, empty},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if diff := cmp.Diff(tt.want, NormalizeSchema(tt.in)); diff != "" {
				t.Errorf("NormalizeSchema (-want +got):\n%s", diff)
			}
		})
	}
}

func TestNormalizeSchemaDoesNotMutate(t *testing.T) {
	in := map[string]any{"required": "x"}
	out := NormalizeSchema(in)
	out["properties"].(map[string]any)["p"] = 1
	if diff := cmp.Diff(map[string]any{"required": "x"}, in); diff != "" {
		t.Errorf("input mutated (-want +got):\n%s", diff)
	}
}

func TestEstimateTokens(t *testing.T) {
	tests := []struct {
		in   string
		want int
	}{{"", 0}, {"a", 1}, {"abcd", 1}, {"abcde", 2}, {strings.Repeat("x", 80_000), 20_000}}
	for _, tt := range tests {
		if got := EstimateTokens(tt.in); got != tt.want {
			t.Errorf("EstimateTokens(len %d) = %d, want %d", len(tt.in), got, tt.want)
		}
	}
}

func TestToolBlockTokens(t *testing.T) {
	small := &mcp.Tool{Name: "echo", Description: "Echo the input.", InputSchema: map[string]any{"type": "object"}}
	// {"name":"echo","description":"Echo the input.","input_schema":{"properties":{},"type":"object"}}
	const smallJSON = `{"name":"echo","description":"Echo the input.","input_schema":{"properties":{},"type":"object"}}`
	huge := &mcp.Tool{Name: "big", Description: strings.Repeat("d", 1<<20), InputSchema: true}
	tests := []struct {
		name  string
		tools []*mcp.Tool
		want  int
	}{
		{"none", nil, 0},
		{"nil entry", []*mcp.Tool{nil}, 0},
		{"one", []*mcp.Tool{small}, EstimateTokens(smallJSON)},
		{"two", []*mcp.Tool{small, small}, 2 * EstimateTokens(smallJSON)},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if diff := cmp.Diff(tt.want, ToolBlockTokens(tt.tools)); diff != "" {
				t.Errorf("ToolBlockTokens (-want +got):\n%s", diff)
			}
		})
	}
	// A 1 MB description costs what its capped form costs, not 260k tokens.
	if got := ToolBlockTokens([]*mcp.Tool{huge}); got > DefaultDescriptionCap/4+50 {
		t.Errorf("ToolBlockTokens(1 MB description) = %d, want it capped", got)
	}
}

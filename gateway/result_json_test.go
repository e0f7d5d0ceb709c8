package gateway

import (
	"bytes"
	"reflect"
	"strings"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

var jsonStringSeeds = []string{"", "hello", `a "quoted" \ back`, "<b>&amp;</b>", "line\nbreak\ttab\r\b\f",
	"\x00\x01\x1f\x7f", "é ü 日本", "\u2028\u2029", "bad \xff\xfe utf8 \xe2\x80", "emoji 🎉"}

// FuzzPlainResult: a plain result is written byte for byte as the SDK's
// CallToolResult.MarshalJSON writes it.
func FuzzPlainResult(f *testing.F) {
	for _, s := range jsonStringSeeds {
		f.Add(s, uint8(1), false)
	}
	f.Add("", uint8(0), true)
	f.Add("x", uint8(3), true)
	f.Fuzz(func(t *testing.T, text string, n uint8, isError bool) {
		res := &mcp.CallToolResult{Content: []mcp.Content{}, IsError: isError}
		for i := range int(n % 4) {
			res.Content = append(res.Content, &mcp.TextContent{Text: strings.Repeat(text, i+1)})
		}
		got, ok := appendPlainResult(nil, res)
		if !ok {
			t.Fatalf("%+v is not plain", res)
		}
		want, err := res.MarshalJSON()
		if err != nil {
			t.Fatal(err)
		}
		if !bytes.Equal(got, want) {
			t.Fatalf("appendPlainResult wrote %s; the SDK writes %s", got, want)
		}
		// The same result answered on 2026-07-28 (the server's info in
		// its _meta, its resultType): written directly, and as encoded
		// through the SDK's MarshalJSON.
		g := &Gateway{opts: Options{Name: "switchboard <&>", Version: text}}
		mrt, ok := g.annotated(res).(mrtResult)
		if !ok || mrt.meta == nil {
			t.Fatalf("annotated(%+v) = %#v; want an mrtResult with the meta's JSON", res, mrt)
		}
		fast, err := mrt.MarshalJSON()
		mrt.meta = nil
		slow, err2 := mrt.MarshalJSON()
		if err != nil || err2 != nil || !bytes.Equal(fast, slow) {
			t.Fatalf("the 2026-07-28 answer written directly: %s (%v); through the SDK's encoder: %s (%v)", fast, err, slow, err2)
		}
	})
}

// TestPlainResultKnowsTheSDK: the SDK still has the field a result's type
// is kept in, and every result that is not plain is left to the SDK's
// encoding — among them one whose type came with it from a server.
func TestPlainResultKnowsTheSDK(t *testing.T) {
	if resultTypeField < 0 {
		t.Fatal("mcp.CallToolResult has no string field resultType: the SDK changed; appendPlainResult takes nothing now, update it")
	}
	// appendPlainResult knows every field the SDK's encoder may write; a
	// field a later SDK adds must be looked at before it is trusted.
	for _, c := range []struct {
		t    reflect.Type
		want string
	}{
		{reflect.TypeFor[mcp.CallToolResult](), "Meta Content StructuredContent IsError InputRequests RequestState resultType err"},
		{reflect.TypeFor[mcp.TextContent](), "Text Meta Annotations"},
	} {
		var names []string
		for i := range c.t.NumField() {
			names = append(names, c.t.Field(i).Name)
		}
		if got := strings.Join(names, " "); got != c.want {
			t.Errorf("%v has the fields %q, appendPlainResult was written for %q: check what MarshalJSON writes of the new ones", c.t, got, c.want)
		}
	}
	typed := new(mcp.CallToolResult)
	if err := typed.UnmarshalJSON([]byte(`{"content":[{"type":"text","text":"x"}],"resultType":"complete"}`)); err != nil {
		t.Fatal(err)
	}
	if data, _ := typed.MarshalJSON(); !bytes.Contains(data, []byte(`"resultType":"complete"`)) {
		t.Fatalf("the SDK writes %s: no resultType", data)
	}
	text := func() *mcp.TextContent { return &mcp.TextContent{Text: "x"} }
	for name, res := range map[string]*mcp.CallToolResult{
		"a result type":      typed,
		"nil":                nil,
		"no content":         {},
		"_meta":              {Content: []mcp.Content{text()}, Meta: mcp.Meta{"k": 1}},
		"structured content": {Content: []mcp.Content{text()}, StructuredContent: map[string]any{"a": 1}},
		"request state":      {Content: []mcp.Content{text()}, RequestState: "s"},
		"input requests":     {Content: []mcp.Content{text()}, InputRequests: mcp.InputRequestMap{}},
		"an image":           {Content: []mcp.Content{text(), &mcp.ImageContent{Data: []byte{1}, MIMEType: "image/png"}}},
		"text with _meta":    {Content: []mcp.Content{&mcp.TextContent{Text: "x", Meta: mcp.Meta{"k": 1}}}},
		"annotated text":     {Content: []mcp.Content{&mcp.TextContent{Text: "x", Annotations: &mcp.Annotations{Priority: 1}}}},
		"a nil text":         {Content: []mcp.Content{(*mcp.TextContent)(nil)}},
	} {
		if out, ok := appendPlainResult([]byte("keep"), res); ok || string(out) != "keep" {
			t.Errorf("%s: appendPlainResult took it (%s)", name, out)
		}
	}
	// What the fast path writes for any result is the SDK's.
	for _, res := range []*mcp.CallToolResult{typed, {Content: []mcp.Content{text()}, StructuredContent: map[string]any{"a": "<b>"}, IsError: true}} {
		got, err := appendResult(nil, res)
		want, _ := res.MarshalJSON()
		if err != nil || !bytes.Equal(got, want) {
			t.Errorf("appendResult = %s, %v; the SDK writes %s", got, err, want)
		}
	}
}

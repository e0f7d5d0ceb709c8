package gateway_test

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/switchboard-mcp/switchboard/config"
	"github.com/switchboard-mcp/switchboard/gateway"
	"github.com/switchboard-mcp/switchboard/host"
	"github.com/switchboard-mcp/switchboard/toolsurface"
)

// tool_search's results name tools as the host does; the gateway renames
// each to its served name, every occurrence, once: a served name that is
// itself another tool's host name is not renamed again.
func TestRenameFound(t *testing.T) {
	servedOf := map[string]string{
		"mcp__a__x": "a__x",
		"mcp__b__y": "mcp__a__x", // a served name equal to another host name
		"mcp__c__z": "mcp__c__z", // served as is
	}
	rename := gateway.FoundRenamer(servedOf)
	for _, tc := range []struct{ in, want string }{
		{`[{"name":"mcp__a__x","d":1},{"name":"mcp__b__y"}]`, `[{"name":"a__x","d":1},{"name":"mcp__a__x"}]`},
		{`{"name":"mcp__c__z"} {"name":"mcp__a__x"} {"name":"mcp__a__x"}`, `{"name":"mcp__c__z"} {"name":"a__x"} {"name":"a__x"}`},
		{`{"name":"mcp__a__xy"} "mcp__a__x" {"name": "mcp__a__x"}`, `{"name":"mcp__a__xy"} "mcp__a__x" {"name": "mcp__a__x"}`}, // not a whole name, not a name field
	} {
		if got := rename(tc.in); got != tc.want {
			t.Errorf("RenameFound(%s)\n got %s\nwant %s", tc.in, got, tc.want)
		}
	}
	if got := gateway.FoundRenamer(nil)(`{"name":"x"}`); got != `{"name":"x"}` {
		t.Errorf("with no names: %s", got)
	}
}

// BenchmarkRenameFound: renaming a tool_search result of five tools among
// 10,000 (per call), and building the renamer (per tool sync).
//
//	go test ./gateway -run '^$' -bench RenameFound -count 6
func BenchmarkRenameFound(b *testing.B) {
	servedOf := map[string]string{}
	for i := range 10000 {
		servedOf[fmt.Sprintf("mcp__srv%03d__tool%02d", i/100, i%100)] = fmt.Sprintf("srv%03d__tool%02d", i/100, i%100)
	}
	var sb strings.Builder
	sb.WriteString("[")
	for i := range 5 {
		fmt.Fprintf(&sb, `{"name":"mcp__srv%03d__tool%02d","description":"does a thing with a %d and reports it","inputSchema":{"type":"object"}},`, i*7, i*3, i)
	}
	sb.WriteString("]")
	text := sb.String()
	b.Run("call", func(b *testing.B) {
		rename := gateway.FoundRenamer(servedOf)
		b.ReportAllocs()
		for b.Loop() {
			if !strings.Contains(rename(text), `"srv000__tool00"`) {
				b.Fatal("not renamed")
			}
		}
	})
	b.Run("sync", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			gateway.FoundRenamer(servedOf)
		}
	})
}

// Through a gateway, tool_search finds deferred tools by their host names
// and names them as the gateway serves them; a select: of served names
// loads them.
func TestToolSearchServedNames(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	mods, err := toolsurface.ParseToolModifiers("Defer(mcp__echo__*)")
	if err != nil {
		t.Fatal(err)
	}
	sb := openSB(t, []config.ResolvedServer{stdio("echo", "echo")}, func(ho *host.Options) {
		ho.CloseGrace, ho.ToolModifiers = 500*time.Millisecond, mods
	})
	g := gateway.New(sb, &gateway.Options{FirstSyncWait: 30 * time.Second})
	defer g.Close()
	ct, st := mcp.NewInMemoryTransports()
	ss, err := g.Server().Connect(ctx, st, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer ss.Close()
	cs, err := mcp.NewClient(&mcp.Implementation{Name: "t", Version: "1"}, &mcp.ClientOptions{Capabilities: &mcp.ClientCapabilities{}}).Connect(ctx, ct, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer cs.Close()
	for _, q := range []string{"add two numbers", "select:echo__add"} {
		res, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: "tool_search", Arguments: map[string]any{"query": q, "limit": 1}})
		if err != nil || res.IsError {
			t.Fatalf("%q: %v %v", q, err, res)
		}
		text := res.Content[0].(*mcp.TextContent).Text
		// (The text may quote the query as the host ran it, host names and all.)
		if !strings.Contains(text, `{"name":"echo__add"`) || strings.Contains(text, `{"name":"mcp__echo__add"`) {
			t.Errorf("%q: the result does not name echo__add as served:\n%s", q, text)
		}
	}
}

// FuzzRenameFound: renaming never panics, touches nothing but name
// fields (their count is kept, and a text without one is returned as
// is), and leaves no host name of the map in a name field.
func FuzzRenameFound(f *testing.F) {
	servedOf := map[string]string{"mcp__a__x": "a__x", "mcp__b__y": "mcp__a__x", "mcp__a__x2": "a__x2"}
	rename := gateway.FoundRenamer(servedOf)
	f.Add(`[{"name":"mcp__a__x"},{"name":"mcp__b__y"}]`)
	f.Add(`{"name":"mcp__a__x2"}{"name":"mcp__a__x"`)
	f.Add(`no names`)
	f.Fuzz(func(t *testing.T, text string) {
		got := rename(text)
		const field = `{"name":"`
		if strings.Count(got, field) != strings.Count(text, field) {
			t.Fatalf("name fields %d -> %d: %q -> %q", strings.Count(text, field), strings.Count(got, field), text, got)
		}
		if !strings.Contains(text, field) && got != text {
			t.Fatalf("changed a text without name fields: %q -> %q", text, got)
		}
		for h, s := range servedOf {
			if strings.Contains(got, field+h+`"`) && !strings.Contains(text, field+field) && !isServed(servedOf, h) {
				t.Fatalf("host name %s (served as %s) left in %q (from %q)", h, s, got, text)
			}
		}
	})
}

// isServed reports whether name is also some tool's served name (then it
// may rightly appear after renaming).
func isServed(servedOf map[string]string, name string) bool {
	for _, s := range servedOf {
		if s == name {
			return true
		}
	}
	return false
}

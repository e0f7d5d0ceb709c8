package cli

import (
	"encoding/json"
	"strings"
	"testing"
)

// --tools modifiers reach the host: `tools` marks deferred tools, lists
// tool_search, and a bad value is a usage error of one line.
func TestToolsModifiersFlag(t *testing.T) {
	w := demoWorld(t)
	t.Run("json marks deferred tools", func(t *testing.T) {
		out, stderr, code := w.run(false, "--tools", "default,Defer(mcp__echo__*),NoDefer(mcp__echo__add)", "tools", "--server", "echo", "--json")
		if code != 0 {
			t.Fatalf("exit %d; stderr:\n%s", code, stderr)
		}
		var tools []struct {
			Name     string `json:"name"`
			Server   string `json:"server"`
			Deferred bool   `json:"deferred"`
		}
		if err := json.Unmarshal([]byte(out), &tools); err != nil {
			t.Fatal(err)
		}
		got := map[string]bool{}
		for _, tl := range tools {
			got[tl.Name] = tl.Deferred
		}
		if d, ok := got["mcp__echo__add"]; !ok || d {
			t.Errorf("mcp__echo__add: listed %v, deferred %v; want listed, not deferred (NoDefer wins)", ok, d)
		}
		if d, ok := got["mcp__echo__echo"]; !ok || !d {
			t.Errorf("mcp__echo__echo: listed %v, deferred %v; want listed as deferred", ok, d)
		}
		if d, ok := got["tool_search"]; !ok || d {
			t.Errorf("tool_search: listed %v, deferred %v", ok, d)
		}
	})
	t.Run("table has a deferred column", func(t *testing.T) {
		out, stderr, code := w.run(false, "--tools", "Defer(mcp__echo__echo)", "tools", "--server", "echo")
		if code != 0 {
			t.Fatalf("exit %d; stderr:\n%s", code, stderr)
		}
		// Piped, deferred is the fifth column, after the description.
		for _, want := range []string{`(?m)^mcp__echo__echo\techo\tallow\t[^\t]*\tyes$`, `(?m)^mcp__echo__add\techo\tallow\t[^\t]*\tno$`, `(?m)^tool_search\t\(built-in\)\t-\t[^\t]*\tno$`} {
			if !regexpMatch(want, out) {
				t.Errorf("stdout lacks %q:\n%s", want, out)
			}
		}
	})
	t.Run("status counts deferred tools", func(t *testing.T) {
		out, stderr, code := w.run(false, "--tools", "Defer(mcp__echo__*),NoDefer(mcp__echo__add)", "status")
		if code != 0 {
			t.Fatalf("exit %d; stderr:\n%s", code, stderr)
		}
		var echoRow string
		for _, line := range strings.Split(out, "\n") {
			if strings.HasPrefix(line, "echo\t") {
				echoRow = line
			}
		}
		fields := strings.Split(echoRow, "\t")
		if len(fields) < 5 || !strings.HasSuffix(fields[4], " deferred)") || strings.Contains(fields[4], "(0 ") {
			t.Errorf("echo row %q: want its tools cell to say how many are deferred", echoRow)
		}
	})
	t.Run("no modifiers, no column", func(t *testing.T) {
		out, _, _ := w.run(false, "tools", "--server", "echo")
		if strings.Contains(out, "tool_search") || strings.Contains(out, "\tyes\n") {
			t.Errorf("nothing deferred, yet:\n%s", out)
		}
	})
	t.Run("a bad value exits 2", func(t *testing.T) {
		_, stderr, code := w.run(false, "--tools", "Defer(mcp__git*)", "tools")
		if code != 2 || !strings.Contains(stderr, "* may only replace a whole last segment") || !strings.Contains(stderr, "hint: e.g. --tools") {
			t.Errorf("exit %d, stderr %q", code, stderr)
		}
	})
}

// `call tool_search` searches the deferred tools of every server.
func TestCallToolSearch(t *testing.T) {
	w := demoWorld(t)
	out, stderr, code := w.run(false, "--tools", "Defer(mcp__echo__*)", "call", "tool_search", `{"query":"add two numbers","limit":1}`)
	if code != 0 {
		t.Fatalf("exit %d; stderr:\n%s", code, stderr)
	}
	if !strings.Contains(out, `"name":"mcp__echo__add"`) || !strings.HasPrefix(out, `<mcp_response server="switchboard" tool="tool_search"`) {
		t.Errorf("stdout:\n%s", out)
	}
}

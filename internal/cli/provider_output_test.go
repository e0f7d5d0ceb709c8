package cli

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
)

// TestToolsProviderGolden: `tools --provider P --json` prints the tools in
// provider P's own shape; without --json it prints the same JSON.
func TestToolsProviderGolden(t *testing.T) {
	w := newRTWorld(t)
	w.userServers(map[string]any{"demo": w.server("demo")})
	for _, p := range []string{"openai", "anthropic", "gemini"} {
		t.Run(p, func(t *testing.T) {
			out, stderr, code := w.run(false, "tools", "--server", "demo", "--provider", p, "--json")
			if code != 0 {
				t.Fatalf("exit %d; stderr:\n%s", code, stderr)
			}
			golden(t, "tools_demo_"+p, w.mask(out))
			var tools []map[string]any
			if err := json.Unmarshal([]byte(out), &tools); err != nil || len(tools) == 0 {
				t.Fatalf("not a JSON array of tools (%v):\n%s", err, out)
			}
			key := map[string]string{"openai": "function", "anthropic": "input_schema", "gemini": "name"}[p]
			for _, tool := range tools {
				if _, ok := tool[key]; !ok {
					t.Errorf("%s tool lacks %q: %v", p, key, tool)
				}
			}
			plain, _, code := w.run(true, "tools", "--server", "demo", "--provider", p)
			if code != 0 || plain != out {
				t.Errorf("without --json: exit %d, output differs:\n%s", code, plain)
			}
		})
	}
	t.Run("unknown provider", func(t *testing.T) {
		_, stderr, code := w.run(false, "tools", "--provider", "cohere")
		if code != ExitUsage || !strings.Contains(stderr, `unknown provider "cohere": use openai, anthropic or gemini`) {
			t.Errorf("exit %d, stderr %q", code, stderr)
		}
	})
}

// largeWorld has the echo server, allowed to run, for large results.
func largeWorld(t *testing.T) *rtWorld {
	w := newRTWorld(t)
	w.userServers(map[string]any{"echo": w.server("echo")})
	w.writeJSON(filepath.Join(w.sb, "settings.json"), map[string]any{"permissions": map[string]any{"allow": []string{"mcp__echo"}}})
	return w
}

// runEnv runs a command line with extra environment variables.
func (w *rtWorld) runEnv(env map[string]string, args ...string) (stdout, stderr string, code int) {
	w.t.Helper()
	f, _, out, errOut := w.factory(false)
	base := f.Getenv
	f.Getenv = func(k string) (string, bool) {
		if v, ok := env[k]; ok {
			return v, true
		}
		return base(k)
	}
	code = Run(context.Background(), f, args)
	return out.String(), errOut.String(), code
}

// TestCallLargeOutput: `call` prints what a model gets for a large result:
// a guide to the spill file under the Switchboard home, or the truncated
// text when files are switched off.
func TestCallLargeOutput(t *testing.T) {
	w := largeWorld(t)
	spillRE := regexp.MustCompile(`File: (\S+[/\\]tool-results[/\\][^/\\]+[/\\][^/\\]+[/\\]mcp-echo-big-\S+\.txt)`)

	t.Run("spill", func(t *testing.T) {
		out, stderr, code := w.runEnv(map[string]string{"MAX_MCP_OUTPUT_TOKENS": "1000"}, "call", "mcp__echo__big", `{"bytes":50000}`)
		if code != 0 || stderr != "" {
			t.Fatalf("exit %d; stderr:\n%s", code, stderr)
		}
		m := spillRE.FindStringSubmatch(out)
		if m == nil || !strings.HasPrefix(m[1], w.sb) {
			t.Fatalf("no guide to a file under %s:\n%s", w.sb, out)
		}
		data, err := os.ReadFile(m[1])
		if err != nil || len(data) != 50000 || !strings.HasPrefix(string(data), "line 000000 ") {
			t.Errorf("spill file: %d bytes, %v", len(data), err)
		}
		if !strings.Contains(out, "over the 1000-token limit") || len(out) > 5000 {
			t.Errorf("guide of %d bytes:\n%s", len(out), out)
		}
	})
	t.Run("json envelope is the guide", func(t *testing.T) {
		out, _, code := w.runEnv(map[string]string{"MAX_MCP_OUTPUT_TOKENS": "1000"}, "call", "mcp__echo__big", `{"bytes":50000}`, "--json")
		var got struct {
			Content  []json.RawMessage `json:"content"`
			Envelope string            `json:"envelope"`
		}
		if err := json.Unmarshal([]byte(out), &got); err != nil || code != 0 {
			t.Fatalf("exit %d, %v", code, err)
		}
		if !spillRE.MatchString(got.Envelope) || len(got.Content) != 1 {
			t.Errorf("envelope %q, %d content blocks", got.Envelope, len(got.Content))
		}
	})
	t.Run("files disabled", func(t *testing.T) {
		out, _, code := w.runEnv(map[string]string{"MAX_MCP_OUTPUT_TOKENS": "1000", "SWITCHBOARD_DISABLE_MCP_LARGE_OUTPUT_FILES": "1"}, "call", "mcp__echo__big", `{"bytes":50000}`)
		if code != 0 || !strings.Contains(out, "\n[OUTPUT TRUNCATED - exceeded 1000 token limit]\n</mcp_response>") || spillRE.MatchString(out) {
			t.Errorf("exit %d:\n%s", code, out)
		}
	})
	t.Run("bad limit warns and uses the default", func(t *testing.T) {
		out, stderr, code := w.runEnv(map[string]string{"MAX_MCP_OUTPUT_TOKENS": "lots"}, "call", "mcp__echo__big", `{"bytes":50000}`)
		if code != 0 || stderr != "warning: MAX_MCP_OUTPUT_TOKENS=\"lots\" is not a positive whole number of tokens; using 20000\n" {
			t.Errorf("exit %d, stderr %q", code, stderr)
		}
		if !strings.Contains(out, "line 000892 the quick brown fox jumps over the l\n</mcp_response>") || strings.Contains(out, "TRUNCATED") {
			t.Errorf("a 50 KB result under the default limit was not shown whole: %d bytes\n%.300s", len(out), out[max(0, len(out)-300):])
		}
	})
}

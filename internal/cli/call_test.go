package cli

import (
	"context"
	"encoding/json"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// demoWorld configures the bundled demo server, and the echo server for
// the tools the demo does not have (errors, progress, elicitation), in the
// user file.
func demoWorld(t *testing.T) *rtWorld {
	w := newRTWorld(t)
	w.userServers(map[string]any{
		"demo":   w.server("demo"),
		"echo":   w.server("echo"),
		"broken": w.server("exit-init"),
	})
	// Calls need permission; these tests are about calls, not rules.
	w.writeJSON(filepath.Join(w.sb, "settings.json"), map[string]any{"permissions": map[string]any{"allow": []string{"mcp__demo", "mcp__echo"}}})
	return w
}

func TestToolsJSONGolden(t *testing.T) {
	w := demoWorld(t)
	out, stderr, code := w.run(false, "tools", "--server", "demo", "--json")
	if code != 0 {
		t.Fatalf("exit %d; stderr:\n%s", code, stderr)
	}
	golden(t, "tools_demo_json", w.mask(out))

	var tools []map[string]any
	if err := json.Unmarshal([]byte(out), &tools); err != nil {
		t.Fatal(err)
	}
	for _, tool := range tools {
		for _, k := range []string{"name", "server", "tool", "description", "inputSchema"} {
			if _, ok := tool[k]; !ok {
				t.Errorf("tool %v has no key %q", tool["name"], k)
			}
		}
	}
}

func TestToolsTable(t *testing.T) {
	w := demoWorld(t)
	out, stderr, code := w.run(true, "tools", "--server", "demo")
	if code != 0 {
		t.Fatalf("exit %d; stderr:\n%s", code, stderr)
	}
	golden(t, "tools_demo_tty", out)

	t.Run("all servers, one not connected", func(t *testing.T) {
		out, stderr, code := w.run(false, "tools")
		if code != 0 {
			t.Fatalf("exit %d; stderr:\n%s", code, stderr)
		}
		for _, want := range []string{"mcp__demo__word_count\tdemo\t", "mcp__echo__echo\techo\t"} {
			if !strings.Contains(out, want) {
				t.Errorf("stdout lacks %q:\n%s", want, out)
			}
		}
		if strings.Contains(out, "broken") {
			t.Errorf("a server in error has tools listed:\n%s", out)
		}
	})
	t.Run("--server naming a server in error exits 1", func(t *testing.T) {
		_, stderr, code := w.run(false, "tools", "--server", "broken")
		if code != 1 || !strings.Contains(stderr, "error: server broken failed:") {
			t.Errorf("exit %d, stderr %q; want 1 and the reason", code, stderr)
		}
	})
	t.Run("--server naming no server exits 1", func(t *testing.T) {
		_, stderr, code := w.run(false, "tools", "--server", "nope")
		if code != 1 || !strings.Contains(stderr, `no server named "nope"`) || !strings.Contains(stderr, "hint: configured servers: broken, demo, echo") {
			t.Errorf("exit %d, stderr %q", code, stderr)
		}
	})
}

func TestCallGolden(t *testing.T) {
	w := demoWorld(t)
	args := `{"text":"Hello from\nthe call test."}`
	out, stderr, code := w.run(false, "call", "mcp__demo__word_count", args)
	if code != 0 || stderr != "" {
		t.Fatalf("exit %d; stderr:\n%s", code, stderr)
	}
	golden(t, "call_word_count", out)

	out, stderr, code = w.run(false, "call", "mcp__demo__word_count", args, "--json")
	if code != 0 || stderr != "" {
		t.Fatalf("exit %d; stderr:\n%s", code, stderr)
	}
	golden(t, "call_word_count_json", out)
	var got map[string]any
	if err := json.Unmarshal([]byte(out), &got); err != nil {
		t.Fatal(err)
	}
	for _, k := range []string{"isError", "content", "envelope"} {
		if _, ok := got[k]; !ok {
			t.Errorf("call --json has no key %q", k)
		}
	}
}

func TestCallExitCodes(t *testing.T) {
	w := demoWorld(t)
	for _, tc := range []struct {
		name       string
		args       []string
		code       int
		stdout     string // substring
		stderr     string // substring
		noStartErr bool
	}{
		{name: "success", args: []string{"call", "mcp__demo__echo", `{"text":"hi"}`}, code: 0,
			stdout: "<mcp_response server=\"demo\" tool=\"echo\" trust=\"untrusted\">\nhi\n</mcp_response>\n"},
		{name: "args default to {}", args: []string{"call", "mcp__demo__roll_dice"}, code: 0,
			stdout: "rolled 2d6 (seed 42)"},
		{name: "isError result", args: []string{"call", "mcp__echo__error_result", `{"message":"no such file"}`}, code: 1,
			stdout: `is_error="true">` + "\nno such file\n", stderr: "error: mcp__echo__error_result returned an error result\n"},
		{name: "isError result --json", args: []string{"call", "mcp__echo__error_result", "--json"}, code: 1,
			stdout: `"isError": true`},
		{name: "unknown tool of a known server", args: []string{"call", "mcp__demo__nope"}, code: 1,
			stderr: "hint: run `switchboard tools` for the tool names"},
		{name: "unknown server", args: []string{"call", "mcp__nowhere__x"}, code: 1, stderr: "unknown tool"},
		{name: "not a tool name", args: []string{"call", "echo"}, code: 2, stderr: "mcp__<server>__<tool>"},
		{name: "a gateway's name for a tool", args: []string{"call", "demo__echo", `{"text":"x"}`}, code: 2,
			stderr: "hint: a gateway's clients see <server>__<tool>; here tools are mcp__<server>__<tool>: try mcp__demo__echo"},
		{name: "invalid JSON names the position", args: []string{"call", "mcp__demo__echo", "{\n  \"text\": hi}"}, code: 2,
			stderr: "error: invalid JSON arguments at line 2, column 11: invalid character 'h' looking for beginning of value\n"},
		{name: "truncated JSON", args: []string{"call", "mcp__demo__echo", `{"text":`}, code: 2,
			stderr: "invalid JSON arguments at line 1, column 9: unexpected end of input"},
		{name: "not an object", args: []string{"call", "mcp__demo__echo", `["hi"]`}, code: 2,
			stderr: "tool arguments must be a JSON object, not an array"},
		{name: "server in error", args: []string{"call", "mcp__broken__echo"}, code: 1,
			stderr: "hint: run `switchboard status` to see why"},
		{name: "too many arguments", args: []string{"call", "a", "{}", "c"}, code: 2},
		{name: "--arg typed by the schema", args: []string{"call", "mcp__demo__add", "--arg", "a=2", "--arg", "b=0.5"}, code: 0,
			stdout: "\n2 + 0.5 = 2.5\n"},
		{name: "--arg over JSON args", args: []string{"call", "mcp__demo__add", `{"a":1,"b":1}`, "--arg", "b=41"}, code: 0,
			stdout: "\n1 + 41 = 42\n"},
		{name: "--arg string", args: []string{"call", "mcp__demo__echo", "--arg", "text=2 + 2 = 4"}, code: 0,
			stdout: "\n2 + 2 = 4\n"},
		{name: "--arg of the wrong type", args: []string{"call", "mcp__demo__add", "--arg", "a=two"}, code: 2,
			stderr: "error: invalid --arg a: \"two\" is not a JSON number\nhint: the tool's schema declares a as number\n"},
		{name: "--arg without =", args: []string{"call", "mcp__demo__add", "--arg", "a"}, code: 2,
			stderr: `invalid --arg "a"`},
		{name: "NAME=VALUE words are shown with --arg", args: []string{"call", "mcp__demo__add", "a=2", "b=2 + 1"}, code: 2,
			stderr: "NAME=VALUE arguments go with --arg\nhint: switchboard call mcp__demo__add --arg a=2 --arg 'b=2 + 1'\n"},
		{name: "JSON with an = in it is JSON", args: []string{"call", "mcp__demo__echo", `{"text":"a=b"}`}, code: 0,
			stdout: "\na=b\n"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			out, stderr, code := w.run(false, tc.args...)
			if code != tc.code {
				t.Errorf("exit %d, want %d; stdout %q; stderr %q", code, tc.code, out, stderr)
			}
			if !strings.Contains(out, tc.stdout) {
				t.Errorf("stdout %q lacks %q", out, tc.stdout)
			}
			if !strings.Contains(stderr, tc.stderr) {
				t.Errorf("stderr %q lacks %q", stderr, tc.stderr)
			}
		})
	}
}

// TestCallProgress checks that progress notifications show on a
// terminal's stderr while the call runs.
func TestCallProgress(t *testing.T) {
	w := demoWorld(t)
	f, _, out, errOut := w.factory(false)
	opts := &CallOptions{runtimeOptions: rtOptions(f), Name: "mcp__echo__slow", Args: `{"ms":800,"steps":4}`}
	opts.ErrTTY = true
	if err := callRun(context.Background(), opts); err != nil {
		t.Fatalf("%v; stderr %q", err, errOut)
	}
	if !strings.Contains(out.String(), `<mcp_response server="echo" tool="slow"`) {
		t.Errorf("stdout = %q", out)
	}
	if !regexpMatch(`\r\x1b\[Kcalling mcp__echo__slow \([^)]*\)… \d/4`, errOut.String()) {
		t.Errorf("no progress on stderr: %q", errOut)
	}
}

// TestCallTaskProgress: a tool that runs as an MCP task completes, and
// the task's status messages show on a terminal as the call's progress.
func TestCallTaskProgress(t *testing.T) {
	w := newRTWorld(t)
	w.userServers(map[string]any{"jobs": w.server("tasks", "-stage", "400ms")})
	w.writeJSON(filepath.Join(w.sb, "settings.json"), map[string]any{"permissions": map[string]any{"allow": []string{"mcp__jobs"}}})
	f, _, out, errOut := w.factory(false)
	opts := &CallOptions{runtimeOptions: rtOptions(f), Name: "mcp__jobs__work", Args: `{"text":"done by a task","stages":2}`}
	opts.ErrTTY = true
	if err := callRun(context.Background(), opts); err != nil {
		t.Fatalf("%v; stderr %q", err, errOut)
	}
	if !strings.Contains(out.String(), "worked: done by a task") {
		t.Errorf("stdout = %q", out)
	}
	if !regexpMatch(`\r\x1b\[Kcalling mcp__jobs__work \([^)]*\)… \d stage \d of 2`, errOut.String()) {
		t.Errorf("no task status on stderr: %q", errOut)
	}
}

// TestCallStartsOnlyItsServer: a call starts the server its name points
// at, not every configured one.
func TestCallStartsOnlyItsServer(t *testing.T) {
	w := demoWorld(t)
	f, _, _, _ := w.factory(false)
	o := rtOptions(f)
	cfg, err := o.Config()
	if err != nil {
		t.Fatal(err)
	}
	var kept []string
	for _, rs := range cfg.Servers {
		if toolCandidate("mcp__demo__echo")(rs) {
			kept = append(kept, rs.Name)
		}
	}
	if diff := cmp.Diff([]string{"demo"}, kept); diff != "" {
		t.Errorf("servers started (-want +got):\n%s", diff)
	}
}

func TestParseArgs(t *testing.T) {
	for _, tc := range []struct{ in, err string }{
		{in: ``},
		{in: `{}`},
		{in: ` {"a": [1, 2.50, {"b": null}]} `},
		{in: `{} {}`, err: "at line 1, column 4: unexpected data after the object"},
		{in: `{"a":1,}`, err: "at line 1, column 8: invalid character '}'"},
		{in: `null`, err: "not null"},
		{in: `"x"`, err: "not a string"},
	} {
		_, err := parseArgs(tc.in)
		switch {
		case tc.err == "" && err != nil:
			t.Errorf("parseArgs(%q) = %v", tc.in, err)
		case tc.err != "" && (err == nil || !strings.Contains(err.Error(), tc.err)):
			t.Errorf("parseArgs(%q) = %v, want %q", tc.in, err, tc.err)
		}
	}
}
